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

namespace nictune::profile {
namespace fs = std::filesystem;

namespace {

using tomlutil::did_you_mean;
using tomlutil::invalid;
using tomlutil::loc_of;
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

Result<std::string> string_value(const toml::node& n, const SourceLoc& loc, std::string_view what) {
    if (auto s = n.as_string()) return s->get();
    return invalid(loc, std::string(what) + ": expected a string, got " + type_name(n));
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

// [sysctl] accepts quoted dotted keys ("net.core.rmem_max" = 1) and TOML's
// own dotted keys (net.core.rmem_max = 1), which arrive as nested tables.
Result<void> collect_sysctls(const toml::table& t, const std::string& prefix,
                             const std::string& file, Profile& out, int depth) {
    if (depth > 8) return invalid(loc_of(t.source(), file), "sysctl: names nest too deep");
    for (auto&& [k, v] : t) {
        std::string name =
            prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        SourceLoc loc = loc_of(k.source(), file);
        if (auto sub = v.as_table()) {
            if (auto r = collect_sysctls(*sub, name, file, out, depth + 1); !r) return r;
            continue;
        }
        if (!sysctl_allowed(name))
            return invalid(loc, "sysctl " + quote(name) +
                                    " is not on nictune's allowlist (net.core.*, net.ipv4.tcp_*, "
                                    "net.ipv4.udp_*, ...)");
        auto val = sysctl_value(v, loc_of(v.source(), file), name);
        if (!val) return std::unexpected(val.error());
        out.sysctl.push_back(SysctlRequest{name, *val, loc});
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

// [rps] cpus / flow_cnt, [xps] cpus / policy.
Result<void> parse_steering(Section sec, const std::string& key, const toml::node& v,
                            const SourceLoc& kloc, const SourceLoc& vloc, Profile& out) {
    const std::string sname(section_info(sec).name);
    const std::string what = sname + "." + key;
    if (!find_meta_key(sec, key))
        return invalid(kloc, "unknown key " + quote(key) + " in [" + sname + "]" +
                                 did_you_mean(key, key_names(sec)));
    if (key == "flow_cnt") {
        auto i = v.as_integer();
        if (!i) return invalid(vloc, what + ": expected a number, got " + type_name(v));
        const int64_t n = i->get();
        // The kernel rounds a count up to a power of two (store_rps_dev_flow_table_cnt)
        // and reads back the rounded one: asking for that one keeps verify exact.
        if (n < 0 || n > (int64_t{1} << 30) || (n & (n - 1)) != 0)
            return invalid(vloc, what + ": " + std::to_string(n) +
                                     " must be 0 or a power of two up to 1073741824 (the kernel "
                                     "rounds other counts up)");
        out.rps_flow_cnt = Target{static_cast<uint64_t>(n), false, vloc};
        return {};
    }
    auto text = string_value(v, vloc, what);
    if (!text) return std::unexpected(text.error());
    std::optional<CpusRequest>& into = sec == Section::Rps ? out.rps_cpus : out.xps_cpus;
    if (into) return invalid(kloc, "xps: give cpus or policy, not both");
    if (key == "policy") {
        if (*text != "off")
            return invalid(vloc, what + ": " + quote(*text) + " is not a policy (\"off\")");
        into = CpusRequest{{}, vloc};
        return {};
    }
    auto cpus = parse_cpulist(*text);
    if (!cpus)
        return invalid(vloc, what + ": " + quote(*text) +
                                 " is not a CPU list (\"0-3,8\", as in smp_affinity_list)");
    into = CpusRequest{std::move(*cpus), vloc};
    return {};
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

Result<void> parse_rss(const std::string& key, const toml::node& v, const SourceLoc& kloc,
                       const SourceLoc& vloc, const std::string& file, Profile& out) {
    if (key == "queues") {
        auto i = v.as_integer();
        if (!i)
            return invalid(vloc, "rss.queues: expected a number, got " + std::string(type_name(v)));
        // The kernel's ring indices are u32; no NIC has more than a few
        // hundred queues, and ethtool_rxfh tables hold at most a few thousand.
        if (i->get() < 1 || i->get() > 65536)
            return invalid(vloc,
                           "rss.queues: " + std::to_string(i->get()) + " is out of range 1..65536");
        out.rss_queues = Target{static_cast<uint64_t>(i->get()), false, vloc};
        return {};
    }
    if (key == "hash") {
        auto t = v.as_table();
        if (!t)
            return invalid(vloc, "rss.hash: expected a table ([rss.hash] tcp4 = \"sdfn\"), got " +
                                     std::string(type_name(v)));
        return parse_rss_hash(*t, file, out);
    }
    return invalid(kloc, "unknown key " + quote(key) + " in [rss]" +
                             did_you_mean(key, std::vector<std::string_view>{"queues", "hash"}));
}

// [irq] policy = "local" | "all", or cpus = "LIST".
Result<void> parse_irq(const std::string& key, const toml::node& v, const SourceLoc& kloc,
                       const SourceLoc& vloc, Profile& out) {
    if (!find_meta_key(Section::Irq, key))
        return invalid(kloc, "unknown key " + quote(key) + " in [irq]" +
                                 did_you_mean(key, key_names(Section::Irq)));
    const std::string what = "irq." + key;
    auto text = string_value(v, vloc, what);
    if (!text) return std::unexpected(text.error());
    if (out.irq) return invalid(kloc, "irq: give policy or cpus, not both");
    if (key == "policy") {
        if (*text != "local" && *text != "all")
            return invalid(vloc,
                           what + ": " + quote(*text) + " is not a policy (\"local\", \"all\")");
        out.irq = IrqRequest{
            *text == "local" ? IrqRequest::Policy::Local : IrqRequest::Policy::All, {}, vloc};
        return {};
    }
    auto cpus = parse_cpulist(*text);
    if (!cpus || cpus->empty())
        return invalid(vloc, what + ": " + quote(*text) +
                                 " is not a CPU list (\"0-3,8\", as in smp_affinity_list; an IRQ "
                                 "needs at least one CPU)");
    out.irq = IrqRequest{IrqRequest::Policy::Cpus, std::move(*cpus), vloc};
    return {};
}

Result<void> parse_section(Section sec, const toml::table& t, const std::string& file,
                           const ParseOptions& opts, Profile& out) {
    const auto& sinfo = section_info(sec);
    if (sec == Section::Sysctl) return collect_sysctls(t, "", file, out, 0);

    for (const auto& [kp, vp] : tomlutil::in_file_order(t)) {
        const toml::key& k = *kp;
        const toml::node& v = *vp;
        const std::string key(k.str());
        const SourceLoc kloc = loc_of(k.source(), file);
        const SourceLoc vloc = loc_of(v.source(), file);

        if (sec == Section::Features) {
            if (!features::is_valid_name(key, opts.runtime_features)) {
                std::vector<std::string_view> names(features::known_kernel_names().begin(),
                                                    features::known_kernel_names().end());
                for (const auto& a : features::aliases())
                    names.push_back(a.short_name);
                return invalid(kloc, "unknown feature " + quote(key) + did_you_mean(key, names));
            }
            auto b = v.as_boolean();
            if (!b)
                return invalid(vloc,
                               "features." + key + ": expected true or false, got " + type_name(v));
            auto it = std::find_if(out.features.begin(), out.features.end(),
                                   [&](const FeatureRequest& f) { return f.name == key; });
            if (it != out.features.end())
                return invalid(kloc, "features." + key + " is given twice");
            out.features.push_back(FeatureRequest{key, b->get(), kloc});
            continue;
        }

        if (sec == Section::PrivateFlags) {
            // Names are the driver's (ETH_SS_PRIV_FLAGS): which exist is
            // known only on the device, where the plan checks them.
            if (key.empty() || key.size() > 31 || std::any_of(key.begin(), key.end(), [](char c) {
                    return static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\\';
                }))
                return invalid(kloc, "private_flags: " + quote(key) +
                                         " is not a private flag name (1 to 31 printable bytes, "
                                         "as the kernel's ETH_GSTRING_LEN allows)");
            auto b = v.as_boolean();
            if (!b)
                return invalid(
                    vloc, "private_flags." + key + ": expected true or false, got " + type_name(v));
            out.private_flags.push_back(PrivateFlagRequest{key, b->get(), kloc});
            continue;
        }

        if (sec == Section::Rps || sec == Section::Xps) {
            if (auto r = parse_steering(sec, key, v, kloc, vloc, out); !r) return r;
            continue;
        }

        // [rss]
        if (sec == Section::Rss) {
            if (auto r = parse_rss(key, v, kloc, vloc, file, out); !r) return r;
            continue;
        }

        if (sec == Section::Irq) {
            if (auto r = parse_irq(key, v, kloc, vloc, out); !r) return r;
            continue;
        }

        if (sinfo.device) {
            auto dk = find_key(sec, key);
            if (!dk)
                return invalid(kloc, "unknown key " + quote(key) + " in [" +
                                         std::string(sinfo.name) + "]" +
                                         did_you_mean(key, key_names(sec)));
            const auto& info = key_info(*dk);
            if (!info.writable)
                return invalid(kloc,
                               std::string(sinfo.name) + "." + key +
                                   " is read-only: the device reports it, a profile cannot set it");
            auto val = device_value(info, v, vloc);
            if (!val) return std::unexpected(val.error());
            out.settings[key_index(*dk)] = *val;
            continue;
        }

        const MetaKeyInfo* meta = find_meta_key(sec, key);
        if (!meta)
            return invalid(kloc, "unknown key " + quote(key) + " in [" + std::string(sinfo.name) +
                                     "]" + did_you_mean(key, key_names(sec)));
        const std::string what = std::string(sinfo.name) + "." + key;
        switch (sec) {
            case Section::Profile:
                if (key == "description") {
                    auto s = string_value(v, vloc, what);
                    if (!s) return std::unexpected(s.error());
                    out.description = *s;
                } else if (key == "include") {
                    auto l = string_list(v, vloc, what);
                    if (!l) return std::unexpected(l.error());
                    for (const auto& inc : *l)
                        if (auto ok = validate_name(inc); !ok)
                            return invalid(vloc, what + ": " + ok.error().message);
                    out.includes = *l;
                    out.include_loc = vloc;
                } else if (key == "priority") {
                    auto i = v.as_integer();
                    if (!i) return invalid(vloc, what + ": expected a number, got " + type_name(v));
                    if (i->get() < 0 || i->get() > 1000)
                        return invalid(vloc, what + ": " + std::to_string(i->get()) +
                                                 " is out of range 0..1000");
                    out.priority = static_cast<uint32_t>(i->get());
                }
                break;
            case Section::Match: {
                auto l = string_list(v, vloc, what);
                if (!l) return std::unexpected(l.error());
                if (key == "drivers") {
                    out.match.drivers = *l;
                } else if (key == "pci_ids") {
                    for (auto& id : *l) {
                        id = to_lower(id);
                        if (id.size() != 9 || id[4] != ':' ||
                            !is_hex4(std::string_view(id).substr(0, 4)) ||
                            !is_hex4(std::string_view(id).substr(5)))
                            return invalid(vloc, what + ": " + quote(id) +
                                                     " is not a PCI id of the form \"8086:10fb\"");
                    }
                    out.match.pci_ids = *l;
                } else {
                    // Globs in nictune's text form (docs/names.md), as
                    // bindings take them: a pattern no name can have is an
                    // error here, not a profile that silently never matches.
                    for (std::size_t i = 0; i < l->size(); ++i) {
                        const auto& g = (*l)[i];
                        const auto* arr = v.as_array();
                        const SourceLoc gloc =
                            arr && i < arr->size() ? loc_of((*arr)[i].source(), file) : vloc;
                        if (auto bytes = unescape_name(g); !bytes)
                            return invalid(gloc, what + ": " + bytes.error().message);
                        if (!valid_name_or_altname(g))
                            return invalid(gloc, what + ": " + quote(g) +
                                                     " is not an interface name or glob (1 to 127 "
                                                     "bytes, no '/' or whitespace)");
                    }
                    out.match.interfaces = *l;
                }
                break;
            }
            case Section::Driver:
                if (key == "min_version") {
                    auto s = string_value(v, vloc, what);
                    if (!s) return std::unexpected(s.error());
                    out.driver.min_version = *s;
                } else {
                    auto l = string_list(v, vloc, what);
                    if (!l) return std::unexpected(l.error());
                    out.driver.bad_versions = *l;
                }
                break;
            case Section::Tuned: {
                auto s = string_value(v, vloc, what);
                if (!s) return std::unexpected(s.error());
                if (!valid_tuned_profile_name(*s))
                    return invalid(vloc, what + ": " + quote(*s) + " is not a tuned profile name");
                out.tuned_profile = *s;
                out.tuned_loc = vloc;
                break;
            }
            default:
                break;
        }
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

Result<Profile> parse(std::string_view text, const std::string& file, const ParseOptions& opts) {
    if (text.find('\0') != std::string_view::npos) {
        // toml++ would stop at the NUL; say what the file is instead.
        auto nl = std::count(text.begin(),
                             text.begin() + static_cast<std::ptrdiff_t>(text.find('\0')), '\n');
        return invalid(SourceLoc{file, static_cast<uint32_t>(nl + 1), 1},
                       "file contains a NUL byte: not a text profile");
    }
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(file));
    } catch (const toml::parse_error& e) {
        return invalid(loc_of(e.source(), file), std::string(e.description()));
    }
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
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        int err = errno;
        if (err == ELOOP) return fail(Errc::InvalidProfile, p, "symbolic link loop");
        auto e = fail_errno(err, p);
        e.error().code = err == ENOENT ? Errc::NoSuchProfile : Errc::InvalidProfile;
        return e;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return fail_errno(err, p, Errc::InvalidProfile);
    }
    auto done = [&](Result<std::string> r) {
        ::close(fd);
        return r;
    };
    if (!S_ISREG(st.st_mode)) return done(fail(Errc::InvalidProfile, p, "not a regular file"));
    if (static_cast<std::size_t>(st.st_size) > kMaxFileSize)
        return done(fail(Errc::InvalidProfile, p,
                         "file is " + std::to_string(st.st_size) + " bytes; the limit is " +
                             std::to_string(kMaxFileSize)));
    if (require_root_owned) {
        if (auto why = describe_mode_problem(st); !why.empty())
            return done(
                fail(Errc::InvalidProfile, p,
                     "refusing to load: the file is " + why +
                         " (as root, nictune trusts only files that only root can change)"));
        struct stat dst {};
        auto dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
        if (::stat(dir.c_str(), &dst) == 0) {
            if (auto why = describe_mode_problem(dst);
                !why.empty() && !(dst.st_mode & S_ISVTX && dst.st_uid == 0))
                return done(
                    fail(Errc::InvalidProfile, p,
                         "refusing to load: its directory " + dir.string() + " is " + why +
                             " (as root, nictune trusts only files that only root can change)"));
        }
    }
    std::string text;
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
        ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            return fail_errno(err, p, Errc::InvalidProfile);
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    ::close(fd);
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

void merge_into(Profile& base, const Profile& over) {
    for (std::size_t i = 0; i < kKeyCount; ++i)
        if (over.settings[i]) base.settings[i] = over.settings[i];
    for (const auto& f : over.features) {
        auto it = std::find_if(base.features.begin(), base.features.end(),
                               [&](const FeatureRequest& b) { return b.name == f.name; });
        if (it != base.features.end())
            *it = f;
        else
            base.features.push_back(f);
    }
    for (const auto& s : over.sysctl) {
        auto it = std::find_if(base.sysctl.begin(), base.sysctl.end(),
                               [&](const SysctlRequest& b) { return b.name == s.name; });
        if (it != base.sysctl.end())
            *it = s;
        else
            base.sysctl.push_back(s);
    }
    for (const auto& f : over.private_flags) {
        auto it = std::find_if(base.private_flags.begin(), base.private_flags.end(),
                               [&](const PrivateFlagRequest& b) { return b.name == f.name; });
        if (it != base.private_flags.end())
            *it = f;
        else
            base.private_flags.push_back(f);
    }
    if (over.rps_cpus) base.rps_cpus = over.rps_cpus;
    if (over.rps_flow_cnt) base.rps_flow_cnt = over.rps_flow_cnt;
    if (over.xps_cpus) base.xps_cpus = over.xps_cpus;
    // [rss]
    if (over.rss_queues) base.rss_queues = over.rss_queues;
    for (const auto& h : over.rss_hash) {
        auto it = std::find_if(base.rss_hash.begin(), base.rss_hash.end(),
                               [&](const RssHashRequest& b) { return b.flow == h.flow; });
        if (it != base.rss_hash.end())
            *it = h;
        else
            base.rss_hash.push_back(h);
    }
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
