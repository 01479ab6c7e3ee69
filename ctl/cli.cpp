#include "cli.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/netlink_backend.hpp"
#include "engine/audit.hpp"
#include "engine/manager.hpp"
#include "profile/facts.hpp"
#include "profile/loader.hpp"
#include "report/json_report.hpp"
#include "report/keys_doc.hpp"
#include "report/plan_report.hpp"
#include "report/text_report.hpp"

namespace nictune::ctl {
namespace {

struct Globals {
    std::vector<std::string> profiles_dirs;
    std::string state_dir = "/run/nictune";
    std::string bus_address;
    std::string color = "auto";
    std::string facts_file;
    bool direct = false;
};

int exit_for(const Error& e) {
    if (e.is_user_error()) return kUsage;
    return kCannotRead;
}

int report_error(const Error& e) {
    std::fprintf(stderr, "nictunectl: %s\n", e.str().c_str());
    return exit_for(e);
}

bool want_color(const Globals& g) {
    if (g.color == "always") return true;
    if (g.color == "never") return false;
    return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
}

profile::Store make_store(const Globals& g, const FeatureNames* runtime_features = nullptr) {
    profile::StoreOptions o;
    std::vector<std::filesystem::path> dirs(g.profiles_dirs.begin(), g.profiles_dirs.end());
    o.search_path = profile::default_search_path(dirs);
    o.parse.runtime_features = runtime_features;
    return profile::Store(std::move(o));
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

struct AuditArgs {
    std::vector<std::string> interfaces;
    std::string profile;
    bool json = false;
    bool all = false;
    bool verbose = false;
};

// The engine over the kernel, for --direct operation (and audit without the daemon).
struct Direct {
    std::unique_ptr<NetlinkBackend> backend;
    std::unique_ptr<Manager> manager;
};

Result<Direct> open_direct(const Globals& g) {
    auto facts = load_facts(g);
    if (!facts) return std::unexpected(facts.error());
    auto backend = NetlinkBackend::open();
    if (!backend) return std::unexpected(backend.error());
    Direct d;
    d.backend = std::move(*backend);
    auto names = d.backend->kernel_feature_names();
    d.manager = std::make_unique<Manager>(*d.backend, make_store(g, names ? names->get() : nullptr),
                                          StateStore(g.state_dir), std::move(*facts));
    return d;
}

int cmd_audit(const Globals& g, const AuditArgs& a) {
    auto direct = open_direct(g);
    if (!direct) return report_error(direct.error());
    AuditRequest req;
    req.interfaces = a.interfaces;
    req.include_virtual = a.all;
    if (!a.profile.empty()) req.profile = a.profile;
    auto report = direct->manager->audit(req);
    if (!report) return report_error(report.error());
    if (a.json)
        std::cout << report::audit_json(*report).dump(2) << '\n';
    else
        std::cout << report::audit_text(*report, {want_color(g), a.verbose});
    return has_problems(*report) ? kFindings : kOk;
}

int cmd_profiles(const Globals& g, bool json) {
    auto store = make_store(g);
    auto list = store.list();
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& e : list) {
            nlohmann::json shadows = nlohmann::json::array();
            for (const auto& s : e.shadows)
                shadows.push_back(s.string());
            arr.push_back(
                {{"name", e.name},
                 {"path", e.path.string()},
                 {"description", e.description},
                 {"shadows", shadows},
                 {"error", e.error ? nlohmann::json(e.error->str()) : nlohmann::json(nullptr)}});
        }
        std::cout << nlohmann::json{{"profiles", arr}}.dump(2) << '\n';
    } else {
        if (list.empty()) std::cout << "no profiles found\n";
        for (const auto& e : list) {
            std::cout << e.name << "  " << (e.error ? "INVALID: " + e.error->str() : e.description)
                      << "\n    " << e.path.string();
            for (const auto& s : e.shadows)
                std::cout << " (shadows " << s.string() << ")";
            std::cout << '\n';
        }
    }
    bool bad =
        std::any_of(list.begin(), list.end(), [](const auto& e) { return e.error.has_value(); });
    return bad ? kUsage : kOk;
}

struct ApplyArgs {
    std::string profile;
    std::vector<std::string> interfaces;
    bool dry_run = false;
    bool json = false;
    bool force = false;
    bool keep_going = false;
};

int need_direct(const Globals& g, const char* what) {
    if (!g.direct) {
        std::fprintf(stderr,
                     "nictunectl: %s goes through nictuned, which is not running (start it with "
                     "`systemctl start nictuned`), or run it here with --direct as root\n",
                     what);
        return kCannotRead;
    }
    if (geteuid() != 0) {
        std::fprintf(
            stderr, "nictunectl: --direct %s changes the kernel's settings and needs root\n", what);
        return kCannotRead;
    }
    return kOk;
}

int exit_for_result(const ApplyResult& r) {
    switch (r.result) {
        case TxResult::Applied:
            return kOk;
        case TxResult::DryRun:
            return r.refusals.empty() ? kOk : kUsage;
        case TxResult::Refused:
            return !r.refusals.empty() || (r.error && r.error->is_user_error()) ? kUsage
                                                                                : kCannotRead;
        case TxResult::RolledBack:
            return kRolledBack;
        case TxResult::Partial:
            return kPartial;
    }
    return kPartial;
}

int cmd_plan(const Globals& g, const ApplyArgs& a) {
    auto direct = open_direct(g);
    if (!direct) return report_error(direct.error());
    auto plan = direct->manager->plan(ApplyRequest{a.profile, a.interfaces, a.force, true, false});
    if (!plan) return report_error(plan.error());
    if (a.json)
        std::cout << report::plan_json(*plan).dump(2) << '\n';
    else
        std::cout << report::plan_text(*plan, want_color(g));
    return plan->refusals().empty() ? kOk : kUsage;
}

int cmd_apply(const Globals& g, const ApplyArgs& a) {
    if (a.dry_run) return cmd_plan(g, a);
    if (int rc = need_direct(g, "apply"); rc != kOk) return rc;
    auto direct = open_direct(g);
    if (!direct) return report_error(direct.error());
    auto res =
        direct->manager->apply(ApplyRequest{a.profile, a.interfaces, a.force, false, a.keep_going});
    if (!res) return report_error(res.error());
    if (a.json)
        std::cout << report::apply_json(*res).dump(2) << '\n';
    else
        std::cout << report::apply_text(*res, want_color(g));
    return exit_for_result(*res);
}

int cmd_rollback(const Globals& g, const std::vector<std::string>& ifaces, bool json) {
    if (int rc = need_direct(g, "rollback"); rc != kOk) return rc;
    auto direct = open_direct(g);
    if (!direct) return report_error(direct.error());
    int rc = kOk;
    nlohmann::json all = nlohmann::json::array();
    for (const auto& i : ifaces) {
        auto r = direct->manager->rollback(i);
        if (json)
            all.push_back(report::rollback_json(r));
        else
            std::cout << report::rollback_text(r, want_color(g));
        int this_rc = kOk;
        if (r.result == TxResult::Partial)
            this_rc = kPartial;
        else if (r.result == TxResult::Refused)
            this_rc = r.error && r.error->is_user_error() ? kUsage : kCannotRead;
        rc = std::max(rc, this_rc);
    }
    if (json) std::cout << nlohmann::json{{"rollbacks", all}}.dump(2) << '\n';
    return rc;
}

int cmd_keys(bool json, bool markdown) {
    if (markdown)
        std::cout << report::keys_markdown();
    else if (json)
        std::cout << report::keys_json().dump(2) << '\n';
    else
        std::cout << report::keys_text();
    return kOk;
}

}  // namespace

int run(int argc, char** argv) {
    CLI::App app{
        "nictunectl: audit and tune network cards (talks to nictuned, or to the kernel directly)"};
    app.set_version_flag("--version", std::string("nictunectl ") + NICTUNE_VERSION);
    app.require_subcommand(1);
    Globals g;
    app.add_option("--profiles-dir", g.profiles_dirs,
                   "Directory searched for profiles before /etc and the shipped ones")
        ->type_name("DIR");
    app.add_option("--state-dir", g.state_dir, "Where transactions keep the original settings")
        ->type_name("DIR");
    app.add_option("--bus-address", g.bus_address,
                   "D-Bus address of nictuned's bus (default: the system bus)")
        ->type_name("ADDR");
    app.add_option("--color", g.color, "Colour in text output")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    app.add_option("--facts", g.facts_file,
                   "Extra driver facts file (TOML, same schema as the built-in one)")
        ->type_name("FILE");
    app.add_flag("--direct", g.direct, "Talk to the kernel directly instead of through nictuned");
    app.fallthrough();

    AuditArgs audit;
    auto* audit_cmd =
        app.add_subcommand("audit", "Read every setting of the NICs and report what is wrong");
    audit_cmd
        ->add_option("interfaces", audit.interfaces, "Interfaces (default: every physical NIC)")
        ->type_name("IFACE");
    audit_cmd
        ->add_option("--profile", audit.profile,
                     "Audit against this profile (default: the best match)")
        ->type_name("NAME");
    audit_cmd->add_flag("--json", audit.json, "One JSON object on stdout");
    audit_cmd->add_flag("--all", audit.all, "Without IFACE: include virtual interfaces too");
    audit_cmd->add_flag("-v,--verbose", audit.verbose, "Show fixed features too");

    bool profiles_json = false;
    auto* profiles_cmd = app.add_subcommand("profiles", "List the profiles on the search path");
    profiles_cmd->add_flag("--json", profiles_json, "JSON output");

    bool keys_json = false;
    auto* keys_cmd =
        app.add_subcommand("keys", "List every profile key with its type, range, unit and meaning");
    keys_cmd->add_flag("--json", keys_json, "JSON output");
    bool keys_markdown = false;
    keys_cmd->add_flag("--markdown", keys_markdown,
                       "The profile reference as Markdown (docs/profiles.md)");

    ApplyArgs apply;
    auto* apply_cmd = app.add_subcommand(
        "apply",
        "Apply a profile as a transaction: plan, save, apply, verify, roll back on failure");
    apply_cmd->add_option("profile", apply.profile, "Profile name")
        ->required()
        ->type_name("PROFILE");
    apply_cmd
        ->add_option("interfaces", apply.interfaces,
                     "Interfaces (default: every NIC the profile's [match] fits)")
        ->type_name("IFACE");
    apply_cmd->add_flag("--dry-run", apply.dry_run, "Print the plan; change nothing");
    apply_cmd->add_flag("--json", apply.json, "JSON output");
    apply_cmd->add_flag("--force", apply.force,
                        "Apply even where the profile's [match] does not fit");
    apply_cmd->add_flag("--keep-going", apply.keep_going, "Do not roll back when a step fails");

    ApplyArgs diff;
    auto* diff_cmd = app.add_subcommand(
        "diff", "Show what applying a profile would change (same as apply --dry-run)");
    diff_cmd->add_option("profile", diff.profile, "Profile name")->required()->type_name("PROFILE");
    diff_cmd->add_option("interfaces", diff.interfaces, "Interfaces")->type_name("IFACE");
    diff_cmd->add_flag("--json", diff.json, "JSON output");
    diff_cmd->add_flag("--force", diff.force, "Plan even where the profile's [match] does not fit");

    std::vector<std::string> rollback_ifaces;
    bool rollback_json = false;
    auto* rollback_cmd = app.add_subcommand(
        "rollback", "Restore the settings an interface had before nictune changed them");
    rollback_cmd->add_option("interfaces", rollback_ifaces, "Interfaces")
        ->required()
        ->type_name("IFACE");
    rollback_cmd->add_flag("--json", rollback_json, "JSON output");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kUsage;
    }

    if (audit_cmd->parsed()) return cmd_audit(g, audit);
    if (apply_cmd->parsed()) return cmd_apply(g, apply);
    if (diff_cmd->parsed()) return cmd_plan(g, diff);
    if (rollback_cmd->parsed()) return cmd_rollback(g, rollback_ifaces, rollback_json);
    if (profiles_cmd->parsed()) return cmd_profiles(g, profiles_json);
    if (keys_cmd->parsed()) return cmd_keys(keys_json, keys_markdown);
    return kUsage;
}

}  // namespace nictune::ctl
