#include "report/plan_report.hpp"

#include <fmt/format.h>

#include "report/json_report.hpp"
#include "report/text_report.hpp"
#include "util/strings.hpp"

namespace nictune::report {
namespace {

std::string paint(bool color, std::string_view code, std::string_view s) {
    if (!color) return std::string(s);
    return fmt::format("\033[{}m{}\033[0m", code, s);
}

nlohmann::json step_json(const PlanStep& s) {
    return {{"order", s.order},
            {"key", s.setting.path()},
            {"requested", s.requested},
            {"current", scalar_json(s.current)},
            {"target", scalar_json(s.target)},
            {"kind", step_kind_name(s.kind)},
            {"resolution", resolution_name(s.resolution)},
            {"note", s.note},
            {"resets_link", s.resets_link}};
}

nlohmann::json step_result_json(const StepResult& r) {
    nlohmann::json j = step_json(r.step);
    j["outcome"] = outcome_name(r.outcome);
    j["actual"] = scalar_json(r.actual);
    j["error"] = r.error ? error_json(*r.error) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json restore_json(const RestoreResult& r) {
    return {
        {"interface", r.interface.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.interface)},
        {"key", r.key},
        {"value", scalar_json(r.value)},
        {"ok", r.ok},
        {"message", r.message}};
}

}  // namespace

nlohmann::json error_json(const Error& e) {
    return {{"code", errc_name(e.code)},
            {"errno", e.sys_errno},
            {"context", e.context},
            {"message", e.message},
            {"kernel_message",
             e.kernel_message.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.kernel_message)},
            {"text", e.str()}};
}

nlohmann::json plan_json(const Plan& p) {
    nlohmann::json ifs = nlohmann::json::array();
    for (const auto& i : p.interfaces) {
        nlohmann::json steps = nlohmann::json::array();
        for (const auto& s : i.steps)
            steps.push_back(step_json(s));
        ifs.push_back(
            {{"name", i.id.name},
             {"driver", i.id.driver ? nlohmann::json(*i.id.driver) : nlohmann::json(nullptr)},
             {"matches", i.matches},
             {"match_note", i.match_note},
             {"warnings", i.warnings},
             {"steps", std::move(steps)}});
    }
    nlohmann::json sys = nlohmann::json::array();
    for (const auto& s : p.system)
        sys.push_back(step_json(s));
    return {{"profile", p.profile},         {"profile_file", p.profile_file},
            {"interfaces", std::move(ifs)}, {"system", std::move(sys)},
            {"refusals", p.refusals()},     {"changes", p.has_changes()}};
}

nlohmann::json apply_json(const ApplyResult& r) {
    nlohmann::json ifs = nlohmann::json::array();
    for (const auto& i : r.interfaces) {
        nlohmann::json steps = nlohmann::json::array();
        for (const auto& s : i.steps)
            steps.push_back(step_result_json(s));
        ifs.push_back({{"name", i.name}, {"warnings", i.warnings}, {"steps", std::move(steps)}});
    }
    nlohmann::json sys = nlohmann::json::array();
    for (const auto& s : r.system)
        sys.push_back(step_result_json(s));
    nlohmann::json rb = nlohmann::json::array();
    for (const auto& x : r.rollback)
        rb.push_back(restore_json(x));
    return {{"transaction", r.transaction},
            {"profile", r.profile},
            {"result", tx_result_name(r.result)},
            {"interfaces", std::move(ifs)},
            {"system", std::move(sys)},
            {"rollback", std::move(rb)},
            {"left", r.left()},
            {"refusals", r.refusals},
            {"error", r.error ? error_json(*r.error) : nlohmann::json(nullptr)}};
}

nlohmann::json rollback_json(const RollbackResult& r) {
    nlohmann::json rs = nlohmann::json::array();
    for (const auto& x : r.restored)
        rs.push_back(restore_json(x));
    return {{"interface", r.interface},
            {"profile", r.profile},
            {"result", r.nothing_saved ? "nothing_saved" : tx_result_name(r.result)},
            {"restored", std::move(rs)},
            {"error", r.error ? error_json(*r.error) : nlohmann::json(nullptr)}};
}

namespace {

using Json = nlohmann::json;

std::string jstr(const Json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string steps_text(const Json& steps, bool color) {
    std::string out;
    std::size_t width = 20;
    for (const auto& s : steps)
        width = std::max(width, jstr(s, "key").size());
    for (const auto& s : steps) {
        const int order = s.value("order", 0);
        const std::string kind = jstr(s, "kind");
        std::string what;
        if (kind == "change")
            what = fmt::format("{} -> {}", value_text(s.at("current")), value_text(s.at("target")));
        else if (kind == "unchanged")
            what = "unchanged (" + value_text(s.at("current")) + ")";
        else if (kind == "covered")
            what = "covered";
        else if (kind == "unsupported")
            what = paint(color, "2", "unsupported");
        else
            what = paint(color, "1;31", "REFUSED");
        std::vector<std::string> notes;
        if (s.value("resets_link", false)) notes.push_back(paint(color, "33", "resets link"));
        if (jstr(s, "resolution") == "translated") notes.push_back("from " + jstr(s, "requested"));
        if (!jstr(s, "note").empty()) notes.push_back(jstr(s, "note"));
        std::string tail;
        for (const auto& n : notes)
            tail += (tail.empty() ? "  " : "; ") + n;
        out += fmt::format("  {:>3}  {:<{}}  {}{}\n", order ? std::to_string(order) : "",
                           jstr(s, "key"), width, what, tail);
    }
    return out;
}

std::string outcome_label(const std::string& o, bool color) {
    const std::string padded = fmt::format("{:<11}", o);
    if (o == "failed" || o == "refused") return paint(color, "1;31", padded);
    if (o == "applied" || o == "translated" || o == "adjusted") return paint(color, "32", padded);
    return padded;
}

std::string step_results_text(const Json& steps, bool color) {
    std::string out;
    std::size_t width = 20;
    for (const auto& s : steps)
        width = std::max(width, jstr(s, "key").size());
    for (const auto& s : steps) {
        const std::string o = jstr(s, "outcome");
        std::string detail;
        if (o == "applied" || o == "translated" || o == "adjusted") {
            detail = value_text(s.at("current")) + " -> " + value_text(s.at("actual"));
            if (jstr(s, "resolution") == "translated" || o == "adjusted")
                detail +=
                    "  (" +
                    (jstr(s, "note").empty() ? jstr(s, "requested")
                                             : jstr(s, "requested") + ": " + jstr(s, "note")) +
                    ")";
        } else if (o == "unchanged") {
            detail = value_text(s.at("current"));
        } else if (o == "unsupported" || o == "refused") {
            detail = jstr(s, "note");
        } else if (o == "failed") {
            detail = s.contains("error") && s.at("error").is_object() ? jstr(s.at("error"), "text")
                                                                      : "failed";
        } else if (o == "not_reached" && jstr(s, "kind") == "change") {
            detail = "not applied (an earlier step failed)";
        } else if (o == "rolled_back") {
            detail = value_text(s.at("current")) + " -> " + value_text(s.at("target")) +
                     ", undone by the rollback";
        }
        out += fmt::format("  {}  {:<{}}  {}\n", outcome_label(o, color), jstr(s, "key"), width,
                           detail);
    }
    return out;
}

std::string restore_text(const Json& rs, bool color) {
    std::string out;
    for (const auto& r : rs) {
        const bool ok = r.value("ok", false);
        const std::string iface = jstr(r, "interface");
        out += fmt::format(
            "  {}  {}{} = {}{}\n",
            ok ? fmt::format("{:<11}", "restored") : paint(color, "1;31", "NOT restored"),
            iface.empty() ? "" : iface + ": ", jstr(r, "key"), value_text(r.at("value")),
            jstr(r, "message").empty() ? "" : "  (" + jstr(r, "message") + ")");
    }
    return out;
}

std::string error_text(const Json& r) {
    return r.contains("error") && r.at("error").is_object() ? jstr(r.at("error"), "text")
                                                            : std::string();
}

}  // namespace

std::string plan_text(const Json& p, bool color) {
    std::string out =
        fmt::format("plan: profile {} ({})\n", jstr(p, "profile"), jstr(p, "profile_file"));
    for (const auto& i : p.at("interfaces")) {
        out += fmt::format("{} ({})\n", paint(color, "1", jstr(i, "name")),
                           jstr(i, "driver").empty() ? "unknown driver" : jstr(i, "driver"));
        for (const auto& w : i.at("warnings"))
            out += "  " + paint(color, "33", "warning: ") + w.get<std::string>() + "\n";
        if (!i.value("matches", true))
            out += "  " + paint(color, "1;31", "REFUSED: ") + jstr(i, "match_note") + "\n";
        out += steps_text(i.at("steps"), color);
    }
    if (!p.at("system").empty()) {
        out += paint(color, "1", "system") + "\n";
        out += steps_text(p.at("system"), color);
    }
    if (!p.at("refusals").empty()) {
        out += "\nrefused, nothing will change:\n";
        for (const auto& r : p.at("refusals"))
            out += "  " + r.get<std::string>() + "\n";
    } else if (!p.value("changes", false)) {
        out += "\nnothing to change\n";
    }
    return out;
}

std::string apply_text(const Json& r, bool color) {
    std::string out;
    for (const auto& i : r.at("interfaces")) {
        out +=
            fmt::format("{}: profile {}\n", paint(color, "1", jstr(i, "name")), jstr(r, "profile"));
        for (const auto& w : i.at("warnings"))
            out += "  " + paint(color, "33", "warning: ") + w.get<std::string>() + "\n";
        out += step_results_text(i.at("steps"), color);
    }
    if (!r.at("system").empty()) {
        out += paint(color, "1", "system") + "\n";
        out += step_results_text(r.at("system"), color);
    }
    if (!r.at("rollback").empty()) {
        out += paint(color, "1", "rollback") + "\n";
        out += restore_text(r.at("rollback"), color);
    }
    const std::string result = jstr(r, "result");
    const std::string err = error_text(r);
    if (result == "applied") {
        out += fmt::format("\nresult: applied and verified (transaction {})\n",
                           jstr(r, "transaction"));
    } else if (result == "dry_run") {
        out += "\nresult: dry run, nothing changed\n";
    } else if (result == "refused") {
        out += "\nresult: " + paint(color, "1;31", "refused") + ", nothing was changed\n";
        for (const auto& x : r.at("refusals"))
            out += "  " + x.get<std::string>() + "\n";
        if (!err.empty() && r.at("refusals").empty()) out += "  " + err + "\n";
    } else if (result == "rolled_back") {
        out += "\nresult: " + paint(color, "1;31", "failed") +
               " and rolled back: " + (err.empty() ? "a step failed" : err) + "\n";
    } else {
        out += "\nresult: " + paint(color, "1;31", "failed, NOT fully rolled back") + ": " +
               (err.empty() ? "a step failed" : err) + "\n";
        for (const auto& l : r.at("left"))
            out += "  left changed: " + l.get<std::string>() + "\n";
    }
    return out;
}

std::string rollback_text(const Json& r, bool color) {
    const std::string result = jstr(r, "result");
    if (result == "nothing_saved")
        return jstr(r, "interface") + ": nothing to roll back (no saved originals)\n";
    std::string out;
    if (!r.at("restored").empty() || result != "refused") {
        out += fmt::format("{}: rollback of profile {}\n", paint(color, "1", jstr(r, "interface")),
                           jstr(r, "profile"));
        out += restore_text(r.at("restored"), color);
    }
    const std::string err = error_text(r);
    if (result == "rolled_back")
        out += "result: original settings restored and verified\n";
    else if (result == "partial")
        out += "result: " + paint(color, "1;31", "rollback incomplete") +
               "; the saved originals are kept\n";
    else
        out += jstr(r, "interface") + ": " + paint(color, "1;31", "not rolled back") + ": " +
               (err.empty() ? "?" : err) + "\n";
    if (!err.empty() && result != "refused") out += "  " + err + "\n";
    return out;
}

}  // namespace nictune::report
