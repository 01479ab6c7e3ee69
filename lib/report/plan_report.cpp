#include "report/plan_report.hpp"

#include <fmt/format.h>

#include "model/value_json.hpp"
#include "report/json_report.hpp"
#include "report/probe_report.hpp"
#include "report/text_report.hpp"
#include "util/json_writer.hpp"
#include "util/strings.hpp"

namespace nictune::report {
namespace {

std::string paint(bool color, std::string_view code, std::string_view s) {
    if (!color) return std::string(s);
    return fmt::format("\033[{}m{}\033[0m", code, s);
}

void write_error(JsonWriter& w, const Error& e) {
    w.begin_object();
    w.field("code", errc_name(e.code));
    w.field("errno", e.sys_errno);
    w.field("context", e.context);
    // Only when the error is about one (old readers see the same object).
    if (!e.interface.empty()) w.field("interface", e.interface);
    if (!e.setting.empty()) w.field("setting", e.setting);
    w.field("message", e.message);
    w.key("kernel_message");
    if (e.kernel_message.empty())
        w.null();
    else
        w.value(e.kernel_message);
    w.field("text", e.str());
    w.end_object();
}

void write_optional_error(JsonWriter& w, const std::optional<Error>& e) {
    w.key("error");
    if (e)
        write_error(w, *e);
    else
        w.null();
}

void write_step_fields(JsonWriter& w, const PlanStep& s) {
    w.field("order", s.order);
    w.field("key", s.setting.path());
    w.field("requested", s.requested);
    w.key("current");
    json_value(w, s.current);
    w.key("target");
    json_value(w, s.target);
    w.field("kind", step_kind_name(s.kind));
    w.field("resolution", resolution_name(s.resolution));
    w.field("note", s.note);
    w.field("resets_link", s.resets_link);
}

void write_step(JsonWriter& w, const PlanStep& s) {
    w.begin_object();
    write_step_fields(w, s);
    w.end_object();
}

void write_step_result(JsonWriter& w, const StepResult& r) {
    w.begin_object();
    write_step_fields(w, r.step);
    w.field("outcome", outcome_name(r.outcome));
    w.key("actual");
    json_value(w, r.actual);
    write_optional_error(w, r.error);
    w.end_object();
}

void write_restore(JsonWriter& w, const RestoreResult& r) {
    w.begin_object();
    w.key("interface");
    if (r.interface.empty())
        w.null();
    else
        w.value(r.interface);
    w.field("key", r.key);
    w.key("value");
    json_value(w, r.value);
    w.field("ok", r.ok);
    w.field("message", r.message);
    w.end_object();
}

// "name": [one item each], written by `item(w, x)`.
template <class Range, class Item>
void write_array(JsonWriter& w, const char* name, const Range& items, Item item) {
    w.key(name);
    w.begin_array();
    for (const auto& x : items)
        item(w, x);
    w.end_array();
}

void write_strings(JsonWriter& w, const char* name, const std::vector<std::string>& v) {
    write_array(w, name, v, [](JsonWriter& jw, const std::string& x) { jw.value(x); });
}

}  // namespace

nlohmann::json error_json(const Error& e) {
    std::string out;
    JsonWriter w(out);
    write_error(w, e);
    return nlohmann::json::parse(out);
}

std::string plan_json_text(const Plan& p) {
    std::string out;
    JsonWriter w(out);
    w.begin_object();
    w.field("profile", p.profile);
    w.field("profile_file", p.profile_file);
    w.key("interfaces");
    w.begin_array();
    for (const auto& i : p.interfaces) {
        w.begin_object();
        w.field("name", i.id.name);
        w.field("driver", i.id.driver);
        w.field("matches", i.matches);
        w.field("match_note", i.match_note);
        write_strings(w, "warnings", i.warnings);
        write_array(w, "steps", i.steps, write_step);
        w.end_object();
    }
    w.end_array();
    write_array(w, "system", p.system, write_step);
    write_strings(w, "refusals", p.refusals());
    w.field("changes", p.has_changes());
    w.end_object();
    return out;
}

std::string apply_json_text(const ApplyResult& r) {
    std::string out;
    JsonWriter w(out);
    w.begin_object();
    w.field("transaction", r.transaction);
    w.field("profile", r.profile);
    w.field("result", tx_result_name(r.result));
    w.key("interfaces");
    w.begin_array();
    for (const auto& i : r.interfaces) {
        w.begin_object();
        w.field("name", i.name);
        write_strings(w, "warnings", i.warnings);
        write_array(w, "steps", i.steps, write_step_result);
        w.end_object();
    }
    w.end_array();
    write_array(w, "system", r.system, write_step_result);
    write_array(w, "rollback", r.rollback, write_restore);
    write_strings(w, "left", r.left());
    write_strings(w, "refusals", r.refusals);
    write_optional_error(w, r.error);
    w.key("check");
    if (r.check) {
        w.begin_object();
        w.field("name", r.check->name);
        w.field("outcome", check_outcome_name(r.check->outcome));
        write_optional_error(w, r.check->error);
        w.end_object();
    } else {
        w.null();
    }
    w.end_object();
    return out;
}

std::string rollback_json_text(const RollbackResult& r) {
    std::string out;
    JsonWriter w(out);
    w.begin_object();
    w.field("interface", r.interface);
    w.field("profile", r.profile);
    w.field("result", r.nothing_saved ? "nothing_saved" : tx_result_name(r.result));
    write_array(w, "restored", r.restored, write_restore);
    write_optional_error(w, r.error);
    w.end_object();
    return out;
}

nlohmann::json plan_json(const Plan& p) {
    return nlohmann::json::parse(plan_json_text(p));
}
nlohmann::json apply_json(const ApplyResult& r) {
    return nlohmann::json::parse(apply_json_text(r));
}
nlohmann::json rollback_json(const RollbackResult& r) {
    return nlohmann::json::parse(rollback_json_text(r));
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
        else if (kind == "blocked")
            what = paint(color, "33", "blocked") + " (" + value_text(s.at("current")) + ")";
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
    if (o == "blocked") return paint(color, "33", padded);
    return padded;
}

// What the text view of an apply result needs, filled from the result itself
// (a direct run) or from its JSON (a reply from nictuned): one renderer.
struct StepView {
    std::string key, outcome, kind, resolution, requested, note, current, target, actual, error;
};
struct InterfaceView {
    std::string name;
    std::vector<std::string> warnings;
    std::vector<StepView> steps;
};

std::string step_results_text(const std::vector<StepView>& steps, bool color) {
    std::string out;
    std::size_t width = 20;
    for (const auto& s : steps)
        width = std::max(width, s.key.size());
    for (const auto& s : steps) {
        const std::string& o = s.outcome;
        std::string detail;
        if (o == "applied" || o == "translated" || o == "adjusted") {
            detail = s.current + " -> " + s.actual;
            if (s.resolution == "translated" || o == "adjusted")
                detail +=
                    "  (" + (s.note.empty() ? s.requested : s.requested + ": " + s.note) + ")";
        } else if (o == "unchanged") {
            detail = s.current;
        } else if (o == "unsupported" || o == "refused" || o == "blocked") {
            detail = s.note;
        } else if (o == "failed") {
            detail = s.error.empty() ? "failed" : s.error;
        } else if (o == "not_reached" && s.kind == "change") {
            detail = "not applied (an earlier step failed)";
        } else if (o == "rolled_back") {
            detail = s.current + " -> " + s.target + ", undone by the rollback";
        }
        out += fmt::format("  {}  {:<{}}  {}\n", outcome_label(o, color), s.key, width, detail);
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

namespace {

struct ApplyView {
    std::string transaction, profile, result, error;
    std::string check_name, check_outcome, check_error;  // check_name "": none
    Json verify_peer;  // apply --verify-peer's part, when the client added it
    std::vector<InterfaceView> interfaces;
    std::vector<StepView> system;
    Json rollback = Json::array();
    std::vector<std::string> refusals, left;
};

std::string apply_text(const ApplyView& r, bool color) {
    std::string out;
    for (const auto& i : r.interfaces) {
        out += fmt::format("{}: profile {}\n", paint(color, "1", i.name), r.profile);
        for (const auto& w : i.warnings)
            out += "  " + paint(color, "33", "warning: ") + w + "\n";
        out += step_results_text(i.steps, color);
    }
    if (!r.system.empty()) {
        out += paint(color, "1", "system") + "\n";
        out += step_results_text(r.system, color);
    }
    if (!r.rollback.empty()) {
        out += paint(color, "1", "rollback") + "\n";
        out += restore_text(r.rollback, color);
    }
    if (r.verify_peer.is_object()) {
        out += verify_peer_text(r.verify_peer, color);
    } else if (!r.check_name.empty()) {
        out +=
            fmt::format("{} {}: {}{}\n", paint(color, "1", "check"), r.check_name, r.check_outcome,
                        r.check_error.empty() ? "" : " (" + r.check_error + ")");
    }
    const std::string& err = r.error;
    const bool check_failed = r.check_outcome == "failed";
    if (r.result == "applied") {
        out += fmt::format("\nresult: applied and verified (transaction {})\n", r.transaction);
    } else if (r.result == "pending") {
        out += fmt::format(
            "\nresult: applied and verified, waiting for the {} before it is kept (transaction "
            "{})\n",
            r.check_name.empty() ? "confirmation" : r.check_name + " check", r.transaction);
    } else if (r.result == "rolled_back" && check_failed) {
        out += "\nresult: " + paint(color, "1;31", r.check_name + " check failed") + ": " +
               (r.check_error.empty() ? err : r.check_error) + "; rolled back\n";
    } else if (r.result == "dry_run") {
        out += "\nresult: dry run, nothing changed\n";
    } else if (r.result == "refused") {
        out += "\nresult: " + paint(color, "1;31", "refused") + ", nothing was changed\n";
        for (const auto& x : r.refusals)
            out += "  " + x + "\n";
        if (!err.empty() && r.refusals.empty()) out += "  " + err + "\n";
    } else if (r.result == "rolled_back") {
        out += "\nresult: " + paint(color, "1;31", "failed") +
               " and rolled back: " + (err.empty() ? "a step failed" : err) + "\n";
    } else {
        out += "\nresult: " + paint(color, "1;31", "failed, NOT fully rolled back") + ": " +
               (err.empty() ? "a step failed" : err) + "\n";
        for (const auto& l : r.left)
            out += "  left changed: " + l + "\n";
    }
    return out;
}

StepView view_of(const Json& s) {
    StepView v;
    v.key = jstr(s, "key");
    v.outcome = jstr(s, "outcome");
    v.kind = jstr(s, "kind");
    v.resolution = jstr(s, "resolution");
    v.requested = jstr(s, "requested");
    v.note = jstr(s, "note");
    v.current = value_text(s.value("current", Json()));
    v.target = value_text(s.value("target", Json()));
    v.actual = value_text(s.value("actual", Json()));
    if (s.contains("error") && s.at("error").is_object()) v.error = jstr(s.at("error"), "text");
    return v;
}

StepView view_of(const StepResult& r) {
    const auto text = [](const Scalar& x) {
        return std::holds_alternative<std::monostate>(x) ? "n/a" : to_string(x);
    };
    StepView v;
    v.key = r.step.setting.path();
    v.outcome = outcome_name(r.outcome);
    v.kind = step_kind_name(r.step.kind);
    v.resolution = resolution_name(r.step.resolution);
    v.requested = r.step.requested;
    v.note = r.step.note;
    v.current = text(r.step.current);
    v.target = text(r.step.target);
    v.actual = text(r.actual);
    if (r.error) v.error = r.error->str();
    return v;
}

std::vector<std::string> strings_of(const Json& a) {
    std::vector<std::string> out;
    for (const auto& x : a)
        out.push_back(x.get<std::string>());
    return out;
}

}  // namespace

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

std::string apply_text(const Json& r, bool color) {
    ApplyView v;
    v.transaction = jstr(r, "transaction");
    v.profile = jstr(r, "profile");
    v.result = jstr(r, "result");
    v.error = error_text(r);
    for (const auto& i : r.at("interfaces")) {
        InterfaceView iv{jstr(i, "name"), strings_of(i.at("warnings")), {}};
        for (const auto& s : i.at("steps"))
            iv.steps.push_back(view_of(s));
        v.interfaces.push_back(std::move(iv));
    }
    for (const auto& s : r.at("system"))
        v.system.push_back(view_of(s));
    v.rollback = r.at("rollback");
    v.refusals = strings_of(r.at("refusals"));
    v.left = strings_of(r.at("left"));
    // "check" is absent in an older nictuned's reports.
    if (auto c = r.find("check"); c != r.end() && c->is_object()) {
        v.check_name = jstr(*c, "name");
        v.check_outcome = jstr(*c, "outcome");
        v.check_error = error_text(*c);
    }
    if (auto vp = r.find("verify_peer"); vp != r.end()) v.verify_peer = *vp;
    return apply_text(v, color);
}

std::string apply_text(const ApplyResult& r, bool color) {
    ApplyView v;
    v.transaction = r.transaction;
    v.profile = r.profile;
    v.result = tx_result_name(r.result);
    if (r.error) v.error = r.error->str();
    for (const auto& i : r.interfaces) {
        InterfaceView iv{i.name, i.warnings, {}};
        iv.steps.reserve(i.steps.size());
        for (const auto& s : i.steps)
            iv.steps.push_back(view_of(s));
        v.interfaces.push_back(std::move(iv));
    }
    for (const auto& s : r.system)
        v.system.push_back(view_of(s));
    // Rollback lists are short; their JSON form keeps one renderer for them.
    if (!r.rollback.empty()) v.rollback = apply_json(r).at("rollback");
    if (r.check) {
        v.check_name = r.check->name;
        v.check_outcome = check_outcome_name(r.check->outcome);
        if (r.check->error) v.check_error = r.check->error->str();
    }
    v.refusals = r.refusals;
    v.left = r.left();
    return apply_text(v, color);
}

}  // namespace nictune::report
