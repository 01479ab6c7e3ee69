#include "watch/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <utility>

#include "profile/toml.hpp"
#include "profile/toml_util.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace fs = std::filesystem;

namespace {

using tomlutil::did_you_mean;
using tomlutil::in_file_order;
using tomlutil::invalid;
using tomlutil::loc_of;
using tomlutil::store;
using tomlutil::string_value;
using tomlutil::type_name;

Result<std::string> absolute_path(const toml::node& n, const SourceLoc& loc,
                                  std::string_view what) {
    auto s = string_value(n, loc, what);
    if (!s) return s;
    if (!s->starts_with('/'))
        return invalid(loc, std::string(what) + ": " + quote(*s) + " is not an absolute path");
    return s;
}

bool all_hex(std::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// "aa:bb:cc:dd:ee:ff", any case.
bool is_mac(std::string_view s) {
    if (s.size() != 17) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i % 3 == 2 ? s[i] != ':' : !std::isxdigit(static_cast<unsigned char>(s[i])))
            return false;
    }
    return true;
}

// "bb:dd.f": bus, device (0..1f), function (0..7).
bool is_pci_bdf(std::string_view s) {
    if (s.size() != 7 || s[2] != ':' || s[5] != '.') return false;
    if (!all_hex(s.substr(0, 2)) || !all_hex(s.substr(3, 2))) return false;
    if (s[3] > '1') return false;
    return s[6] >= '0' && s[6] <= '7';
}

// "dddd:bb:dd.f", any case.
bool is_pci_address(std::string_view s) {
    return s.size() == 12 && all_hex(s.substr(0, 4)) && s[4] == ':' && is_pci_bdf(s.substr(5));
}

bool same_ci(std::string_view a, std::string_view b) {
    return a.size() == b.size() && to_lower(a) == to_lower(b);
}

// One parser per [[bind]] key; the table also gives the did-you-mean names.
using BindParser = Result<void> (*)(const toml::node&, const SourceLoc&, Binding&);

Result<void> bind_profile(const toml::node& v, const SourceLoc& loc, Binding& b) {
    auto s = string_value(v, loc, "bind.profile");
    if (!s) return std::unexpected(s.error());
    if (auto ok = profile::validate_name(*s); !ok) return invalid(loc, ok.error().message);
    b.profile = *s;
    b.profile_loc = loc;
    return {};
}

Result<void> bind_enforce(const toml::node& v, const SourceLoc& loc, Binding& b) {
    auto flag = v.as_boolean();
    if (!flag)
        return invalid(loc,
                       std::string("bind.enforce: expected true or false, got ") + type_name(v));
    b.enforce = flag->get();
    return {};
}

// A name or glob in nictune's text form (a byte that is not printable UTF-8,
// and the backslash, as \xhh), matched against names and alternative names.
Result<void> bind_interface(const toml::node& v, const SourceLoc& loc, Binding& b) {
    auto s = string_value(v, loc, "bind.interface");
    if (!s) return std::unexpected(s.error());
    if (auto bytes = unescape_name(*s); !bytes)
        return invalid(loc, "bind.interface: " + bytes.error().message);
    if (!valid_name_or_altname(*s))
        return invalid(loc, "bind.interface: " + quote(*s) +
                                " is not an interface name or glob (1 to 127 bytes, no '/' or "
                                "whitespace)");
    b.interface = *s;
    return {};
}

Result<void> bind_mac(const toml::node& v, const SourceLoc& loc, Binding& b) {
    auto s = string_value(v, loc, "bind.mac");
    if (!s) return std::unexpected(s.error());
    if (!is_mac(*s))
        return invalid(loc, "bind.mac: " + quote(*s) +
                                " is not a MAC address (expected six hex pairs like "
                                "90:e2:ba:00:00:01)");
    b.mac = to_lower(*s);
    return {};
}

Result<void> bind_pci(const toml::node& v, const SourceLoc& loc, Binding& b) {
    auto s = string_value(v, loc, "bind.pci");
    if (!s) return std::unexpected(s.error());
    if (!is_pci_address(*s)) {
        // lspci prints addresses without the domain by default.
        std::string hint = is_pci_bdf(*s) ? "; did you mean '0000:" + to_lower(*s) + "'?" : "";
        return invalid(loc, "bind.pci: " + quote(*s) +
                                " is not a PCI address (expected domain:bus:device.function like "
                                "0000:03:00.0)" +
                                hint);
    }
    b.pci = to_lower(*s);
    return {};
}

Result<void> bind_driver(const toml::node& v, const SourceLoc& loc, Binding& b) {
    auto s = string_value(v, loc, "bind.driver");
    if (!s) return std::unexpected(s.error());
    if (s->empty()) return invalid(loc, "bind.driver: must not be empty");
    if (s->find('/') != std::string::npos)
        return invalid(loc, "bind.driver: " + quote(*s) + " is not a driver name (contains '/')");
    b.driver = *s;
    return {};
}

// An address or a host name, as `nictunectl probe` takes it: resolved only
// by nictunectl in nictune-verify@.service, never by nictuned.
Result<void> bind_verify_peer(const toml::node& v, const SourceLoc& loc, Binding& b) {
    auto s = string_value(v, loc, "bind.verify_peer");
    if (!s) return std::unexpected(s.error());
    const bool ok = !s->empty() && s->size() <= 255 && std::ranges::all_of(*s, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
               c == '_' || c == '%';
    });
    if (!ok)
        return invalid(loc, "bind.verify_peer: " + quote(*s) +
                                " is not an address or a host name (e.g. \"10.0.0.2\", "
                                "\"fe80::2%p4p1\", \"peer-b\")");
    b.verify_peer = *s;
    return {};
}

Result<void> bind_min_gbps(const toml::node& v, const SourceLoc& loc, Binding& b) {
    std::optional<double> x;
    if (auto f = v.as_floating_point()) x = f->get();
    if (auto i = v.as_integer()) x = static_cast<double>(i->get());
    if (!x)
        return invalid(loc, std::string("bind.min_gbps: expected a number, got ") + type_name(v));
    if (!(*x > 0 && *x <= 10000))
        return invalid(loc, "bind.min_gbps: must be more than 0 and at most 10000 (Gbit/s)");
    b.min_gbps = *x;
    return {};
}

// 1..3600 seconds, a whole number.
Result<uint32_t> seconds(const toml::node& v, const SourceLoc& loc, std::string_view what) {
    auto i = v.as_integer();
    if (!i) return invalid(loc, std::string(what) + ": expected seconds, got " + type_name(v));
    if (i->get() < 1 || i->get() > 3600)
        return invalid(loc, std::string(what) + ": must be 1..3600 seconds");
    return static_cast<uint32_t>(i->get());
}

using BindKey = tomlutil::KeyRow<BindParser>;

constexpr BindKey kBindKeys[] = {
    {"profile", bind_profile},
    {"enforce", bind_enforce},
    {"interface", bind_interface},
    {"mac", bind_mac},
    {"pci", bind_pci},
    {"driver", bind_driver},
    {"verify_peer", bind_verify_peer},
    {"min_gbps", bind_min_gbps},
    {"confirm_timeout",
     [](const toml::node& v, const SourceLoc& loc, Binding& b) {
         return store(seconds(v, loc, "bind.confirm_timeout"), b.confirm_timeout);
     }},
};

using DaemonParser = Result<void> (*)(const toml::node&, const SourceLoc&, const std::string& file,
                                      DaemonConfig&);

Result<void> daemon_profiles_dirs(const toml::node& v, const SourceLoc& loc,
                                  const std::string& file, DaemonConfig& cfg) {
    constexpr std::string_view what = "daemon.profiles_dirs";
    std::vector<std::string> dirs;
    if (auto arr = v.as_array()) {
        for (const auto& el : *arr) {
            const SourceLoc eloc = loc_of(el.source(), file);
            if (!el.is_string())
                return invalid(eloc, std::string(what) + ": expected strings in the array, got " +
                                         type_name(el));
            auto p = absolute_path(el, eloc, what);
            if (!p) return std::unexpected(p.error());
            dirs.push_back(std::move(*p));
        }
    } else if (v.is_string()) {
        auto p = absolute_path(v, loc, what);
        if (!p) return std::unexpected(p.error());
        dirs.push_back(std::move(*p));
    } else {
        return invalid(loc, std::string(what) + ": expected a string or an array of strings, got " +
                                type_name(v));
    }
    cfg.profiles_dirs = std::move(dirs);
    return {};
}

Result<void> daemon_metrics_dir(const toml::node& v, const SourceLoc& loc, const std::string&,
                                DaemonConfig& cfg) {
    // "" turns the metrics off; anything else is a directory.
    if (auto str = v.as_string(); str && str->get().empty()) {
        cfg.metrics_dir = "";
        return {};
    }
    return store(absolute_path(v, loc, "daemon.metrics_dir"), cfg.metrics_dir);
}

using DaemonKey = tomlutil::KeyRow<DaemonParser>;

constexpr DaemonKey kDaemonKeys[] = {
    {"profiles_dirs", daemon_profiles_dirs},
    {"state_dir",
     [](const toml::node& v, const SourceLoc& loc, const std::string&, DaemonConfig& cfg) {
         return store(absolute_path(v, loc, "daemon.state_dir"), cfg.state_dir);
     }},
    {"metrics_dir", daemon_metrics_dir},
    {"placement_check_interval",
     [](const toml::node& v, const SourceLoc& loc, const std::string&, DaemonConfig& cfg) {
         return store(seconds(v, loc, "daemon.placement_check_interval"),
                      cfg.placement_check_interval);
     }},
};

constexpr std::string_view kSections[] = {"daemon", "bind"};

Result<void> parse_daemon(const toml::table& t, const std::string& file, DaemonConfig& cfg) {
    return tomlutil::for_each_key(t, file, kDaemonKeys, "[daemon]",
                                  [&](const DaemonKey& row, const toml::key&, const toml::node& v) {
                                      return row.parse(v, loc_of(v.source(), file), file, cfg);
                                  });
}

Result<Binding> parse_binding(const toml::table& t, const std::string& file) {
    Binding b;
    b.loc = loc_of(t.source(), file);
    std::optional<SourceLoc> check_key;  // where min_gbps or confirm_timeout was
    auto keys = tomlutil::for_each_key(
        t, file, kBindKeys, "[[bind]]",
        [&](const BindKey& row, const toml::key& k, const toml::node& v) {
            if ((row.name == "min_gbps" || row.name == "confirm_timeout") && !check_key)
                check_key = loc_of(k.source(), file);
            return row.parse(v, loc_of(v.source(), file), b);
        });
    if (!keys) return std::unexpected(keys.error());
    if (b.profile.empty()) return invalid(b.loc, "[[bind]] has no profile");
    if (check_key && !b.verify_peer)
        return invalid(*check_key,
                       "min_gbps and confirm_timeout belong to a peer check: add verify_peer");
    if (!b.interface && !b.mac && !b.pci && !b.driver)
        return invalid(b.loc, "[[bind]] for profile " + quote(b.profile) +
                                  " needs at least one of interface, mac, pci or driver to match");
    return b;
}

Result<void> parse_bindings(const toml::node& v, const SourceLoc& vloc, const std::string& file,
                            DaemonConfig& cfg) {
    if (v.is_table())
        return invalid(vloc,
                       "bindings are written [[bind]] (one array entry per binding), not [bind]");
    auto arr = v.as_array();
    if (!arr)
        return invalid(
            vloc, std::string("'bind' must be an array of tables ([[bind]]), not ") + type_name(v));
    for (const auto& el : *arr) {
        auto t = el.as_table();
        if (!t)
            return invalid(loc_of(el.source(), file),
                           std::string("bind: expected tables in the array, got ") + type_name(el));
        auto b = parse_binding(*t, file);
        if (!b) return std::unexpected(b.error());
        cfg.bindings.push_back(std::move(*b));
    }
    return {};
}

}  // namespace

std::vector<std::string_view> config_keys(std::string_view section) {
    if (section == "daemon") return tomlutil::row_names(kDaemonKeys);
    if (section == "bind") return tomlutil::row_names(kBindKeys);
    return {};
}

bool Binding::matches(const Identity& id) const {
    // A binding that names nothing must not silently claim every NIC
    // (parse_config never produces one; hand-built ones could).
    if (!interface && !mac && !pci && !driver) return false;
    // The kernel resolves a name and an alternative name alike, and so does
    // a binding (systemd gives NICs alternative names from their path).
    if (interface && !glob_match(*interface, id.name) &&
        std::ranges::none_of(id.altnames,
                             [&](const std::string& alt) { return glob_match(*interface, alt); }))
        return false;
    if (mac && !same_ci(*mac, id.mac) && !(id.perm_mac && same_ci(*mac, *id.perm_mac)))
        return false;
    if (pci && !(id.pci_slot && same_ci(*pci, *id.pci_slot)) &&
        !(id.bus_info && same_ci(*pci, *id.bus_info)))
        return false;
    if (driver && id.driver != *driver) return false;
    return true;
}

std::string Binding::describe() const {
    std::vector<std::string> parts;
    if (interface) parts.push_back("interface " + *interface);
    if (mac) parts.push_back("mac " + *mac);
    if (pci) parts.push_back("pci " + *pci);
    if (driver) parts.push_back("driver " + *driver);
    std::string out = join(parts, " ") + " -> " + profile;
    if (enforce) out += " (enforce)";
    if (verify_peer) out += " (verify peer " + *verify_peer + ")";
    return out;
}

const Binding* DaemonConfig::binding_for(const Identity& id) const {
    auto it = std::find_if(bindings.begin(), bindings.end(),
                           [&](const Binding& b) { return b.matches(id); });
    return it == bindings.end() ? nullptr : &*it;
}

Result<DaemonConfig> parse_config(std::string_view text, const std::string& file) {
    auto doc = tomlutil::parse_document(text, file, "configuration file");
    if (!doc) return std::unexpected(std::move(doc.error()));
    const toml::table& root = *doc;

    DaemonConfig cfg;
    cfg.file = file;
    for (const auto& [k, v] : in_file_order(root)) {
        const std::string name(k->str());
        const SourceLoc kloc = loc_of(k->source(), file);
        const SourceLoc vloc = loc_of(v->source(), file);
        if (name == "daemon") {
            auto t = v->as_table();
            if (!t)
                return invalid(vloc, std::string("'daemon' must be a section ([daemon]), not ") +
                                         type_name(*v));
            if (auto r = parse_daemon(*t, file, cfg); !r) return std::unexpected(r.error());
        } else if (name == "bind") {
            if (auto r = parse_bindings(*v, vloc, file, cfg); !r) return std::unexpected(r.error());
        } else {
            const std::vector<std::string_view> sections(std::begin(kSections),
                                                         std::end(kSections));
            std::string what = "key " + quote(name);
            if (v->is_table())
                what = "section [" + name + "]";
            else if (v->is_array_of_tables())
                what = "section [[" + name + "]]";
            return invalid(kloc, "unknown " + what + did_you_mean(name, sections));
        }
    }
    return cfg;
}

Result<DaemonConfig> load_config(const fs::path& path, bool require_root_owned) {
    auto text = profile::read_trusted_file(path, require_root_owned);
    if (!text) {
        if (text.error().sys_errno != ENOENT) return std::unexpected(text.error());
        // A symlink whose target is gone is a broken installation, not an
        // absent configuration.
        std::error_code ec;
        if (fs::is_symlink(fs::symlink_status(path, ec)))
            return fail(Errc::InvalidProfile, path.string(), "symbolic link to a missing file");
        DaemonConfig empty;
        empty.file = path;
        return empty;
    }
    return parse_config(*text, path.string());
}

std::filesystem::path state_dir_for(const std::optional<std::filesystem::path>& override,
                                    const Result<DaemonConfig>& config) {
    if (override) return *override;
    if (config && config->state_dir) return *config->state_dir;
    return kDefaultStateDir;
}

Result<void> validate_bindings(const DaemonConfig& cfg, const profile::Store& store) {
    for (const auto& b : cfg.bindings) {
        auto p = store.load(b.profile);
        if (p) continue;
        Error e = p.error();
        e.context = b.profile_loc.str();
        e.message = "profile " + quote(b.profile) + ": " + p.error().str();
        e.kernel_message.clear();
        return std::unexpected(std::move(e));
    }
    return {};
}

}  // namespace nictune
