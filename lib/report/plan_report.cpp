#include "report/plan_report.hpp"

#include <fmt/format.h>

#include "report/json_report.hpp"

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

std::string steps_text(const std::vector<PlanStep>& steps, bool color) {
    std::string out;
    std::size_t width = 20;
    for (const auto& s : steps)
        width = std::max(width, s.setting.path().size());
    for (const auto& s : steps) {
        std::string num = s.order ? std::to_string(s.order) : "";
        std::string what;
        switch (s.kind) {
            case StepKind::Change:
                what = fmt::format("{} -> {}", to_string(s.current), to_string(s.target));
                break;
            case StepKind::Unchanged:
                what = "unchanged (" + to_string(s.current) + ")";
                break;
            case StepKind::Covered:
                what = "covered";
                break;
            case StepKind::Unsupported:
                what = paint(color, "2", "unsupported");
                break;
            case StepKind::Refused:
                what = paint(color, "1;31", "REFUSED");
                break;
        }
        std::vector<std::string> notes;
        if (s.resets_link) notes.push_back(paint(color, "33", "resets link"));
        if (s.resolution == Resolution::Translated) notes.push_back("from " + s.requested);
        if (!s.note.empty()) notes.push_back(s.note);
        std::string tail;
        for (const auto& n : notes)
            tail += (tail.empty() ? "  " : "; ") + n;
        out += fmt::format("  {:>3}  {:<{}}  {}{}\n", num, s.setting.path(), width, what, tail);
    }
    return out;
}

std::string outcome_label(Outcome o, bool color) {
    std::string name = outcome_name(o);
    switch (o) {
        case Outcome::Failed:
        case Outcome::Refused:
            return paint(color, "1;31", name);
        case Outcome::Applied:
        case Outcome::Translated:
        case Outcome::Adjusted:
            return paint(color, "32", name);
        default:
            return name;
    }
}

nlohmann::json step_result_json(const StepResult& r) {
    nlohmann::json j = step_json(r.step);
    j["outcome"] = outcome_name(r.outcome);
    j["actual"] = scalar_json(r.actual);
    j["error"] = r.error ? error_json(*r.error) : nlohmann::json(nullptr);
    return j;
}

std::string step_results_text(const std::vector<StepResult>& steps, bool color) {
    std::string out;
    std::size_t width = 20;
    for (const auto& s : steps)
        width = std::max(width, s.step.setting.path().size());
    for (const auto& s : steps) {
        std::string detail;
        switch (s.outcome) {
            case Outcome::Applied:
            case Outcome::Translated:
            case Outcome::Adjusted:
                detail = to_string(s.step.current) + " -> " + to_string(s.actual);
                if (s.step.resolution == Resolution::Translated || s.outcome == Outcome::Adjusted)
                    detail += "  (" +
                              (s.step.note.empty() ? s.step.requested
                                                   : s.step.requested + ": " + s.step.note) +
                              ")";
                break;
            case Outcome::Unchanged:
                detail = to_string(s.step.current);
                break;
            case Outcome::Unsupported:
            case Outcome::Refused:
                detail = s.step.note;
                break;
            case Outcome::Failed:
                detail = s.error ? s.error->str() : "failed";
                break;
            case Outcome::NotReached:
                detail =
                    s.step.kind == StepKind::Change ? "not applied (an earlier step failed)" : "";
                break;
        }
        out += fmt::format("  {:<11}  {:<{}}  {}\n", outcome_label(s.outcome, color),
                           s.step.setting.path(), width, detail);
    }
    return out;
}

nlohmann::json restore_json(const RestoreResult& r) {
    return {
        {"interface", r.interface.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.interface)},
        {"key", r.key},
        {"value", scalar_json(r.value)},
        {"ok", r.ok},
        {"message", r.message}};
}

std::string restore_text(const std::vector<RestoreResult>& rs, bool color) {
    std::string out;
    for (const auto& r : rs)
        out += fmt::format("  {:<11}  {}{} = {}{}\n",
                           r.ok ? "restored" : paint(color, "1;31", "NOT restored"),
                           r.interface.empty() ? "" : r.interface + ": ", r.key, to_string(r.value),
                           r.message.empty() ? "" : "  (" + r.message + ")");
    return out;
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

std::string plan_text(const Plan& p, bool color) {
    std::string out = fmt::format("plan: profile {} ({})\n", p.profile, p.profile_file);
    for (const auto& i : p.interfaces) {
        out += fmt::format("{} ({})\n", paint(color, "1", i.id.name),
                           i.id.driver.value_or("unknown driver"));
        for (const auto& w : i.warnings)
            out += "  " + paint(color, "33", "warning: ") + w + "\n";
        if (!i.matches) out += "  " + paint(color, "1;31", "REFUSED: ") + i.match_note + "\n";
        out += steps_text(i.steps, color);
    }
    if (!p.system.empty()) {
        out += paint(color, "1", "system") + "\n";
        out += steps_text(p.system, color);
    }
    auto refusals = p.refusals();
    if (!refusals.empty()) {
        out += "\nrefused, nothing will change:\n";
        for (const auto& r : refusals)
            out += "  " + r + "\n";
    } else if (!p.has_changes()) {
        out += "\nnothing to change\n";
    }
    return out;
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

std::string apply_text(const ApplyResult& r, bool color) {
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
    switch (r.result) {
        case TxResult::Applied:
            out += fmt::format("\nresult: applied and verified (transaction {})\n", r.transaction);
            break;
        case TxResult::DryRun:
            out += "\nresult: dry run, nothing changed\n";
            break;
        case TxResult::Refused:
            out += "\nresult: " + paint(color, "1;31", "refused") + ", nothing was changed\n";
            for (const auto& x : r.refusals)
                out += "  " + x + "\n";
            if (r.error && r.refusals.empty()) out += "  " + r.error->str() + "\n";
            break;
        case TxResult::RolledBack:
            out += "\nresult: " + paint(color, "1;31", "failed") + " and rolled back: " +
                   (r.error ? r.error->str() : std::string("a step failed")) + "\n";
            break;
        case TxResult::Partial:
            out += "\nresult: " + paint(color, "1;31", "failed, NOT fully rolled back") + ": " +
                   (r.error ? r.error->str() : std::string("a step failed")) + "\n";
            for (const auto& l : r.left())
                out += "  left changed: " + l + "\n";
            break;
    }
    return out;
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

std::string rollback_text(const RollbackResult& r, bool color) {
    if (r.nothing_saved) return r.interface + ": nothing to roll back (no saved originals)\n";
    std::string out =
        fmt::format("{}: rollback of profile {}\n", paint(color, "1", r.interface), r.profile);
    out += restore_text(r.restored, color);
    switch (r.result) {
        case TxResult::RolledBack:
            out += "result: original settings restored and verified\n";
            break;
        case TxResult::Partial:
            out += "result: " + paint(color, "1;31", "rollback incomplete") +
                   "; the saved originals are kept\n";
            break;
        default:
            out += "result: " + paint(color, "1;31", "not rolled back") + ": " +
                   (r.error ? r.error->str() : std::string("?")) + "\n";
            break;
    }
    if (r.error && r.result != TxResult::Refused) out += "  " + r.error->str() + "\n";
    return out;
}

}  // namespace nictune::report
