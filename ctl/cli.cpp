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
#include "profile/facts.hpp"
#include "profile/loader.hpp"
#include "report/json_report.hpp"
#include "report/keys_doc.hpp"
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

profile::Store make_store(const Globals& g) {
    profile::StoreOptions o;
    std::vector<std::filesystem::path> dirs(g.profiles_dirs.begin(), g.profiles_dirs.end());
    o.search_path = profile::default_search_path(dirs);
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

int cmd_audit(const Globals& g, const AuditArgs& a) {
    auto facts = load_facts(g);
    if (!facts) return report_error(facts.error());
    auto store = make_store(g);
    auto backend = NetlinkBackend::open();
    if (!backend) return report_error(backend.error());
    AuditRequest req;
    req.interfaces = a.interfaces;
    req.include_virtual = a.all;
    if (!a.profile.empty()) req.profile = a.profile;
    auto report = run_audit(**backend, store, *facts, req);
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
    if (profiles_cmd->parsed()) return cmd_profiles(g, profiles_json);
    if (keys_cmd->parsed()) return cmd_keys(keys_json, keys_markdown);
    return kUsage;
}

}  // namespace nictune::ctl
