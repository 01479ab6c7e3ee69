#include "profile/loader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <limits>
#include <set>

#include "model/cpulist.hpp"
#include "model/rss.hpp"
#include "profile/features.hpp"
#include "profile/toml.hpp"
#include "profile/toml_util.hpp"
#include "util/strings.hpp"
#include "util/unique_fd.hpp"

namespace nictune::profile {
namespace fs = std::filesystem;

namespace {

using tomlutil::did_you_mean;
using tomlutil::invalid;
using tomlutil::loc_of;
using tomlutil::string_value;
using tomlutil::type_name;

std::vector<std::string_view> section_names() {
    std::vector<std::string_view> out;
    for (const auto& s : sections())
        out.push_back(s.name);
    return out;
}

std::vector<std::string_view> key_names(Section s) {
    std::vector<std::string_view> out;
    for (const auto& k : device_keys())
        if (k.section == s) out.push_back(k.name);
    for (const auto& m : meta_keys())
        if (m.section == s && !m.name.starts_with('<')) out.push_back(m.name);
    return out;
}

// An error about a key's value names that key ("link.mtu") as its setting.
Error about_key(Error e, const std::string& what) {
    if (e.setting.empty()) e.setting = what;
    return e;
}

std::unexpected<Error> invalid_setting(const SourceLoc& loc, const std::string& what,
                                       std::string message) {
    return std::unexpected(about_key(invalid(loc, std::move(message)).error(), what));
}

// A string or an array of strings.
Result<std::vector<std::string>> string_list(const toml::node& n, const SourceLoc& loc,
                                             std::string_view what) {
    std::vector<std::string> out;
    if (auto s = n.as_string()) {
        out.push_back(s->get());
        return out;
    }
    if (auto arr = n.as_array()) {
        for (const auto& el : *arr) {
            auto s = el.as_string();
            if (!s)
                return invalid(
                    loc_of(el.source(), loc.file),
                    std::string(what) + ": expected strings in the array, got " + type_name(el));
            out.push_back(s->get());
        }
        return out;
    }
    return invalid(
        loc, std::string(what) + ": expected a string or an array of strings, got " + type_name(n));
}

bool is_hex4(std::string_view s) {
    return s.size() == 4 && std::all_of(s.begin(), s.end(), [](char c) {
               return std::isxdigit(static_cast<unsigned char>(c));
           });
}

Result<Target> device_value(const KeyInfo& info, const toml::node& n, const SourceLoc& loc) {
    const std::string what =
        std::string(section_info(info.section).name) + "." + std::string(info.name);
    switch (info.type) {
        case ValueType::Bool:
            if (auto b = n.as_boolean()) return Target{b->get() ? 1U : 0U, false, loc};
            return invalid(loc, what + ": expected true or false, got " + type_name(n));
        case ValueType::U32: {
            if (auto s = n.as_string()) {
                if (info.accepts_max && s->get() == "max") return Target{0, true, loc};
                return invalid(loc, what + ": expected " +
                                        (info.accepts_max ? "a number or \"max\"" : "a number") +
                                        ", got the string " + quote(s->get()));
            }
            auto i = n.as_integer();
            if (!i)
                return invalid(loc, what + ": expected " +
                                        (info.accepts_max ? "a number or \"max\"" : "a number") +
                                        ", got " + type_name(n));
            int64_t v = i->get();
            if (v < 0 || static_cast<uint64_t>(v) < info.min || static_cast<uint64_t>(v) > info.max)
                return invalid(loc, what + ": " + std::to_string(v) + " is out of range " +
                                        std::to_string(info.min) + ".." + std::to_string(info.max) +
                                        (info.unit.empty() ? "" : " " + std::string(info.unit)));
            return Target{static_cast<uint64_t>(v), false, loc};
        }
        case ValueType::Enum: {
            auto s = n.as_string();
            if (!s) return invalid(loc, what + ": expected a name, got " + type_name(n));
            if (auto v = enum_value(info.key, s->get())) return Target{*v, false, loc};
            return invalid(loc, what + ": unknown value " + quote(s->get()));
        }
        default:
            break;
    }
    return invalid(loc, what + ": unsupported value type");
}

// Sysctl values: a string, an integer, or an array of integers (tcp_rmem).
Result<std::string> sysctl_value(const toml::node& n, const SourceLoc& loc,
                                 const std::string& name) {
    if (auto s = n.as_string()) {
        std::string v = s->get();
        if (v.find('\n') != std::string::npos || v.find('\0') != std::string::npos)
            return invalid(loc, "sysctl." + name + ": value must be one line");
        if (v.size() > 4096)
            return invalid(loc, "sysctl." + name + ": value longer than 4096 bytes");
        return v;
    }
    if (auto i = n.as_integer()) return std::to_string(i->get());
    if (auto b = n.as_boolean()) return std::string(b->get() ? "1" : "0");
    if (auto arr = n.as_array()) {
        std::string out;
        for (const auto& el : *arr) {
            auto i = el.as_integer();
            if (!i)
                return invalid(
                    loc_of(el.source(), loc.file),
                    "sysctl." + name + ": arrays may hold only integers, got " + type_name(el));
            if (!out.empty()) out += ' ';
            out += std::to_string(i->get());
        }
        if (out.empty()) return invalid(loc, "sysctl." + name + ": empty array");
        return out;
    }
    return invalid(loc, "sysctl." + name +
                            ": expected a string, an integer or an array of integers, got " +
                            type_name(n));
}

// A floor: { at_least = N } or { at_least = [N, ...] }, non-negative
// integers only (a floor compares numbers), and no other key.
Result<std::string> sysctl_floor(const toml::table& t, const std::string& file,
                                 const std::string& name) {
    for (auto&& [k, v] : t)
        if (k.str() != "at_least")
            return invalid(loc_of(k.source(), file),
                           "sysctl." + name + ": a value table takes only at_least, got " +
                               quote(std::string(k.str())));
    const toml::node& floor = *t.get("at_least");
    const SourceLoc loc = loc_of(floor.source(), file);
    if (!floor.is_integer() && !floor.is_array())
        return invalid(loc, "sysctl." + name +
                                ".at_least: expected an integer or an array of integers, got " +
                                type_name(floor));
    auto val = sysctl_value(floor, loc, name + ".at_least");
    if (!val) return val;
    if (val->find('-') != std::string::npos)
        return invalid(loc, "sysctl." + name + ".at_least: a floor is not negative, got " + *val);
    return val;
}

// [sysctl] accepts quoted dotted keys ("net.core.rmem_max" = 1) and TOML's
// own dotted keys (net.core.rmem_max = 1), which arrive as nested tables; a
// table with at_least is the floor of the sysctl named so far.
Result<void> collect_sysctls(const toml::table& t, const std::string& prefix,
                             const std::string& file, Profile& out, int depth) {
    if (depth > 8) return invalid(loc_of(t.source(), file), "sysctl: names nest too deep");
    for (auto&& [k, v] : t) {
        std::string name =
            prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        SourceLoc loc = loc_of(k.source(), file);
        const auto* sub = v.as_table();
        if (sub && !sub->contains("at_least")) {
            if (auto r = collect_sysctls(*sub, name, file, out, depth + 1); !r) return r;
            continue;
        }
        if (!sysctl_allowed(name))
            return invalid(loc, "sysctl " + quote(name) +
                                    " is not on nictune's allowlist (net.core.*, net.ipv4.tcp_*, "
                                    "net.ipv4.udp_*, ...)");
        auto val =
            sub ? sysctl_floor(*sub, file, name) : sysctl_value(v, loc_of(v.source(), file), name);
        if (!val) return std::unexpected(about_key(std::move(val.error()), "sysctl." + name));
        out.sysctl.push_back(SysctlRequest{name, *val, loc, sub != nullptr});
    }
    return {};
}

bool valid_tuned_profile_name(std::string_view s) {
    if (s.empty() || s.size() > 128) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
               c == ' ';
    });
}

// [rss] queues = N and [rss.hash] FLOW = "fields".
Result<void> parse_rss_hash(const toml::table& t, const std::string& file, Profile& out) {
    std::vector<std::string_view> flows;
    for (const auto& f : rss_flow_types()) {
        flows.push_back(f.name);
        if (!f.alias.empty()) flows.push_back(f.alias);
    }
    for (const auto& [kp, vp] : tomlutil::in_file_order(t)) {
        const std::string key(kp->str());
        const SourceLoc kloc = loc_of(kp->source(), file);
        const SourceLoc vloc = loc_of(vp->source(), file);
        const RssFlowType* flow = find_rss_flow_type(key);
        if (!flow)
            return invalid(kloc, "rss.hash: unknown flow type " + quote(key) +
                                     " (ethtool's: tcp4 udp4 sctp4 ah4 esp4 tcp6 udp6 sctp6 ah6 "
                                     "esp6 ether)" +
                                     did_you_mean(key, flows));
        const std::string what = "rss.hash." + key;
        auto text = string_value(*vp, vloc, what);
        if (!text) return std::unexpected(text.error());
        auto bits = text->starts_with("0x") ? std::nullopt : parse_rss_hash_fields(*text);
        if (!bits || *bits == 0)
            return invalid(vloc, what + ": " + quote(*text) +
                                     " is not a set of ethtool's hash field letters (m v t s d f "
                                     "n r, each once, e.g. \"sdfn\")");
        auto same = std::find_if(out.rss_hash.begin(), out.rss_hash.end(),
                                 [&](const RssHashRequest& r) { return r.flow == flow->name; });
        if (same != out.rss_hash.end())
            return invalid(kloc, what + ": " + std::string(flow->name) + " and " +
                                     std::string(flow->alias) + " are one flow type (given at " +
                                     same->loc.str() + ")");
        out.rss_hash.push_back(RssHashRequest{std::string(flow->name), *bits, vloc});
    }
    return {};
}

// ---- The sections with a fixed set of keys other than the device values:
// one parser per key, in one table per section (as nictune.toml's reader).

// One `key = value` of such a section.
struct KeyValue {
    const toml::node& v;
    SourceLoc kloc, vloc;  // of the key, of the value
    const std::string& file;
    const std::string& what;  // "section.key", for messages
};
using ProfileKey = tomlutil::KeyRow<Result<void> (*)(const KeyValue&, Profile&)>;

// Keys kept as written: a string (string_into), a string or an array of
// strings (list_into).
template <class Into>
Result<void> string_into(const KeyValue& kv, Into& into) {
    return tomlutil::store(string_value(kv.v, kv.vloc, kv.what), into);
}

Result<void> list_into(const KeyValue& kv, std::vector<std::string>& into) {
    return tomlutil::store(string_list(kv.v, kv.vloc, kv.what), into);
}

// [profile]
Result<void> profile_include(const KeyValue& kv, Profile& out) {
    auto l = string_list(kv.v, kv.vloc, kv.what);
    if (!l) return std::unexpected(l.error());
    for (const auto& inc : *l)
        if (auto ok = validate_name(inc); !ok)
            return invalid(kv.vloc, kv.what + ": " + ok.error().message);
    out.includes = *l;
    out.include_loc = kv.vloc;
    return {};
}

Result<void> profile_priority(const KeyValue& kv, Profile& out) {
    auto i = kv.v.as_integer();
    if (!i) return invalid(kv.vloc, kv.what + ": expected a number, got " + type_name(kv.v));
    if (i->get() < 0 || i->get() > 1000)
        return invalid(kv.vloc,
                       kv.what + ": " + std::to_string(i->get()) + " is out of range 0..1000");
    out.priority = static_cast<uint32_t>(i->get());
    return {};
}

// [match]
Result<void> match_pci_ids(const KeyValue& kv, Profile& out) {
    auto l = string_list(kv.v, kv.vloc, kv.what);
    if (!l) return std::unexpected(l.error());
    for (auto& id : *l) {
        id = to_lower(id);
        if (id.size() != 9 || id[4] != ':' || !is_hex4(std::string_view(id).substr(0, 4)) ||
            !is_hex4(std::string_view(id).substr(5)))
            return invalid(
                kv.vloc, kv.what + ": " + quote(id) + " is not a PCI id of the form \"8086:10fb\"");
    }
    out.match.pci_ids = *l;
    return {};
}

// Globs in nictune's text form (docs/names.md), as bindings take them: a
// pattern no name can have is an error here, not a profile that silently
// never matches.
Result<void> match_interfaces(const KeyValue& kv, Profile& out) {
    auto l = string_list(kv.v, kv.vloc, kv.what);
    if (!l) return std::unexpected(l.error());
    for (std::size_t i = 0; i < l->size(); ++i) {
        const auto& g = (*l)[i];
        const auto* arr = kv.v.as_array();
        const SourceLoc gloc =
            arr && i < arr->size() ? loc_of((*arr)[i].source(), kv.file) : kv.vloc;
        if (auto bytes = unescape_name(g); !bytes)
            return invalid(gloc, kv.what + ": " + bytes.error().message);
        if (!valid_name_or_altname(g))
            return invalid(gloc, kv.what + ": " + quote(g) +
                                     " is not an interface name or glob (1 to 127 bytes, no '/' "
                                     "or whitespace)");
    }
    out.match.interfaces = *l;
    return {};
}

// [tuned]
Result<void> tuned_profile(const KeyValue& kv, Profile& out) {
    auto s = string_value(kv.v, kv.vloc, kv.what);
    if (!s) return std::unexpected(s.error());
    if (!valid_tuned_profile_name(*s))
        return invalid(kv.vloc, kv.what + ": " + quote(*s) + " is not a tuned profile name");
    out.tuned_profile = *s;
    out.tuned_loc = kv.vloc;
    return {};
}

// [rps] cpus / flow_cnt, [xps] cpus / policy: a CPU list for every queue.
Result<void> steering_cpus(const KeyValue& kv, std::optional<CpusRequest>& into) {
    auto text = string_value(kv.v, kv.vloc, kv.what);
    if (!text) return std::unexpected(text.error());
    if (into) return invalid(kv.kloc, "xps: give cpus or policy, not both");
    auto cpus = parse_cpulist(*text);
    if (!cpus)
        return invalid(kv.vloc, kv.what + ": " + quote(*text) +
                                    " is not a CPU list (\"0-3,8\", as in smp_affinity_list)");
    into = CpusRequest{std::move(*cpus), kv.vloc};
    return {};
}

Result<void> rps_cpus(const KeyValue& kv, Profile& out) {
    return steering_cpus(kv, out.rps_cpus);
}

Result<void> rps_flow_cnt(const KeyValue& kv, Profile& out) {
    auto i = kv.v.as_integer();
    if (!i) return invalid(kv.vloc, kv.what + ": expected a number, got " + type_name(kv.v));
    const int64_t n = i->get();
    // The kernel rounds a count up to a power of two (store_rps_dev_flow_table_cnt)
    // and reads back the rounded one: asking for that one keeps verify exact.
    if (n < 0 || n > (int64_t{1} << 30) || (n & (n - 1)) != 0)
        return invalid(kv.vloc, kv.what + ": " + std::to_string(n) +
                                    " must be 0 or a power of two up to 1073741824 (the kernel "
                                    "rounds other counts up)");
    out.rps_flow_cnt = Target{static_cast<uint64_t>(n), false, kv.vloc};
    return {};
}

Result<void> xps_cpus(const KeyValue& kv, Profile& out) {
    return steering_cpus(kv, out.xps_cpus);
}

Result<void> xps_policy(const KeyValue& kv, Profile& out) {
    auto text = string_value(kv.v, kv.vloc, kv.what);
    if (!text) return std::unexpected(text.error());
    if (out.xps_cpus) return invalid(kv.kloc, "xps: give cpus or policy, not both");
    if (*text != "off")
        return invalid(kv.vloc, kv.what + ": " + quote(*text) + " is not a policy (\"off\")");
    out.xps_cpus = CpusRequest{{}, kv.vloc};
    return {};
}

// [rss] queues = N and [rss.hash] FLOW = "fields".
Result<void> rss_queues(const KeyValue& kv, Profile& out) {
    auto i = kv.v.as_integer();
    if (!i)
        return invalid(kv.vloc,
                       "rss.queues: expected a number, got " + std::string(type_name(kv.v)));
    // The kernel's ring indices are u32; no NIC has more than a few
    // hundred queues, and ethtool_rxfh tables hold at most a few thousand.
    if (i->get() < 1 || i->get() > 65536)
        return invalid(kv.vloc,
                       "rss.queues: " + std::to_string(i->get()) + " is out of range 1..65536");
    out.rss_queues = Target{static_cast<uint64_t>(i->get()), false, kv.vloc};
    return {};
}

Result<void> rss_hash(const KeyValue& kv, Profile& out) {
    auto t = kv.v.as_table();
    if (!t)
        return invalid(kv.vloc, "rss.hash: expected a table ([rss.hash] tcp4 = \"sdfn\"), got " +
                                    std::string(type_name(kv.v)));
    return parse_rss_hash(*t, kv.file, out);
}

// [irq] policy = "local" | "all", or cpus = "LIST".
Result<void> irq_policy(const KeyValue& kv, Profile& out) {
    auto text = string_value(kv.v, kv.vloc, kv.what);
    if (!text) return std::unexpected(text.error());
    if (out.irq) return invalid(kv.kloc, "irq: give policy or cpus, not both");
    if (*text != "local" && *text != "all")
        return invalid(kv.vloc,
                       kv.what + ": " + quote(*text) + " is not a policy (\"local\", \"all\")");
    out.irq = IrqRequest{
        *text == "local" ? IrqRequest::Policy::Local : IrqRequest::Policy::All, {}, kv.vloc};
    return {};
}

Result<void> irq_cpus(const KeyValue& kv, Profile& out) {
    auto text = string_value(kv.v, kv.vloc, kv.what);
    if (!text) return std::unexpected(text.error());
    if (out.irq) return invalid(kv.kloc, "irq: give policy or cpus, not both");
    auto cpus = parse_cpulist(*text);
    if (!cpus || cpus->empty())
        return invalid(kv.vloc, kv.what + ": " + quote(*text) +
                                    " is not a CPU list (\"0-3,8\", as in smp_affinity_list; an "
                                    "IRQ needs at least one CPU)");
    out.irq = IrqRequest{IrqRequest::Policy::Cpus, std::move(*cpus), kv.vloc};
    return {};
}

// In the order of the schema's meta keys (model/schema.cpp), which document
// them; a unit test holds the two to the same names.
constexpr ProfileKey kProfileKeys[] = {
    {"description",
     [](const KeyValue& kv, Profile& out) { return string_into(kv, out.description); }},
    {"include", profile_include},
    {"priority", profile_priority},
};
constexpr ProfileKey kMatchKeys[] = {
    {"drivers", [](const KeyValue& kv, Profile& out) { return list_into(kv, out.match.drivers); }},
    {"pci_ids", match_pci_ids},
    {"interfaces", match_interfaces},
};
constexpr ProfileKey kDriverKeys[] = {
    {"min_version",
     [](const KeyValue& kv, Profile& out) { return string_into(kv, out.driver.min_version); }},
    {"bad_versions",
     [](const KeyValue& kv, Profile& out) { return list_into(kv, out.driver.bad_versions); }},
};
constexpr ProfileKey kTunedKeys[] = {{"profile", tuned_profile}};
constexpr ProfileKey kRpsKeys[] = {{"cpus", rps_cpus}, {"flow_cnt", rps_flow_cnt}};
constexpr ProfileKey kXpsKeys[] = {{"cpus", xps_cpus}, {"policy", xps_policy}};
constexpr ProfileKey kRssKeys[] = {{"queues", rss_queues}, {"hash", rss_hash}};
constexpr ProfileKey kIrqKeys[] = {{"policy", irq_policy}, {"cpus", irq_cpus}};

struct SectionKeys {
    Section section;
    std::span<const ProfileKey> keys;
};
constexpr SectionKeys kKeyedSections[] = {
    {Section::Profile, kProfileKeys}, {Section::Match, kMatchKeys}, {Section::Driver, kDriverKeys},
    {Section::Tuned, kTunedKeys},     {Section::Rps, kRpsKeys},     {Section::Xps, kXpsKeys},
    {Section::Rss, kRssKeys},         {Section::Irq, kIrqKeys},
};

const std::span<const ProfileKey>* keys_of(Section sec) {
    const SectionKeys* s =
        find_first(kKeyedSections, [&](const SectionKeys& k) { return k.section == sec; });
    return s ? &s->keys : nullptr;
}

// [features]: kernel feature names and ethtool's aliases.
Result<void> parse_feature(const std::string& key, const toml::node& v, const SourceLoc& kloc,
                           const SourceLoc& vloc, const ParseOptions& opts, Profile& out) {
    if (!features::is_valid_name(key, opts.runtime_features)) {
        std::vector<std::string_view> names(features::known_kernel_names().begin(),
                                            features::known_kernel_names().end());
        for (const auto& a : features::aliases())
            names.push_back(a.short_name);
        return invalid(kloc, "unknown feature " + quote(key) + did_you_mean(key, names));
    }
    const std::string what = "features." + key;
    auto b = v.as_boolean();
    if (!b)
        return invalid_setting(vloc, what, what + ": expected true or false, got " + type_name(v));
    if (std::ranges::find(out.features, key, &FeatureRequest::name) != out.features.end())
        return invalid_setting(kloc, what, what + " is given twice");
    out.features.push_back(FeatureRequest{key, b->get(), kloc});
    return {};
}

// [private_flags]: names are the driver's (ETH_SS_PRIV_FLAGS); which exist
// is known only on the device, where the plan checks them.
Result<void> parse_private_flag(const std::string& key, const toml::node& v, const SourceLoc& kloc,
                                const SourceLoc& vloc, Profile& out) {
    if (key.empty() || key.size() > 31 || std::any_of(key.begin(), key.end(), [](char c) {
            return static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\\';
        }))
        return invalid(kloc, "private_flags: " + quote(key) +
                                 " is not a private flag name (1 to 31 printable bytes, "
                                 "as the kernel's ETH_GSTRING_LEN allows)");
    const std::string what = "private_flags." + key;
    auto b = v.as_boolean();
    if (!b)
        return invalid_setting(vloc, what, what + ": expected true or false, got " + type_name(v));
    out.private_flags.push_back(PrivateFlagRequest{key, b->get(), kloc});
    return {};
}

// The device sections' keys: the schema's table.
Result<void> parse_device_key(Section sec, const std::string& key, const toml::node& v,
                              const SourceLoc& kloc, const SourceLoc& vloc, Profile& out) {
    const std::string sname(section_info(sec).name);
    auto dk = find_key(sec, key);
    if (!dk)
        return invalid(kloc, "unknown key " + quote(key) + " in [" + sname + "]" +
                                 did_you_mean(key, key_names(sec)));
    const std::string what = sname + "." + key;
    const auto& info = key_info(*dk);
    if (!info.writable)
        return invalid_setting(
            kloc, what, what + " is read-only: the device reports it, a profile cannot set it");
    auto val = device_value(info, v, vloc);
    if (!val) return std::unexpected(about_key(std::move(val.error()), what));
    out.settings[key_index(*dk)] = *val;
    return {};
}

Result<void> parse_section(Section sec, const toml::table& t, const std::string& file,
                           const ParseOptions& opts, Profile& out) {
    const auto& sinfo = section_info(sec);
    const std::string sname(sinfo.name);
    if (sec == Section::Sysctl) return collect_sysctls(t, "", file, out, 0);
    if (const auto* keys = keys_of(sec))
        return tomlutil::for_each_key(
            t, file, *keys, "[" + sname + "]",
            [&](const ProfileKey& row, const toml::key& k, const toml::node& v) -> Result<void> {
                const std::string what = sname + "." + std::string(k.str());
                auto r = row.parse(
                    KeyValue{v, loc_of(k.source(), file), loc_of(v.source(), file), file, what},
                    out);
                if (!r) return std::unexpected(about_key(std::move(r.error()), what));
                return r;
            });

    for (const auto& [kp, vp] : tomlutil::in_file_order(t)) {
        const std::string key(kp->str());
        const SourceLoc kloc = loc_of(kp->source(), file);
        const SourceLoc vloc = loc_of(vp->source(), file);
        auto r = sec == Section::Features       ? parse_feature(key, *vp, kloc, vloc, opts, out)
                 : sec == Section::PrivateFlags ? parse_private_flag(key, *vp, kloc, vloc, out)
                                                : parse_device_key(sec, key, *vp, kloc, vloc, out);
        if (!r) return r;
    }
    return {};
}

std::string describe_mode_problem(const struct stat& st) {
    if (st.st_uid != 0) return "owned by uid " + std::to_string(st.st_uid) + ", not root";
    if (st.st_mode & S_IWGRP) return "writable by its group";
    if (st.st_mode & S_IWOTH) return "writable by everyone";
    return {};
}

// "gro = false" and "rx-gro = true" in one profile contradict each other;
// which one wins must not depend on the order of keys.
Result<void> check_feature_overlaps(const Profile& p, const ParseOptions& opts) {
    FeatureNames known(features::known_kernel_names().begin(),
                       features::known_kernel_names().end());
    if (opts.runtime_features)
        for (const auto& n : *opts.runtime_features)
            if (std::find(known.begin(), known.end(), n) == known.end()) known.push_back(n);
    for (std::size_t i = 0; i < p.features.size(); ++i) {
        auto a = features::expand(p.features[i].name, known);
        for (std::size_t j = i + 1; j < p.features.size(); ++j) {
            if (p.features[i].on == p.features[j].on) continue;
            auto b = features::expand(p.features[j].name, known);
            for (const auto& n : a)
                if (std::find(b.begin(), b.end(), n) != b.end())
                    return invalid(p.features[j].loc, "features." + p.features[j].name + " = " +
                                                          (p.features[j].on ? "true" : "false") +
                                                          " contradicts features." +
                                                          p.features[i].name + " = " +
                                                          (p.features[i].on ? "true" : "false") +
                                                          " (both cover " + n + ")");
        }
    }
    return {};
}

}  // namespace

std::vector<std::string_view> section_keys(Section sec) {
    const auto* keys = keys_of(sec);
    return keys ? tomlutil::row_names(*keys) : std::vector<std::string_view>{};
}

Result<Profile> parse(std::string_view text, const std::string& file, const ParseOptions& opts) {
    auto doc = tomlutil::parse_document(text, file, "profile");
    if (!doc) return std::unexpected(std::move(doc.error()));
    const toml::table& root = *doc;
    Profile out;
    out.file = file;
    for (const auto& [kp, vp] : tomlutil::in_file_order(root)) {
        const toml::key& k = *kp;
        const toml::node& v = *vp;
        const std::string name(k.str());
        auto sec = find_section(name);
        if (!sec)
            return invalid(loc_of(k.source(), file),
                           "unknown section [" + name + "]" + did_you_mean(name, section_names()));
        auto t = v.as_table();
        if (!t)
            return invalid(loc_of(k.source(), file), "'" + name + "' must be a section ([" + name +
                                                         "]), not " + type_name(v));
        if (auto r = parse_section(*sec, *t, file, opts, out); !r)
            return std::unexpected(r.error());
    }
    // toml++ iterates tables in key order; make that explicit for sysctls.
    std::sort(out.sysctl.begin(), out.sysctl.end(),
              [](const SysctlRequest& a, const SysctlRequest& b) { return a.name < b.name; });
    if (auto r = check_feature_overlaps(out, opts); !r) return std::unexpected(r.error());
    // An empty profile is almost always a truncated or mistaken file.
    if (out.empty() && out.includes.empty() && !out.driver.min_version &&
        out.driver.bad_versions.empty())
        return invalid(SourceLoc{file, 1, 1},
                       "the profile sets nothing (no settings, includes or driver requirements)");
    return out;
}

Result<void> validate_name(std::string_view name) {
    if (name.empty()) return fail(Errc::InvalidArgument, "", "empty profile name");
    if (name.size() > kMaxNameLength)
        return fail(Errc::InvalidArgument, "",
                    "profile name is " + std::to_string(name.size()) +
                        " characters; the limit is " + std::to_string(kMaxNameLength));
    if (name.find('/') != std::string_view::npos || name.find("..") != std::string_view::npos)
        return fail(Errc::InvalidArgument, "",
                    "profile name " + quote(name) +
                        " looks like a path; profiles are chosen by plain name");
    if (name.front() == '.' || name.front() == '-')
        return fail(Errc::InvalidArgument, "",
                    "profile name " + quote(name) + " must start with a letter or digit");
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
            return fail(Errc::InvalidArgument, "",
                        "profile name " + quote(name) +
                            " may contain only letters, digits, '.', '-' and '_'");
    return {};
}

std::vector<fs::path> default_search_path(const std::vector<fs::path>& extra_dirs) {
    std::vector<fs::path> out = extra_dirs;
    out.emplace_back(NICTUNE_SYSCONFDIR "/profiles");
    out.emplace_back(NICTUNE_DATADIR "/profiles");
    return out;
}

Result<std::string> read_trusted_file(const fs::path& path, bool require_root_owned) {
    const std::string p = path.string();
    const UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) {
        int err = errno;
        if (err == ELOOP) return fail(Errc::InvalidProfile, p, "symbolic link loop");
        auto e = fail_errno(err, p);
        e.error().code = err == ENOENT ? Errc::NoSuchProfile : Errc::InvalidProfile;
        return e;
    }
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) return fail_errno(errno, p, Errc::InvalidProfile);
    if (!S_ISREG(st.st_mode)) return fail(Errc::InvalidProfile, p, "not a regular file");
    if (static_cast<std::size_t>(st.st_size) > kMaxFileSize)
        return fail(Errc::InvalidProfile, p,
                    "file is " + std::to_string(st.st_size) + " bytes; the limit is " +
                        std::to_string(kMaxFileSize));
    if (require_root_owned) {
        if (auto why = describe_mode_problem(st); !why.empty())
            return fail(Errc::InvalidProfile, p,
                        "refusing to load: the file is " + why +
                            " (as root, nictune trusts only files that only root can change)");
        struct stat dst {};
        auto dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
        if (::stat(dir.c_str(), &dst) == 0) {
            if (auto why = describe_mode_problem(dst);
                !why.empty() && !(dst.st_mode & S_ISVTX && dst.st_uid == 0))
                return fail(Errc::InvalidProfile, p,
                            "refusing to load: its directory " + dir.string() + " is " + why +
                                " (as root, nictune trusts only files that only root can change)");
        }
    }
    std::string text;
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
        ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail_errno(errno, p, Errc::InvalidProfile);
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    return text;
}

StoreOptions::StoreOptions() : require_root_owned(geteuid() == 0) {}

Store::Store(StoreOptions opts) : opts_(std::move(opts)) {}

Result<fs::path> Store::find(std::string_view name) const {
    if (auto ok = validate_name(name); !ok) return std::unexpected(ok.error());
    for (const auto& dir : opts_.search_path) {
        fs::path p = dir / (std::string(name) + ".toml");
        std::error_code ec;
        if (fs::exists(fs::symlink_status(p, ec)) || fs::is_symlink(fs::symlink_status(p, ec)))
            return p;
    }
    std::vector<std::string> dirs;
    for (const auto& d : opts_.search_path)
        dirs.push_back(d.string());
    return fail(Errc::NoSuchProfile, "",
                "no profile named " + quote(name) + " in " + join(dirs, ", "));
}

Result<Profile> Store::load(std::string_view name) const {
    std::vector<std::string> stack;
    return load_recursive(name, stack, nullptr);
}

Result<Profile> Store::load_recursive(std::string_view name, std::vector<std::string>& stack,
                                      const SourceLoc* included_from) const {
    auto path = find(name);
    if (!path) {
        if (included_from)
            return fail(Errc::InvalidProfile, included_from->str(),
                        "include " + quote(name) + ": " + path.error().message);
        return std::unexpected(path.error());
    }
    if (std::find(stack.begin(), stack.end(), name) != stack.end()) {
        std::vector<std::string> cycle(std::find(stack.begin(), stack.end(), name), stack.end());
        cycle.emplace_back(name);
        return fail(Errc::InvalidProfile, included_from ? included_from->str() : path->string(),
                    "include cycle: " + join(cycle, " -> "));
    }
    if (stack.size() >= 16)
        return fail(Errc::InvalidProfile, included_from ? included_from->str() : path->string(),
                    "includes nest deeper than 16 profiles");
    auto text = read_trusted_file(*path, opts_.require_root_owned);
    if (!text) return std::unexpected(text.error());
    auto own = parse(*text, path->string(), opts_.parse);
    if (!own) return std::unexpected(own.error());
    own->name = std::string(name);

    stack.emplace_back(name);
    Profile merged;
    for (const auto& inc : own->includes) {
        const SourceLoc& at = own->include_loc;
        auto base = load_recursive(inc, stack, &at);
        if (!base) return std::unexpected(base.error());
        merge_into(merged, *base);
    }
    stack.pop_back();
    merge_into(merged, *own);
    merged.name = own->name;
    merged.file = own->file;
    merged.description = own->description;
    merged.includes = own->includes;
    return merged;
}

namespace {

// Each of `over`'s requests replaces base's of the same name, or is added.
template <class T, class Name>
void merge_named(std::vector<T>& base, const std::vector<T>& over, Name T::*name) {
    for (const auto& x : over) {
        auto it = std::ranges::find(base, x.*name, name);
        if (it != base.end())
            *it = x;
        else
            base.push_back(x);
    }
}

}  // namespace

void merge_into(Profile& base, const Profile& over) {
    for (std::size_t i = 0; i < kKeyCount; ++i)
        if (over.settings[i]) base.settings[i] = over.settings[i];
    merge_named(base.features, over.features, &FeatureRequest::name);
    merge_named(base.sysctl, over.sysctl, &SysctlRequest::name);
    merge_named(base.private_flags, over.private_flags, &PrivateFlagRequest::name);
    if (over.rps_cpus) base.rps_cpus = over.rps_cpus;
    if (over.rps_flow_cnt) base.rps_flow_cnt = over.rps_flow_cnt;
    if (over.xps_cpus) base.xps_cpus = over.xps_cpus;
    // [rss]
    if (over.rss_queues) base.rss_queues = over.rss_queues;
    merge_named(base.rss_hash, over.rss_hash, &RssHashRequest::flow);
    if (over.irq) base.irq = over.irq;
    if (over.tuned_profile) {
        base.tuned_profile = over.tuned_profile;
        base.tuned_loc = over.tuned_loc;
    }
    if (!over.match.empty()) base.match = over.match;
    if (over.driver.min_version) base.driver.min_version = over.driver.min_version;
    for (const auto& v : over.driver.bad_versions)
        if (std::find(base.driver.bad_versions.begin(), base.driver.bad_versions.end(), v) ==
            base.driver.bad_versions.end())
            base.driver.bad_versions.push_back(v);
    if (over.priority) base.priority = over.priority;
    if (!over.description.empty()) base.description = over.description;
    for (const auto& f : over.files)
        base.files.push_back(f);
    if (!over.file.empty() && over.files.empty()) base.files.push_back(over.file);
}

std::vector<ProfileEntry> Store::list() const {
    std::vector<ProfileEntry> out;
    for (const auto& dir : opts_.search_path) {
        std::error_code ec;
        std::vector<fs::path> files;
        for (const auto& de : fs::directory_iterator(dir, ec)) {
            if (de.path().extension() == ".toml") files.push_back(de.path());
        }
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            std::string name = f.stem().string();
            if (!validate_name(name)) continue;
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const ProfileEntry& e) { return e.name == name; });
            if (it != out.end()) {
                it->shadows.push_back(f);
                continue;
            }
            ProfileEntry e;
            e.name = name;
            e.path = f;
            auto p = load(name);
            if (p) {
                e.description = p->description;
                e.profile = std::make_shared<const Profile>(std::move(*p));
            } else {
                e.error = p.error();
            }
            out.push_back(std::move(e));
        }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
}

std::vector<Profile> Store::load_all() const {
    std::vector<Profile> out;
    for (auto& e : list())
        if (e.profile) out.push_back(*e.profile);
    return out;
}

}  // namespace nictune::profile
