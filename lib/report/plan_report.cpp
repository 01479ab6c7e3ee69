#include "report/plan_report.hpp"

#include <fmt/format.h>

#include "model/value_json.hpp"
#include "report/json_report.hpp"
#include "report/json_util.hpp"
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
    string_or_null(w, "kernel_message", e.kernel_message);
    w.field("text", e.str());
    w.end_object();
}

// e: a std::optional<Error> or a Boxed<Error> (a step's).
template <class Holder>
void write_optional_error(JsonWriter& w, const Holder& e) {
    write_or_null(w, "error", e, write_error);
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

// A step as planned, then what became of it.
void write_step_result_fields(JsonWriter& w, const StepResult& r) {
    write_step_fields(w, r.step);
    w.field("outcome", outcome_name(r.outcome));
    w.key("actual");
    json_value(w, r.actual);
    write_optional_error(w, r.error);
}

void write_restore_fields(JsonWriter& w, const RestoreResult& r) {
    string_or_null(w, "interface", r.interface);
    w.field("key", r.key);
    w.key("value");
    json_value(w, r.value);
    w.field("ok", r.ok);
    w.field("message", r.message);
}

// One JSON object as text, its members written by fill(w).
template <class Fill>
std::string object_text(Fill&& fill) {
    std::string out;
    JsonWriter w(out);
    w.begin_object();
    fill(w);
    w.end_object();
    return out;
}

}  // namespace

nlohmann::json error_json(const Error& e) {
    std::string out;
    JsonWriter w(out);
    write_error(w, e);
    return nlohmann::json::parse(out);
}

std::string plan_json_text(const Plan& p) {
    return object_text([&](JsonWriter& w) {
        const auto step = [&](const PlanStep& s) { write_step_fields(w, s); };
        w.field("profile", p.profile);
        w.field("profile_file", p.profile_file);
        w.objects("interfaces", p.interfaces, [&](const InterfacePlan& i) {
            w.field("name", i.id.name);
            w.field("driver", i.id.driver);
            w.field("matches", i.matches);
            w.field("match_note", i.match_note);
            w.values("warnings", i.warnings);
            w.objects("steps", i.steps, step);
        });
        w.objects("system", p.system, step);
        w.values("refusals", p.refusals());
        w.field("changes", p.has_changes());
    });
}

std::string apply_json_text(const ApplyResult& r) {
    return object_text([&](JsonWriter& w) {
        const auto step = [&](const StepResult& s) { write_step_result_fields(w, s); };
        const auto restore = [&](const RestoreResult& x) { write_restore_fields(w, x); };
        w.field("transaction", r.transaction);
        w.field("profile", r.profile);
        w.field("result", tx_result_name(r.result));
        w.objects("interfaces", r.interfaces, [&](const InterfaceResult& i) {
            w.field("name", i.name);
            w.values("warnings", i.warnings);
            w.objects("steps", i.steps, step);
        });
        w.objects("system", r.system, step);
        w.objects("rollback", r.rollback, restore);
        w.values("left", r.left());
        w.values("refusals", r.refusals);
        write_optional_error(w, r.error);
        w.object_or_null("check", r.check.has_value(), [&] {
            w.field("name", r.check->name);
            w.field("outcome", check_outcome_name(r.check->outcome));
            write_optional_error(w, r.check->error);
        });
    });
}

std::string rollback_json_text(const RollbackResult& r) {
    return object_text([&](JsonWriter& w) {
        w.field("interface", r.interface);
        w.field("profile", r.profile);
        w.field("result", rollback_result_name(r));
        w.objects("restored", r.restored,
                  [&](const RestoreResult& x) { write_restore_fields(w, x); });
        write_optional_error(w, r.error);
    });
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

std::string steps_text(const Json& steps, bool color) {
    std::string out;
    std::size_t width = 20;
    for (const auto& s : steps)
        width = std::max(width, text_of(s, "key").size());
    for (const auto& s : steps) {
        const int order = s.value("order", 0);
        const std::string kind = text_of(s, "kind");
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
        if (text_of(s, "resolution") == "translated")
            notes.push_back("from " + text_of(s, "requested"));
        if (!text_of(s, "note").empty()) notes.push_back(text_of(s, "note"));
        std::string tail;
        for (const auto& n : notes)
            tail += (tail.empty() ? "  " : "; ") + n;
        out += fmt::format("  {:>3}  {:<{}}  {}{}\n", order ? std::to_string(order) : "",
                           text_of(s, "key"), width, what, tail);
    }
    return out;
}

// Appends each part in turn (the text report's lines are built this way, in
// place, rather than through a format string).
template <class... Parts>
void append(std::string& out, const Parts&... parts) {
    (out.append(std::string_view(parts)), ...);
}

// Appends s, then spaces up to `width` code points: fmt's "{:<N}" for the
// keys and outcome names shown here, without its per-call format parsing
// (an apply of 512 interfaces writes 4,600 of these lines).
// A setting's path as two views, "section" and "key" joined by a dot, or
// the whole path in `head` (dot false): a report of 512 interfaces built
// 4,608 paths only to print them.
struct PathView {
    std::string_view head, tail;
    bool dot = false;
    [[nodiscard]] std::size_t size() const {
        return dot ? head.size() + 1 + tail.size() : head.size();
    }
};
std::size_t code_points(std::string_view s) {
    std::size_t points = 0;
    for (const unsigned char c : s)
        points += (c & 0xC0) != 0x80;
    return points;
}

void append_padded(std::string& out, std::string_view s, std::size_t width) {
    out += s;
    if (const std::size_t points = code_points(s); points < width) out.append(width - points, ' ');
}

void append_padded(std::string& out, PathView p, std::size_t width) {
    if (!p.dot) return append_padded(out, p.head, width);
    out.append(p.head).append(1, '.').append(p.tail);
    if (const std::size_t points = code_points(p.head) + 1 + code_points(p.tail); points < width)
        out.append(width - points, ' ');
}

void append_outcome_label(std::string& out, std::string_view o, bool color) {
    const char* code = nullptr;
    if (o == "failed" || o == "refused")
        code = "1;31";
    else if (o == "applied" || o == "translated" || o == "adjusted")
        code = "32";
    else if (o == "blocked")
        code = "33";
    if (!color || !code) return append_padded(out, o, 11);
    out += "\033[";
    out += code;
    out += 'm';
    append_padded(out, o, 11);
    out += "\033[0m";
}

// What the text view of an apply result needs, filled from the result itself
// (a direct run) or from its JSON (a reply from nictuned): one renderer.
// The names (outcome, kind, resolution) and the profile's words (requested,
// note) are views into the result or its JSON, which outlive the view; the
// texts made for it are its own. An apply of 512 interfaces shows 4,600 steps.
struct StepView {
    PathView key;
    std::string_view outcome, kind, resolution, requested, note;
    std::string current, target, actual, error;
};
struct InterfaceView {
    std::string name;
    std::vector<std::string> warnings;
    std::vector<StepView> steps;
};

void append_step_results(std::string& out, const std::vector<StepView>& steps, bool color) {
    std::size_t width = 20;
    for (const auto& s : steps)
        width = std::max(width, s.key.size());
    out.reserve(out.size() + steps.size() * (width + 40));
    for (const auto& s : steps) {
        const std::string_view o = s.outcome;
        out += "  ";
        append_outcome_label(out, o, color);
        out += "  ";
        append_padded(out, s.key, width);
        out += "  ";
        if (o == "applied" || o == "translated" || o == "adjusted") {
            append(out, s.current, " -> ", s.actual);
            if (s.resolution == "translated" || o == "adjusted") {
                append(out, "  (", s.requested);
                if (!s.note.empty()) append(out, ": ", s.note);
                out += ')';
            }
        } else if (o == "unchanged") {
            out += s.current;
        } else if (o == "unsupported" || o == "refused" || o == "blocked") {
            out += s.note;
        } else if (o == "failed") {
            out += s.error.empty() ? "failed" : s.error;
        } else if (o == "not_reached" && s.kind == "change") {
            out += "not applied (an earlier step failed)";
        } else if (o == "rolled_back") {
            append(out, s.current, " -> ", s.target, ", undone by the rollback");
        }
        out += '\n';
    }
}

// What the text of one restored setting needs, from a RestoreResult or its
// JSON: one renderer for both.
struct RestoreView {
    bool ok = false;
    std::string interface, key, value, message;
};

std::string scalar_text(const Scalar& x) {
    return std::holds_alternative<std::monostate>(x) ? "n/a" : to_string(x);
}

std::vector<RestoreView> restore_views(const Json& rs) {
    std::vector<RestoreView> out;
    out.reserve(rs.size());
    for (const auto& r : rs)
        out.push_back({r.value("ok", false), text_of(r, "interface"), text_of(r, "key"),
                       value_text(r.at("value")), text_of(r, "message")});
    return out;
}

std::vector<RestoreView> restore_views(const std::vector<RestoreResult>& rs) {
    std::vector<RestoreView> out;
    out.reserve(rs.size());
    for (const auto& r : rs)
        out.push_back({r.ok, r.interface, r.key, scalar_text(r.value), r.message});
    return out;
}

std::string restore_text(const std::vector<RestoreView>& rs, bool color) {
    std::string out;
    for (const auto& r : rs) {
        out += "  ";
        if (r.ok)
            append_padded(out, "restored", 11);
        else
            out += paint(color, "1;31", "NOT restored");
        out += "  ";
        if (!r.interface.empty()) append(out, r.interface, ": ");
        append(out, r.key, " = ", r.value);
        if (!r.message.empty()) append(out, "  (", r.message, ")");
        out += '\n';
    }
    return out;
}

std::string error_text(const Json& r) {
    return r.contains("error") && r.at("error").is_object() ? text_of(r.at("error"), "text")
                                                            : std::string();
}

}  // namespace

std::string plan_text(const Json& p, bool color) {
    std::string out =
        fmt::format("plan: profile {} ({})\n", text_of(p, "profile"), text_of(p, "profile_file"));
    for (const auto& i : p.at("interfaces")) {
        out += fmt::format("{} ({})\n", paint(color, "1", text_of(i, "name")),
                           text_of(i, "driver").empty() ? "unknown driver" : text_of(i, "driver"));
        for (const auto& w : i.at("warnings"))
            out += "  " + paint(color, "33", "warning: ") + w.get<std::string>() + "\n";
        if (!i.value("matches", true))
            out += "  " + paint(color, "1;31", "REFUSED: ") + text_of(i, "match_note") + "\n";
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
    std::vector<RestoreView> rollback;
    std::vector<std::string> refusals, left;
};

std::string apply_text(const ApplyView& r, bool color) {
    std::string out;
    for (const auto& i : r.interfaces) {
        if (color)
            append(out, "\033[1m", i.name, "\033[0m");
        else
            out += i.name;
        append(out, ": profile ", r.profile, "\n");
        for (const auto& w : i.warnings)
            out += "  " + paint(color, "33", "warning: ") + w + "\n";
        append_step_results(out, i.steps, color);
    }
    if (!r.system.empty()) {
        out += paint(color, "1", "system") + "\n";
        append_step_results(out, r.system, color);
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

// A string member as a view into j; "" when absent or not a string.
std::string_view string_member(const Json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return {};
    return it->get_ref<const std::string&>();
}

StepView view_of(const Json& s) {
    StepView v;
    v.key.head = string_member(s, "key");
    v.outcome = string_member(s, "outcome");
    v.kind = string_member(s, "kind");
    v.resolution = string_member(s, "resolution");
    v.requested = string_member(s, "requested");
    v.note = string_member(s, "note");
    v.current = value_text(s.value("current", Json()));
    v.target = value_text(s.value("target", Json()));
    v.actual = value_text(s.value("actual", Json()));
    if (s.contains("error") && s.at("error").is_object()) v.error = text_of(s.at("error"), "text");
    return v;
}

StepView view_of(const StepResult& r) {
    StepView v;
    const SettingId& id = r.step.setting;
    v.key.head = section_info(id.key ? key_info(*id.key).section : id.section).name;
    v.key.tail = id.key ? std::string_view(key_info(*id.key).name) : std::string_view(id.name);
    v.key.dot = true;
    v.outcome = outcome_name(r.outcome);
    v.kind = step_kind_name(r.step.kind);
    v.resolution = resolution_name(r.step.resolution);
    v.requested = r.step.requested;
    v.note = r.step.note;
    v.current = scalar_text(r.step.current);
    v.target = scalar_text(r.step.target);
    v.actual = scalar_text(r.actual);
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

namespace {

struct RollbackView {
    std::string interface, profile, result, error;
    std::vector<RestoreView> restored;
};

std::string rollback_text(const RollbackView& r, bool color) {
    if (r.result == "nothing_saved")
        return r.interface + ": nothing to roll back (no saved originals)\n";
    std::string out;
    if (!r.restored.empty() || r.result != "refused") {
        out += paint(color, "1", r.interface) + ": rollback of profile " + r.profile + "\n";
        out += restore_text(r.restored, color);
    }
    const std::string& err = r.error;
    if (r.result == "rolled_back")
        out += "result: original settings restored and verified\n";
    else if (r.result == "partial")
        out += "result: " + paint(color, "1;31", "rollback incomplete") +
               "; the saved originals are kept\n";
    else
        out += r.interface + ": " + paint(color, "1;31", "not rolled back") + ": " +
               (err.empty() ? "?" : err) + "\n";
    if (!err.empty() && r.result != "refused") out += "  " + err + "\n";
    return out;
}

}  // namespace

std::string rollback_text(const Json& r, bool color) {
    return rollback_text(
        RollbackView{text_of(r, "interface"), text_of(r, "profile"), text_of(r, "result"),
                     error_text(r), restore_views(r.at("restored"))},
        color);
}

std::string rollback_text(const RollbackResult& r, bool color) {
    return rollback_text(
        RollbackView{r.interface, r.profile, rollback_result_name(r),
                     r.error ? r.error->str() : std::string(), restore_views(r.restored)},
        color);
}

const char* rollback_result_name(const RollbackResult& r) {
    return r.nothing_saved ? "nothing_saved" : tx_result_name(r.result);
}

std::string apply_text(const Json& r, bool color) {
    ApplyView v;
    v.transaction = text_of(r, "transaction");
    v.profile = text_of(r, "profile");
    v.result = text_of(r, "result");
    v.error = error_text(r);
    for (const auto& i : r.at("interfaces")) {
        InterfaceView iv{text_of(i, "name"), strings_of(i.at("warnings")), {}};
        for (const auto& s : i.at("steps"))
            iv.steps.push_back(view_of(s));
        v.interfaces.push_back(std::move(iv));
    }
    for (const auto& s : r.at("system"))
        v.system.push_back(view_of(s));
    v.rollback = restore_views(r.at("rollback"));
    v.refusals = strings_of(r.at("refusals"));
    v.left = strings_of(r.at("left"));
    // "check" is absent in an older nictuned's reports.
    if (auto c = r.find("check"); c != r.end() && c->is_object()) {
        v.check_name = text_of(*c, "name");
        v.check_outcome = text_of(*c, "outcome");
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
    v.rollback = restore_views(r.rollback);
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
