#include "cli.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/netlink_backend.hpp"
#include "dbus/client.hpp"
#include "engine/manager.hpp"
#include "probe/probe.hpp"
#include "probe/verify.hpp"
#include "profile/facts.hpp"
#include "profile/loader.hpp"
#include "report/json_report.hpp"
#include "report/keys_doc.hpp"
#include "report/plan_report.hpp"
#include "report/probe_report.hpp"
#include "report/prometheus.hpp"
#include "report/text_report.hpp"
#include "util/json_writer.hpp"
#include "util/strings.hpp"
#include "watch/config.hpp"

namespace nictune::ctl {
namespace {

using Json = nlohmann::json;

struct Globals {
    std::vector<std::string> profiles_dirs;
    std::string state_dir;
    std::string config;  // nictune.toml: its [daemon] state_dir and profiles_dirs
    std::string bus_address;
    std::string color = "auto";
    std::string facts_file;
    bool direct = false;

    // Options only the local engine can honour: nictuned has its own.
    [[nodiscard]] bool local_only() const {
        return direct || !profiles_dirs.empty() || !state_dir.empty() || !facts_file.empty() ||
               !config.empty();
    }
};

// Pretty JSON that never throws: a string that is not UTF-8 (a profile file
// name from a directory listing) gets U+FFFD, as JsonWriter does. Names are
// already in text form.
std::string dump(const Json& j) {
    return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

int exit_for(const Error& e) {
    return errc_info(e.code).exit_status;
}

int report_error(const Error& e) {
    std::fprintf(stderr, "nictunectl: %s\n", e.str().c_str());
    return exit_for(e);
}

// With --json, a command that ends in an error before it has a report
// prints {"error": {...}} on standard output too: the object a report's
// "error" holds (code, context, interface, setting, ...), so that a script
// reads one form whichever way the command failed.
int report_error(const Error& e, bool json) {
    if (json) std::cout << dump(Json{{"error", report::error_json(e)}}) << '\n';
    return report_error(e);
}

bool want_color(const Globals& g) {
    if (g.color == "always") return true;
    if (g.color == "never") return false;
    return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
}

Result<FactsBook> load_facts(const Globals& g) {
    FactsBook book = FactsBook::builtin();
    std::filesystem::path extra =
        g.facts_file.empty() ? std::filesystem::path(NICTUNE_SYSCONFDIR "/driver-facts.toml")
                             : std::filesystem::path(g.facts_file);
    std::error_code ec;
    if (!g.facts_file.empty() || std::filesystem::exists(extra, ec)) {
        auto text = profile::read_trusted_file(extra, geteuid() == 0);
        if (!text) return std::unexpected(text.error());
        auto more = FactsBook::parse(*text, extra.string());
        if (!more) return std::unexpected(more.error());
        book.merge(*more);
    }
    return book;
}

// The engine over the kernel, in this process (--direct, or read-only
// commands when nictuned is not running).
struct Direct {
    std::unique_ptr<NetlinkBackend> backend;
    std::unique_ptr<Manager> manager;
};

// `changes`: the command may change settings (a configuration that does
// not load is then worth a warning: the state directory is the default).
Result<Direct> open_direct(const Globals& g, bool changes = false) {
    auto facts = load_facts(g);
    if (!facts) return std::unexpected(facts.error());
    // nictuned's configuration: the same state directory (and so the same
    // locks and journals) and the same profile directories as nictuned.
    const std::filesystem::path config_file =
        g.config.empty() ? std::filesystem::path(NICTUNE_SYSCONFDIR "/nictune.toml")
                         : std::filesystem::path(g.config);
    const auto cfg = load_config(config_file, geteuid() == 0);
    const auto state_dir = state_dir_for(
        g.state_dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(g.state_dir),
        cfg);
    if (!cfg && changes)
        std::fprintf(stderr,
                     "nictunectl: warning: %s; using the state directory %s, as nictuned does\n",
                     cfg.error().str().c_str(), state_dir.c_str());
    auto backend = NetlinkBackend::open();
    if (!backend) return std::unexpected(backend.error());
    Direct d;
    d.backend = std::move(*backend);
    auto names = d.backend->kernel_feature_names();
    profile::StoreOptions so;
    std::vector<std::filesystem::path> dirs(g.profiles_dirs.begin(), g.profiles_dirs.end());
    if (cfg)
        for (const auto& dir : cfg->profiles_dirs)
            dirs.emplace_back(dir);
    so.search_path = profile::default_search_path(dirs);
    so.parse.runtime_features = names ? names->get() : nullptr;
    d.manager = std::make_unique<Manager>(*d.backend, profile::Store(so), StateStore(state_dir),
                                          std::move(*facts));
    return d;
}

// Interface names from the command line, in nictune's text form ('\xff\xfeq',
// 'a\x5cb'). An argument that cannot be that text (a raw control byte or
// bytes that are not UTF-8, as bash's $'\xff\xfeq' gives) is taken as the
// name's own bytes; text that only looks wrong ('a\b', '\xFF') is refused,
// saying how to write it.
Result<std::vector<std::string>> name_args(const std::vector<std::string>& args) {
    std::vector<std::string> out;
    out.reserve(args.size());
    for (const auto& a : args) {
        if (unescape_name(a)) {
            out.push_back(a);
            continue;
        }
        const bool text = valid_utf8(a) && std::ranges::none_of(a, [](char c) {
                              const auto u = static_cast<unsigned char>(c);
                              return u < 0x20 || u == 0x7f;
                          });
        if (!text) {
            out.push_back(escape_name(a));
            continue;
        }
        auto e = unescape_name(a).error();
        e.message = "interface name " + e.message;
        return std::unexpected(std::move(e));
    }
    return out;
}

// nictuned, when it runs and nothing asks for the local engine.
std::unique_ptr<dbus::Client> daemon(const Globals& g, std::string* why) {
    if (g.local_only()) {
        *why = "local options given";
        return nullptr;
    }
    return dbus::Client::connect(g.bus_address, why);
}

// A command that changes settings: through nictuned, or --direct as root.
int refuse_without_daemon(const Globals& g, const char* what, const std::string& why) {
    if (!g.direct && g.local_only()) {
        std::fprintf(
            stderr,
            "nictunectl: %s: --profiles-dir, --state-dir, --config and --facts apply to this "
            "process only; add "
            "--direct (as root) to %s here, or configure nictuned\n",
            what, what);
        return kUsage;
    }
    std::fprintf(stderr,
                 "nictunectl: %s goes through nictuned, which is not reachable (%s); start it with "
                 "`systemctl start "
                 "nictuned`, or run it here with --direct as root\n",
                 what, why.c_str());
    return kCannotRead;
}

int print(const Result<Json>& j, bool json, const std::function<std::string(const Json&)>& text) {
    if (!j) return report_error(j.error(), json);
    if (json)
        std::cout << dump(*j) << '\n';
    else
        std::cout << text(*j);
    return kOk;
}

struct AuditArgs {
    std::vector<std::string> interfaces;
    std::string profile;
    bool json = false;
    bool all = false;
    bool verbose = false;
    // Health checks (engine/health.hpp).
    bool no_health = false;
    double sample = 0;  // seconds; 0: totals only
    double rtt_ms = kDefaultRttMs;
    bool prometheus = false;
};

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// For cron jobs writing node_exporter's textfile directory: the findings
// are in the metrics, so the exit status is 0 whenever they could be read
// (`nictunectl audit --prometheus > f.tmp && mv f.tmp f.prom`).
int print_prometheus(const report::AuditMetrics& m) {
    std::cout << report::prometheus_text(&m, nullptr);
    return kOk;
}

int cmd_audit(const Globals& g, const AuditArgs& a) {
    std::string why;
    Result<Json> report = fail(Errc::Internal, "", "no report");
    // A sample waits between two reads: done in this process, so that
    // nictuned's event loop never sleeps for a client.
    std::unique_ptr<dbus::Client> client = a.sample > 0 ? nullptr : daemon(g, &why);
    if (client) {
        dbus::AuditFlags flags;
        flags.health = !a.no_health;
        if (a.rtt_ms != kDefaultRttMs) flags.rtt_ms = a.rtt_ms;
        report = client->audit(a.interfaces, a.profile, a.all, flags);
        if (a.prometheus) {
            if (!report) return report_error(report.error());
            return print_prometheus(report::audit_metrics(*report, unix_now()));
        }
    } else {
        // Read-only: the kernel answers anyone, so no daemon is needed.
        auto direct = open_direct(g);
        if (!direct) return report_error(direct.error());
        AuditRequest req;
        req.interfaces = a.interfaces;
        req.include_virtual = a.all;
        if (!a.profile.empty()) req.profile = a.profile;
        req.health = !a.no_health;
        if (a.sample > 0) req.sample_seconds = a.sample;
        req.rtt_ms = a.rtt_ms;
        auto r = direct->manager->audit(req);
        if (!r) return report_error(r.error(), a.json && !a.prometheus);
        if (a.prometheus) return print_prometheus(report::audit_metrics(*r, unix_now()));
        if (a.json) {
            // The fast path: written in one pass, never held as a tree,
            // nor as a whole text.
            report::write_audit_json(
                *r, [](std::string_view part) { std::fwrite(part.data(), 1, part.size(), stdout); },
                64 * 1024);
            std::fputc('\n', stdout);
            return has_problems(*r) ? kFindings : kOk;
        }
        report = report::audit_json(*r);
    }
    if (int rc = print(report, a.json,
                       [&](const Json& j) {
                           return report::audit_text(j, {want_color(g), a.verbose});
                       });
        rc != kOk)
        return rc;
    const Json& sum = report->at("summary");
    return sum.value("warn", 0) + sum.value("fail", 0) > 0 ? kFindings : kOk;
}

struct ApplyArgs {
    std::string profile;
    std::vector<std::string> interfaces;
    bool dry_run = false;
    bool json = false;
    bool force = false;
    bool keep_going = false;
    // --verify-peer (issue 15): the check a transaction must pass to stay.
    std::string verify_peer;
    std::optional<double> min_gbps;
    std::optional<double> max_regression;
    unsigned probe_time = 5;
    unsigned probe_streams = 1;
    uint16_t probe_port = 5201;
    double probe_timeout = 2.0;
    double settle = 10.0;
};

int exit_for_result(TxResult result, bool refused_by_plan, const Error* error) {
    switch (result) {
        case TxResult::Applied:
            return kOk;
        case TxResult::RolledBack:
            return kRolledBack;
        case TxResult::Partial:
            return kPartial;
        case TxResult::DryRun:
            return refused_by_plan ? kUsage : kOk;
        case TxResult::Refused:
            // By the plan (limits, [match]) or by the caller's input -> 2;
            // otherwise (state dir, busy) -> 5.
            if (refused_by_plan || (error && error->is_user_error())) return kUsage;
            return kCannotRead;
        case TxResult::Pending:
            // Left waiting for a verdict that never came from here: nictuned
            // rolls it back at its timeout.
            return kCannotRead;
    }
    return kPartial;
}

// The same from a JSON result (a reply from nictuned).
int exit_for_result(const Json& r) {
    static const std::pair<const char*, TxResult> kResults[] = {
        {"applied", TxResult::Applied}, {"rolled_back", TxResult::RolledBack},
        {"partial", TxResult::Partial}, {"dry_run", TxResult::DryRun},
        {"refused", TxResult::Refused}, {"pending", TxResult::Pending}};
    TxResult result = TxResult::Partial;
    for (const auto& [name, value] : kResults)
        if (r.value("result", "") == name) result = value;
    std::optional<Error> error;
    if (r.contains("error") && r.at("error").is_object()) {
        const std::string code = r.at("error").value("code", "");
        Error e;
        e.code = errc_from_name(code).value_or(Errc::Internal);
        error = e;
    }
    return exit_for_result(result, !r.at("refusals").empty(), error ? &*error : nullptr);
}

int cmd_plan(const Globals& g, const ApplyArgs& a) {
    std::string why;
    Result<Json> plan = fail(Errc::Internal, "", "no plan");
    if (auto c = daemon(g, &why)) {
        plan = c->plan(a.profile, a.interfaces, a.force);
    } else {
        auto direct = open_direct(g);
        if (!direct) return report_error(direct.error());
        auto p = direct->manager->plan(ApplyRequest{a.profile, a.interfaces, a.force, true, false});
        if (!p) return report_error(p.error(), a.json);
        plan = report::plan_json(*p);
    }
    if (int rc =
            print(plan, a.json, [&](const Json& j) { return report::plan_text(j, want_color(g)); });
        rc != kOk)
        return rc;
    return plan->at("refusals").empty() ? kOk : kUsage;
}

int cmd_apply_verified(const Globals& g, const ApplyArgs& a);

int cmd_apply(const Globals& g, const ApplyArgs& a) {
    if (!a.verify_peer.empty()) return cmd_apply_verified(g, a);
    if (a.dry_run) return cmd_plan(g, a);
    Result<Json> result = fail(Errc::Internal, "", "no result");
    if (g.direct) {
        if (geteuid() != 0) {
            std::fprintf(
                stderr,
                "nictunectl: --direct apply changes the kernel's settings and needs root\n");
            return kCannotRead;
        }
        auto direct = open_direct(g, true);
        if (!direct) return report_error(direct.error());
        auto r = direct->manager->apply(
            ApplyRequest{a.profile, a.interfaces, a.force, false, a.keep_going});
        if (!r) return report_error(r.error(), a.json);
        if (a.json) {
            // Written in one pass; the exit status from the result itself.
            const std::string text = report::apply_json_text(*r);
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fputc('\n', stdout);
            return exit_for_result(r->result, !r->refusals.empty(),
                                   r->error ? &*r->error : nullptr);
        }
        std::cout << report::apply_text(*r, want_color(g));
        return exit_for_result(r->result, !r->refusals.empty(), r->error ? &*r->error : nullptr);
    } else {
        std::string why;
        auto c = daemon(g, &why);
        if (!c) return refuse_without_daemon(g, "apply", why);
        result = c->apply(a.profile, a.interfaces, a.force, a.keep_going);
    }
    if (int rc = print(result, a.json,
                       [&](const Json& j) { return report::apply_text(j, want_color(g)); });
        rc != kOk)
        return rc;
    return exit_for_result(*result);
}

// ---- apply --verify-peer: keep only what the path carries (issue 15) ----

probe::PeerCheck peer_check_of(const ApplyArgs& a) {
    probe::PeerCheck c;
    c.peer = a.verify_peer;
    c.min_gbps = a.min_gbps;
    c.max_regression_pct = a.max_regression;
    c.seconds = a.probe_time;
    c.streams = a.probe_streams;
    c.port = a.probe_port;
    c.timeout = std::chrono::milliseconds(static_cast<int64_t>(a.probe_timeout * 1000));
    c.settle = std::chrono::milliseconds(static_cast<int64_t>(a.settle * 1000));
    return c;
}

std::optional<std::string> check_error_of(const Json& result) {
    auto c = result.find("check");
    if (c == result.end() || !c->is_object()) return std::nullopt;
    auto e = c->find("error");
    if (e == c->end() || !e->is_object()) return std::nullopt;
    return e->value("text", "");
}

std::string check_outcome_of(const Json& result) {
    auto c = result.find("check");
    if (c == result.end() || !c->is_object()) return "not_reached";
    return c->value("outcome", "not_reached");
}

int print_verified(const Globals& g, const ApplyArgs& a, const Json& result) {
    if (a.json)
        std::cout << dump(result) << '\n';
    else
        std::cout << report::apply_text(result, want_color(g));
    return exit_for_result(result);
}

// Probes before the apply, applies, probes after inside the transaction
// and keeps it only if the path still carries it: in this process with
// --direct (the engine's after_verify step), else through nictuned's
// confirmed apply (Apply with confirm_timeout, then Confirm or Abort): the
// probes need IP sockets, which nictuned does not have.
int cmd_apply_verified(const Globals& g, const ApplyArgs& a) {
    const probe::PeerCheck check = peer_check_of(a);
    if (auto ok = probe::validate(check); !ok) return report_error(ok.error());
    const std::string check_name = "peer " + check.peer;

    std::string why;
    std::unique_ptr<dbus::Client> client = g.direct ? nullptr : daemon(g, &why);
    std::optional<Direct> direct;
    if (!client) {
        if (!a.dry_run && !g.direct) return refuse_without_daemon(g, "apply", why);
        if (!a.dry_run && geteuid() != 0) {
            std::fprintf(
                stderr,
                "nictunectl: --direct apply changes the kernel's settings and needs root\n");
            return kCannotRead;
        }
        auto d = open_direct(g, !a.dry_run);
        if (!d) return report_error(d.error());
        direct = std::move(*d);
    } else if (!a.dry_run) {
        auto has = client->has_confirm();
        if (!has) return report_error(has.error());
        if (!*has) {
            std::fprintf(stderr,
                         "nictunectl: apply --verify-peer: this nictuned has no confirmed apply "
                         "(no D-Bus method Confirm), which the peer check needs: update nictuned, "
                         "or run the apply here with --direct as root; nothing was changed\n");
            return kUsage;
        }
    }

    // The plan says which interfaces the apply changes: the route to the
    // peer must leave by one of them, or the probe tests nothing of it.
    Json plan;
    if (client) {
        auto p = client->plan(a.profile, a.interfaces, a.force);
        if (!p) return report_error(p.error());
        plan = std::move(*p);
    } else {
        auto p = direct->manager->plan(ApplyRequest{a.profile, a.interfaces, a.force, true, false});
        if (!p) return report_error(p.error(), a.json);
        plan = report::plan_json(*p);
    }
    std::vector<std::string> names;
    for (const auto& i : plan.at("interfaces"))
        names.push_back(i.value("name", ""));
    const bool refused = !plan.at("refusals").empty();

    if (a.dry_run) {
        // What would be probed: the peer's address and route, no packet sent.
        probe::ProbeOptions route_only;
        route_only.latency = false;
        route_only.path_mtu = false;
        route_only.timeout = check.timeout;
        auto route = probe::run_probe(check.peer, route_only, std::nullopt);
        if (!route) return report_error(route.error());
        std::optional<std::string> reason;
        if (auto ok = probe::check_route(*route, names); !ok) reason = ok.error().str();
        plan["verify_peer"] =
            report::verify_peer_json(check, &*route, nullptr, nullptr, "dry_run", reason);
        if (a.json)
            std::cout << dump(plan) << '\n';
        else
            std::cout << report::plan_text(plan, want_color(g)) << '\n'
                      << report::verify_peer_text(plan["verify_peer"], want_color(g));
        return refused || reason ? kUsage : kOk;
    }
    if (refused) {
        // Nothing would change: no probe; the apply reports the refusal.
        ApplyArgs plain = a;
        plain.verify_peer.clear();
        return cmd_apply(g, plain);
    }

    // Before: the peer must answer now, or nothing is changed.
    auto before = probe::run_probe(check.peer, check.probe_options(), std::nullopt);
    if (!before) {
        Error e = std::move(before.error());
        e.message += " (before the apply; nothing was changed)";
        return report_error(e);
    }
    if (auto ok = probe::check_route(*before, names); !ok) {
        Error e = std::move(ok.error());
        e.message += "; nothing was changed";
        return report_error(e);
    }

    std::optional<probe::ProbeResult> after;
    const auto probe_and_judge = [&]() -> Result<void> {
        auto r = probe::probe_after_apply(check);
        if (!r) return std::unexpected(std::move(r.error()));
        after = std::move(*r);
        return probe::judge(&*before, *after, check);
    };

    Json result;
    if (direct) {
        ApplyOptions hooks;
        hooks.check_name = check_name;
        hooks.after_verify = [&](const ApplyResult&) { return probe_and_judge(); };
        auto r = direct->manager->apply(
            ApplyRequest{a.profile, a.interfaces, a.force, false, false}, hooks);
        if (!r) return report_error(r.error());
        result = report::apply_json(*r);
    } else {
        // nictuned waits for the verdict this long, then rolls back itself.
        const auto budget = std::chrono::duration_cast<std::chrono::seconds>(check.budget()) +
                            std::chrono::seconds(15);
        dbus::ConfirmFlags flags{static_cast<uint32_t>(std::min<int64_t>(budget.count(), 3600)),
                                 check.peer};
        auto r = client->apply(a.profile, a.interfaces, a.force, false, flags);
        if (!r) return report_error(r.error());
        result = std::move(*r);
        if (result.value("result", "") == "pending") {
            const std::string tx = result.value("transaction", "");
            auto verdict = probe_and_judge();
            auto end = verdict ? client->confirm(tx)
                               : client->abort(tx, to_valid_utf8(verdict.error().str()));
            if (!end) {
                Error e = std::move(end.error());
                e.message +=
                    " (transaction " + tx + " is pending; nictuned rolls it back at its timeout)";
                return report_error(e);
            }
            result = std::move(*end);
        }
    }
    const std::string outcome = check_outcome_of(result);
    result["verify_peer"] = report::verify_peer_json(
        check, &*before, &*before, after ? &*after : nullptr, outcome, check_error_of(result));
    return print_verified(g, a, result);
}

struct ConfirmArgs {
    std::vector<std::string> transactions;
    bool json = false;
    double settle = 60.0;
    double timeout = 2.0;
    unsigned probe_time = 5;
    uint16_t probe_port = 5201;
};

// nictune-verify@.service: the check of a binding's pending transaction
// (verify_peer in nictune.toml), made here because nictuned opens no IP
// socket. Without TRANSACTION: every pending one that has a peer and no
// client of its own.
int cmd_confirm(const Globals& g, const ConfirmArgs& a) {
    std::string why;
    auto c = dbus::Client::connect(g.bus_address, &why);
    if (!c) {
        std::fprintf(stderr, "nictunectl: confirm: %s\n", why.c_str());
        return kCannotRead;
    }
    auto status = c->status();
    if (!status) return report_error(status.error());
    if (!status->contains("pending")) {
        std::fprintf(stderr,
                     "nictunectl: confirm: this nictuned has no confirmed apply (no pending "
                     "transactions in its Status): update nictuned\n");
        return kUsage;
    }
    std::vector<Json> todo;
    int rc = kOk;
    for (const auto& p : status->at("pending")) {
        const std::string tx = p.value("transaction", "");
        const bool named = std::ranges::find(a.transactions, tx) != a.transactions.end();
        if (a.transactions.empty() ? (p.at("peer").is_string() && p.at("client").is_null()) : named)
            todo.push_back(p);
    }
    for (const auto& tx : a.transactions)
        if (std::ranges::none_of(todo,
                                 [&](const Json& p) { return p.value("transaction", "") == tx; })) {
            std::fprintf(stderr,
                         "nictunectl: confirm: no transaction %s is waiting for "
                         "confirmation\n",
                         quote(tx).c_str());
            rc = kUsage;
        }
    Json all = Json::array();
    for (const auto& p : todo) {
        const std::string tx = p.value("transaction", "");
        if (!p.at("peer").is_string()) {
            std::fprintf(stderr,
                         "nictunectl: confirm: transaction %s names no peer to check; its "
                         "client decides\n",
                         tx.c_str());
            rc = std::max(rc, static_cast<int>(kUsage));
            continue;
        }
        probe::PeerCheck check;
        check.peer = p.at("peer").get<std::string>();
        if (p.contains("min_gbps") && p.at("min_gbps").is_number())
            check.min_gbps = p.at("min_gbps").get<double>();
        check.seconds = a.probe_time;
        check.port = a.probe_port;
        check.timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout * 1000));
        check.settle = std::chrono::milliseconds(static_cast<int64_t>(a.settle * 1000));
        std::optional<probe::ProbeResult> after;
        Result<void> verdict = [&]() -> Result<void> {
            if (auto ok = probe::validate(check); !ok) return ok;
            auto r = probe::probe_after_apply(check);
            if (!r) return std::unexpected(std::move(r.error()));
            after = std::move(*r);
            std::vector<std::string> names;
            for (const auto& n : p.at("interfaces"))
                names.push_back(n.get<std::string>());
            if (auto ok = probe::check_route(*after, names); !ok) return ok;
            return probe::judge(nullptr, *after, check);
        }();
        auto end = verdict ? c->confirm(tx) : c->abort(tx, to_valid_utf8(verdict.error().str()));
        if (!end) {
            rc = std::max(rc, report_error(end.error()));
            continue;
        }
        Json result = std::move(*end);
        result["verify_peer"] =
            report::verify_peer_json(check, nullptr, nullptr, after ? &*after : nullptr,
                                     check_outcome_of(result), check_error_of(result));
        if (!a.json) std::cout << report::apply_text(result, want_color(g));
        rc = std::max(rc, exit_for_result(result));
        all.push_back(std::move(result));
    }
    if (a.json) std::cout << dump(Json{{"confirmations", all}}) << '\n';
    if (todo.empty() && a.transactions.empty() && !a.json)
        std::cout << "no pending transaction has a peer to check\n";
    return rc;
}

// ---- end of apply --verify-peer ----

// result: the report's "result"; code: its error's "code" ("" for none).
int rollback_exit(std::string_view result, std::string_view code) {
    if (result == "rolled_back" || result == "nothing_saved") return kOk;
    if (result == "partial") return kPartial;
    if (code == "InvalidArgument" || code == "NoSuchInterface") return kUsage;
    return kCannotRead;
}

int rollback_exit(const Json& r) {
    std::string code;
    if (r.contains("error") && r.at("error").is_object()) code = r.at("error").value("code", "");
    return rollback_exit(r.value("result", ""), code);
}

int rollback_exit(const RollbackResult& r) {
    return rollback_exit(report::rollback_result_name(r), r.error ? errc_name(r.error->code) : "");
}

int cmd_rollback(const Globals& g, const std::vector<std::string>& ifaces, bool json) {
    std::unique_ptr<Direct> direct;
    std::unique_ptr<dbus::Client> client;
    if (g.direct) {
        if (geteuid() != 0) {
            std::fprintf(
                stderr,
                "nictunectl: --direct rollback changes the kernel's settings and needs root\n");
            return kCannotRead;
        }
        auto d = open_direct(g, true);
        if (!d) return report_error(d.error());
        direct = std::make_unique<Direct>(std::move(*d));
    } else {
        std::string why;
        client = daemon(g, &why);
        if (!client) return refuse_without_daemon(g, "rollback", why);
    }
    int rc = kOk;
    Json all = Json::array();
    // Directly, all of them together: one read and one pipelined restore.
    std::vector<RollbackResult> direct_results;
    if (direct) direct_results = direct->manager->rollback(ifaces);
    // Through nictuned, likewise in one call.
    std::vector<Result<Json>> daemon_results;
    if (client) {
        auto all_results = client->rollback(ifaces);
        if (!all_results) return report_error(all_results.error());
        daemon_results = std::move(*all_results);
    }
    const bool color = want_color(g);
    for (std::size_t n = 0; n < ifaces.size(); ++n) {
        Result<Json> r = fail(Errc::Internal, "", "no result");
        if (client) {
            r = std::move(daemon_results[n]);
        } else {
            const auto& res = direct_results[n];
            // Refused for the caller's own mistake: an error, as nictuned answers it.
            if (res.result == TxResult::Refused && res.error && res.error->is_user_error()) {
                r = std::unexpected(*res.error);
            } else if (!json) {
                // Text straight from the result: no JSON document per interface.
                std::cout << report::rollback_text(res, color);
                rc = std::max(rc, rollback_exit(res));
                continue;
            } else {
                r = report::rollback_json(res);
            }
        }
        if (!r) {
            // In the JSON too, in the shape of a refused rollback's report:
            // a script sees which interface failed, and why, field by field.
            if (json)
                all.push_back(Json{{"interface", ifaces[n]},
                                   {"profile", ""},
                                   {"result", "refused"},
                                   {"restored", Json::array()},
                                   {"error", report::error_json(r.error())}});
            rc = std::max(rc, report_error(r.error()));
            continue;
        }
        if (json)
            all.push_back(*r);
        else
            std::cout << report::rollback_text(*r, color);
        rc = std::max(rc, rollback_exit(*r));
    }
    if (json) std::cout << dump(Json{{"rollbacks", all}}) << '\n';
    return rc;
}

int cmd_profiles(const Globals& g, bool json) {
    std::string why;
    Json list;
    if (auto c = daemon(g, &why)) {
        auto r = c->profiles();
        if (!r) return report_error(r.error());
        list = std::move(*r);
    } else {
        profile::StoreOptions so;
        std::vector<std::filesystem::path> dirs(g.profiles_dirs.begin(), g.profiles_dirs.end());
        so.search_path = profile::default_search_path(dirs);
        Json arr = Json::array();
        for (const auto& e : profile::Store(so).list()) {
            Json shadows = Json::array();
            for (const auto& s : e.shadows)
                shadows.push_back(s.string());
            arr.push_back({{"name", e.name},
                           {"path", e.path.string()},
                           {"description", e.description},
                           {"shadows", shadows},
                           {"error", e.error ? Json(e.error->str()) : Json(nullptr)}});
        }
        list = Json{{"profiles", arr}};
    }
    bool bad = false;
    if (json) {
        std::cout << dump(list) << '\n';
    } else if (list.at("profiles").empty()) {
        std::cout << "no profiles found\n";
    }
    for (const auto& e : list.at("profiles")) {
        const bool err = !e.at("error").is_null();
        bad |= err;
        if (json) continue;
        std::cout << e.at("name").get<std::string>() << "  "
                  << (err ? "INVALID: " + e.at("error").get<std::string>()
                          : e.at("description").get<std::string>())
                  << "\n    " << e.at("path").get<std::string>();
        if (e.contains("shadows"))
            for (const auto& s : e.at("shadows"))
                std::cout << " (shadows " << s.get<std::string>() << ")";
        std::cout << '\n';
    }
    return bad ? kUsage : kOk;
}

int cmd_status(const Globals& g, bool json) {
    std::string why;
    auto c = dbus::Client::connect(g.bus_address, &why);
    if (!c) {
        std::fprintf(stderr, "nictunectl: status: %s\n", why.c_str());
        return kCannotRead;
    }
    auto s = c->status();
    if (!s) return report_error(s.error());
    if (json) {
        std::cout << dump(*s) << '\n';
        return kOk;
    }
    std::cout << "nictuned " << s->value("version", "") << ", config " << s->value("config", "")
              << ", state " << s->value("state_dir", "") << '\n';
    if (s->contains("config_error") && !s->at("config_error").is_null())
        std::cout << "  configuration error: " << s->at("config_error").get<std::string>() << '\n';
    std::cout << "bindings:\n";
    if (s->at("bindings").empty()) std::cout << "  none\n";
    for (const auto& b : s->at("bindings"))
        std::cout << "  " << b.value("match", "") << "  (" << b.value("at", "") << ")\n";
    std::cout << "interfaces:\n";
    if (s->at("interfaces").empty()) std::cout << "  none tuned\n";
    for (const auto& i : s->at("interfaces")) {
        std::string alts;
        if (i.contains("altnames"))
            for (const auto& a : i.at("altnames"))
                alts += (alts.empty() ? ", altnames " : " ") + a.get<std::string>();
        std::cout << "  " << i.value("name", "") << " (ifindex " << i.value("ifindex", 0) << alts
                  << "): profile " << i.value("profile", "") << ", " << i.value("last_result", "")
                  << (i.value("enforce", false) ? ", enforced" : "");
        if (!i.at("drifted").empty()) {
            std::cout << ", DRIFTED:";
            for (const auto& k : i.at("drifted"))
                std::cout << ' ' << k.get<std::string>();
        }
        if (i.value("enforcement_suspended", false)) std::cout << ", enforcement suspended";
        std::cout << '\n';
    }
    return kOk;
}

int cmd_reload(const Globals& g) {
    std::string why;
    auto c = dbus::Client::connect(g.bus_address, &why);
    if (!c) {
        std::fprintf(stderr, "nictunectl: reload: %s\n", why.c_str());
        return kCannotRead;
    }
    if (auto r = c->reload(); !r) return report_error(r.error());
    std::cout << "nictuned reloaded its configuration\n";
    return kOk;
}

int cmd_keys(bool json, bool markdown, bool man) {
    if (man)
        std::cout << report::keys_man();
    else if (markdown)
        std::cout << report::keys_markdown();
    else if (json)
        std::cout << dump(report::keys_json()) << '\n';
    else
        std::cout << report::keys_text();
    return kOk;
}

// ---- probe: the path to a peer (issue 15) ----

struct ProbeArgs {
    std::string peer;
    std::string interface;
    bool json = false;
    bool throughput = false;
    unsigned time = 5;
    unsigned streams = 1;
    bool reverse = false;
    uint16_t port = 5201;
    unsigned count = 20;
    double timeout = 2.0;
};

int cmd_probe(const Globals& g, const ProbeArgs& a) {
    probe::ProbeOptions opts;
    opts.count = a.count;
    opts.timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout * 1000));
    if (a.throughput) {
        probe::ThroughputOptions t;
        t.port = a.port;
        t.streams = a.streams;
        t.reverse = a.reverse;
        t.seconds = a.time;
        t.timeout = opts.timeout;
        opts.throughput = t;
    }
    const std::optional<std::string> iface =
        a.interface.empty() ? std::nullopt : std::optional(a.interface);
    auto r = probe::run_probe(a.peer, opts, iface);
    if (!r) return report_error(r.error());
    const Json j = report::probe_json(*r);
    if (a.json)
        std::cout << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    else
        std::cout << report::probe_text(j, want_color(g));
    if (r->path_mtu && r->path_mtu->source != probe::MtuSource::Interface) return kPathCheck;
    return kOk;
}

// ---- end of probe ----

// ---- the command table ----

// What runs a parsed command.
using Runner = std::function<int()>;

// A command: its name and description, always known (`nictunectl --help`
// lists them), and `define`, which adds its arguments to its subcommand and
// returns its runner. Only the command being run is defined: building
// CLI11's options of every command was a seventh of the instructions of a
// one-interface apply (BENCHMARKS.md, "One interface").
struct Command {
    const char* name;
    const char* description;
    Runner (*define)(CLI::App& cmd, const Globals& g);
};

// Interface names and profile names as nictuned would take them: a name
// that is not even UTF-8 could not be sent to it (sd-bus refuses), and would
// read as a bus failure. nullopt when they are fine.
std::optional<int> check_names(std::vector<std::string>& interfaces, const std::string& profile) {
    auto text = name_args(interfaces);
    if (!text) return report_error(text.error());
    interfaces = std::move(*text);
    if (!profile.empty())
        if (auto ok = profile::validate_name(profile); !ok) return report_error(ok.error());
    return std::nullopt;
}

Runner define_audit(CLI::App& cmd, const Globals& g) {
    auto a = std::make_shared<AuditArgs>();
    cmd.add_option("interfaces", a->interfaces, "Interfaces (default: every physical NIC)")
        ->type_name("IFACE");
    cmd.add_option("--profile", a->profile, "Audit against this profile (default: the best match)")
        ->type_name("NAME");
    auto* json = cmd.add_flag("--json", a->json, "One JSON object on stdout");
    cmd.add_flag("--prometheus", a->prometheus,
                 "The findings as Prometheus metrics (node_exporter's textfile format)")
        ->excludes(json);
    cmd.add_flag("--all", a->all, "Without IFACE: include virtual interfaces too");
    cmd.add_flag("-v,--verbose", a->verbose, "Show fixed features too");
    cmd.add_flag("--no-health", a->no_health,
                 "Leave out the health checks (PCIe, counters, IRQs, CPU, other tools)");
    cmd.add_option("--sample", a->sample,
                   "Read the counters twice, SECONDS apart, and report rates (read in this "
                   "process, also when nictuned runs)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.0, kMaxSampleSeconds));
    cmd.add_option("--rtt-ms", a->rtt_ms,
                   "Round-trip time the socket-buffer check assumes (default 1 ms, a LAN)")
        ->type_name("MS")
        ->check(CLI::Range(0.001, 10000.0));
    return [&g, a] {
        if (auto bad = check_names(a->interfaces, a->profile)) return *bad;
        return cmd_audit(g, *a);
    };
}

Runner define_apply(CLI::App& cmd, const Globals& g) {
    auto a = std::make_shared<ApplyArgs>();
    cmd.add_option("profile", a->profile, "Profile name")->required()->type_name("PROFILE");
    cmd.add_option("interfaces", a->interfaces,
                   "Interfaces (default: every NIC the profile's [match] fits)")
        ->type_name("IFACE");
    cmd.add_flag("--dry-run", a->dry_run, "Print the plan; change nothing");
    cmd.add_flag("--json", a->json, "JSON output");
    cmd.add_flag("--force", a->force, "Apply even where the profile's [match] does not fit");
    auto* keep_going =
        cmd.add_flag("--keep-going", a->keep_going, "Do not roll back when a step fails");
    auto* verify = cmd.add_option("--verify-peer", a->verify_peer,
                                  "Probe PEER before and after (path MTU, latency; throughput "
                                  "with --min-gbps/--max-regression) and roll back unless the "
                                  "path still carries it")
                       ->type_name("PEER")
                       ->excludes(keep_going);
    cmd.add_option("--min-gbps", a->min_gbps,
                   "With --verify-peer: roll back below this iperf3 throughput")
        ->type_name("X")
        ->check(CLI::Range(0.000001, 10000.0))
        ->needs(verify);
    cmd.add_option("--max-regression", a->max_regression,
                   "With --verify-peer: roll back if throughput falls more than PCT percent")
        ->type_name("PCT")
        ->check(CLI::Range(0.0, 99.999))
        ->needs(verify);
    cmd.add_option("--probe-time", a->probe_time, "Throughput test length (default 5)")
        ->type_name("SECONDS")
        ->check(CLI::Range(1U, 3600U))
        ->needs(verify);
    cmd.add_option("--probe-streams", a->probe_streams, "Parallel TCP streams (default 1)")
        ->type_name("N")
        ->check(CLI::Range(1U, 128U))
        ->needs(verify);
    cmd.add_option("--probe-port", a->probe_port, "The iperf3 server's port (default 5201)")
        ->type_name("P")
        ->check(CLI::Range(1, 65535))
        ->needs(verify);
    cmd.add_option("--probe-timeout", a->probe_timeout,
                   "The longest wait for any one answer of the peer (default 2)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.01, 600.0))
        ->needs(verify);
    cmd.add_option("--settle", a->settle,
                   "How long the peer may take to answer again after the apply (default 10)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.0, 600.0))
        ->needs(verify);
    return [&g, a] {
        if (auto bad = check_names(a->interfaces, a->profile)) return *bad;
        return cmd_apply(g, *a);
    };
}

Runner define_diff(CLI::App& cmd, const Globals& g) {
    auto a = std::make_shared<ApplyArgs>();
    cmd.add_option("profile", a->profile, "Profile name")->required()->type_name("PROFILE");
    cmd.add_option("interfaces", a->interfaces, "Interfaces")->type_name("IFACE");
    cmd.add_flag("--json", a->json, "JSON output");
    cmd.add_flag("--force", a->force, "Plan even where the profile's [match] does not fit");
    return [&g, a] {
        if (auto bad = check_names(a->interfaces, a->profile)) return *bad;
        return cmd_plan(g, *a);
    };
}

struct RollbackArgs {
    std::vector<std::string> interfaces;
    bool json = false;
};

Runner define_rollback(CLI::App& cmd, const Globals& g) {
    auto a = std::make_shared<RollbackArgs>();
    cmd.add_option("interfaces", a->interfaces, "Interfaces")->required()->type_name("IFACE");
    cmd.add_flag("--json", a->json, "JSON output");
    return [&g, a] {
        if (auto bad = check_names(a->interfaces, {})) return *bad;
        return cmd_rollback(g, a->interfaces, a->json);
    };
}

// The commands whose only argument is --json.
template <int (*Cmd)(const Globals&, bool)>
Runner define_with_json(CLI::App& cmd, const Globals& g) {
    auto json = std::make_shared<bool>(false);
    cmd.add_flag("--json", *json, "JSON output");
    return [&g, json] { return Cmd(g, *json); };
}

Runner define_reload(CLI::App&, const Globals& g) {
    return [&g] { return cmd_reload(g); };
}

struct KeysArgs {
    bool json = false;
    bool markdown = false;
    bool man = false;
};

Runner define_keys(CLI::App& cmd, const Globals&) {
    auto a = std::make_shared<KeysArgs>();
    cmd.add_flag("--json", a->json, "JSON output");
    cmd.add_flag("--markdown", a->markdown, "The profile reference as Markdown (docs/profiles.md)");
    cmd.add_flag("--man", a->man, "The profile reference as a man page, nictune-profile(5)");
    return [a] { return cmd_keys(a->json, a->markdown, a->man); };
}

Runner define_probe(CLI::App& cmd, const Globals& g) {
    auto a = std::make_shared<ProbeArgs>();
    cmd.add_option("peer", a->peer, "Address or host name of the peer")
        ->required()
        ->type_name("PEER");
    cmd.add_option("--interface", a->interface,
                   "Leave by this interface (default: the route's; needed for a link-local "
                   "IPv6 peer)")
        ->type_name("IFACE");
    cmd.add_flag("--json", a->json, "One JSON object on stdout");
    auto* tp = cmd.add_flag("--throughput", a->throughput,
                            "Also measure TCP throughput against iperf3 -s on the peer");
    cmd.add_option("--time", a->time, "Throughput test length")
        ->type_name("SECONDS")
        ->check(CLI::Range(1U, 3600U))
        ->needs(tp);
    cmd.add_option("--streams", a->streams, "Parallel TCP streams")
        ->type_name("N")
        ->check(CLI::Range(1U, 128U))
        ->needs(tp);
    cmd.add_flag("--reverse", a->reverse, "The peer sends (iperf3 -R)")->needs(tp);
    cmd.add_option("--port", a->port, "The iperf3 server's port")
        ->type_name("P")
        ->check(CLI::Range(1, 65535))
        ->needs(tp);
    cmd.add_option("--count", a->count, "Echo requests for the latency figures")
        ->type_name("N")
        ->check(CLI::Range(1U, 10000U));
    cmd.add_option("--timeout", a->timeout, "The longest wait for any one answer")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.01, 600.0));
    return [&g, a] { return cmd_probe(g, *a); };
}

Runner define_confirm(CLI::App& cmd, const Globals& g) {
    auto a = std::make_shared<ConfirmArgs>();
    cmd.add_option("transactions", a->transactions,
                   "Transactions (default: every pending one with a peer and no client)")
        ->type_name("TRANSACTION");
    cmd.add_flag("--json", a->json, "JSON output");
    cmd.add_option("--settle", a->settle,
                   "How long the peer may take to answer (default 60: the boot may still bring "
                   "links up)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.0, 3600.0));
    cmd.add_option("--probe-timeout", a->timeout,
                   "The longest wait for any one answer of the peer (default 2)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.01, 600.0));
    cmd.add_option("--probe-time", a->probe_time,
                   "Throughput test length when the binding has min_gbps (default 5)")
        ->type_name("SECONDS")
        ->check(CLI::Range(1U, 3600U));
    cmd.add_option("--probe-port", a->probe_port, "The iperf3 server's port (default 5201)")
        ->type_name("P")
        ->check(CLI::Range(1, 65535));
    return [&g, a] { return cmd_confirm(g, *a); };
}

constexpr Command kCommands[] = {
    {"audit", "Read every setting of the NICs and report what is wrong", define_audit},
    {"apply", "Apply a profile as a transaction: plan, save, apply, verify, roll back on failure",
     define_apply},
    {"diff", "Show what applying a profile would change (apply --dry-run)", define_diff},
    {"rollback", "Restore the settings an interface had before nictune changed them",
     define_rollback},
    {"profiles", "List the profiles on the search path", define_with_json<cmd_profiles>},
    {"status", "nictuned's bindings, tuned interfaces and drift", define_with_json<cmd_status>},
    {"reload", "Make nictuned re-read its configuration and profiles", define_reload},
    {"keys", "List every profile key with its type, range, unit and meaning", define_keys},
    {"probe", "Measure the path to a peer: path MTU and latency (ICMP), throughput (its iperf3 -s)",
     define_probe},
    {"confirm",
     "Check the peer of nictuned's pending transactions (bindings with verify_peer) and "
     "confirm or roll back each (nictune-verify@.service runs it)",
     define_confirm},
};

void define_globals(CLI::App& app, Globals& g) {
    app.set_version_flag("--version", std::string("nictunectl ") + NICTUNE_VERSION);
    app.require_subcommand(1);
    app.add_option(
           "--profiles-dir", g.profiles_dirs,
           "Directory searched for profiles before /etc and the shipped ones (local engine only)")
        ->type_name("DIR");
    app.add_option("--state-dir", g.state_dir,
                   "Where transactions keep the original settings (local engine only)")
        ->type_name("DIR");
    app.add_option("--config", g.config,
                   "nictuned's configuration, for its state_dir and profiles_dirs (local engine "
                   "only; default " NICTUNE_SYSCONFDIR "/nictune.toml)")
        ->type_name("FILE");
    app.add_option("--bus-address", g.bus_address,
                   "D-Bus address of nictuned's bus (default: the system bus)")
        ->type_name("ADDR");
    app.add_option("--color", g.color, "Colour in text output")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    app.add_option("--facts", g.facts_file, "Extra driver facts file (local engine only)")
        ->type_name("FILE");
    app.add_flag("--direct", g.direct, "Use the engine in this process instead of nictuned");
    app.fallthrough();
}

// The command the arguments name: the first one that is neither an option
// nor the value of one of `app`'s own options; none when that is no
// command's name (CLI11 then says what is wrong, with every command known).
std::optional<std::size_t> command_named(const CLI::App& app, int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") return std::nullopt;
        if (arg.starts_with('-')) {
            if (arg.find('=') != std::string_view::npos) continue;
            const CLI::Option* opt = app.get_option_no_throw(std::string(arg));
            if (opt != nullptr && opt->get_items_expected_min() > 0) ++i;
            continue;
        }
        for (std::size_t c = 0; c < std::size(kCommands); ++c)
            if (arg == kCommands[c].name) return c;
        return std::nullopt;
    }
    return std::nullopt;
}

// Parses and runs. Unless `whole`, only the command the arguments name is
// defined (`nictunectl --help` names no command, and gets the whole table);
// a parse error goes to the whole table, so that every message is the one
// all commands' arguments give.
int parse_and_run(int argc, char** argv, bool whole) {
    CLI::App app{"nictunectl: audit and tune network cards (through nictuned, or directly)"};
    Globals g;
    define_globals(app, g);
    const auto only = whole ? std::nullopt : command_named(app, argc, argv);
    std::vector<std::pair<CLI::App*, Runner>> commands;
    for (std::size_t c = 0; c < std::size(kCommands); ++c) {
        if (only && *only != c) continue;
        CLI::App* cmd = app.add_subcommand(kCommands[c].name, kCommands[c].description);
        commands.emplace_back(cmd, kCommands[c].define(*cmd, g));
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        if (only) return parse_and_run(argc, argv, true);
        app.exit(e);
        return kUsage;
    }
    for (const auto& [cmd, runner] : commands)
        if (cmd->parsed()) return runner();
    return kUsage;
}

}  // namespace

int run(int argc, char** argv) {
    return parse_and_run(argc, argv, false);
}

}  // namespace nictune::ctl
