#include "fuzz/harness.hpp"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/state_store.hpp"
#include "ethnl/codecs.hpp"
#include "model/cpulist.hpp"
#include "model/nic_state.hpp"
#include "model/schema.hpp"
#include "profile/facts.hpp"
#include "profile/loader.hpp"
#include "rtnl/link.hpp"
#include "rtnl/stats.hpp"
#include "sysinfo/ethtool_stats.hpp"
#include "sysinfo/foreign_config.hpp"
#include "sysinfo/ini.hpp"
#include "sysinfo/kmod.hpp"
#include "sysinfo/procfs.hpp"
#include "util/strings.hpp"
#include "watch/config.hpp"

namespace nictune::fuzz {
namespace {

[[noreturn]] void print_and_abort(const std::string& problem) {
    std::fprintf(stderr, "nictune fuzz: invariant violated: %s\n", problem.c_str());
    std::abort();
}

ViolationHandler g_violation = print_and_abort;

// NICTUNE_FUZZ_TOLERATE="text;text": violations whose message contains one
// of these are let through, so that fuzzing can go on past a reported bug
// that is not fixed yet. Memory errors and undefined behaviour are not
// affected: the sanitizers report those.
const std::vector<std::string>& tolerated() {
    static const std::vector<std::string> list = [] {
        std::vector<std::string> out;
        const char* env = std::getenv("NICTUNE_FUZZ_TOLERATE");
        std::string_view rest = env != nullptr ? env : "";
        while (!rest.empty()) {
            const auto semi = rest.find(';');
            if (semi != 0) out.emplace_back(rest.substr(0, semi));
            if (semi == std::string_view::npos) break;
            rest.remove_prefix(semi + 1);
        }
        return out;
    }();
    return list;
}

template <class... Args>
void check(bool ok, fmt::format_string<Args...> format, Args&&... args) {
    if (ok) return;
    const std::string problem = fmt::format(format, std::forward<Args>(args)...);
    for (const auto& t : tolerated())
        if (problem.find(t) != std::string::npos) return;
    g_violation(problem);
    std::abort();  // a handler that returns must not let the input run on
}

std::string_view text_of(Bytes in) {
    return {reinterpret_cast<const char*>(in.data()), in.size()};
}

// The file names the parsers are told; their errors must point into them.
constexpr std::string_view kProfileFile = "fuzz-profile.toml";
constexpr std::string_view kConfigFile = "fuzz-nictune.toml";
constexpr std::string_view kFactsFile = "fuzz-driver-facts.toml";
constexpr std::string_view kStateFile = "fuzz-state.json";

// Lower-case hex digits and the given separators only.
bool lower_hex(std::string_view s, std::string_view separators) {
    return std::all_of(s.begin(), s.end(), [&](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
               separators.find(c) != std::string_view::npos;
    });
}

std::string upper_ascii(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return out;
}

// "file:line:column" with both numbers from 1: what every file parser promises.
void check_file_error(const Error& e, std::string_view file) {
    check(!e.message.empty(), "'{}': error without a message", e.context);
    check(e.code == Errc::InvalidProfile, "'{}': {}: code {} instead of InvalidProfile", e.context,
          e.message, errc_name(e.code));
    const std::string prefix = std::string(file) + ":";
    check(e.context.starts_with(prefix), "'{}': {}: the context does not name {}", e.context,
          e.message, file);
    const std::string_view pos = std::string_view(e.context).substr(prefix.size());
    const auto colon = pos.find(':');
    uint32_t line = 0;
    uint32_t column = 0;
    bool numbers = colon != std::string_view::npos;
    if (numbers) {
        const char* end = pos.data() + pos.size();
        const auto l = std::from_chars(pos.data(), pos.data() + colon, line);
        const auto c = std::from_chars(pos.data() + colon + 1, end, column);
        numbers = l.ec == std::errc{} && l.ptr == pos.data() + colon && c.ec == std::errc{} &&
                  c.ptr == end;
    }
    check(numbers && line >= 1 && column >= 1, "'{}': {}: the context is not file:line:column",
          e.context, e.message);
}

// Decoders of kernel messages: a reason, and where it was found.
void check_decode_error(const Error& e) {
    check(!e.message.empty(), "'{}': error without a message", e.context);
    check(!e.context.empty(), "error '{}' without a context", e.message);
}

void check_loc(const SourceLoc& loc, std::string_view file, std::string_view what) {
    check(loc.file == file && loc.line >= 1 && loc.column >= 1, "{}: location '{}' is not in {}",
          what, loc.str(), file);
}

// A device value as the schema types it (not the profile range: a device may
// report more than a profile may ask for, e.g. lo's MTU of 65536).
void check_device_value(Key k, uint64_t v, std::string_view where) {
    switch (key_info(k).type) {
        case ValueType::Bool:
            check(v <= 1, "{}: {} = {} is not a boolean", where, key_path(k), v);
            break;
        case ValueType::Enum:
            check(enum_name(k, v).has_value(), "{}: {} = {} is not a value of the enum", where,
                  key_path(k), v);
            break;
        case ValueType::U32:
            check(v <= 0xffffffffULL, "{}: {} = {} does not fit 32 bits", where, key_path(k), v);
            break;
        case ValueType::String:
        case ValueType::StringList:
            check(false, "{}: {} holds a number but is a string key", where, key_path(k));
            break;
    }
}

// ---- profile::parse

bool profile_target(Bytes in) {
    const std::string file(kProfileFile);
    auto p = profile::parse(text_of(in), file);
    if (!p) {
        check_file_error(p.error(), file);
        return false;
    }

    check(p->file == file, "profile.file is '{}'", p->file);
    for (const KeyInfo& info : device_keys()) {
        const auto& t = p->setting(info.key);
        if (!t) continue;
        const std::string path = key_path(info.key);
        check(info.writable, "{} is read-only but the profile sets it", path);
        check_loc(t->loc, file, path);
        if (t->is_max) {
            check(info.accepts_max, "{} = \"max\" but the key takes no max", path);
            continue;
        }
        check_device_value(info.key, t->value, "profile");
        if (info.type == ValueType::U32)
            check(t->value >= info.min && t->value <= info.max, "{} = {} is outside {}..{}", path,
                  t->value, info.min, info.max);
    }
    for (std::size_t i = 0; i < p->features.size(); ++i) {
        const auto& f = p->features[i];
        check(!f.name.empty(), "a feature request without a name");
        check_loc(f.loc, file, "features." + f.name);
        for (std::size_t j = i + 1; j < p->features.size(); ++j)
            check(p->features[j].name != f.name, "features.{} is requested twice", f.name);
    }
    for (std::size_t i = 0; i < p->sysctl.size(); ++i) {
        const auto& s = p->sysctl[i];
        check(sysctl_allowed(s.name), "sysctl '{}' is not on the allowlist", s.name);
        check(s.value.find_first_of(std::string_view("\n\0", 2)) == std::string::npos,
              "sysctl.{}: the value is not one line", s.name);
        check_loc(s.loc, file, "sysctl." + s.name);
        if (i > 0)
            check(p->sysctl[i - 1].name < s.name, "sysctl.{} is not sorted or given twice", s.name);
    }
    for (const auto& inc : p->includes)
        check(profile::validate_name(inc).has_value(), "include '{}' is not a profile name", inc);
    if (!p->includes.empty()) check_loc(p->include_loc, file, "profile.include");
    if (p->priority) check(*p->priority <= 1000, "priority {} is above 1000", *p->priority);
    for (const auto& id : p->match.pci_ids)
        check(id.size() == 9 && id[4] == ':' && lower_hex(id, ":"),
              "match.pci_ids: '{}' is not a lower-case PCI id", id);
    if (p->tuned_profile) check_loc(p->tuned_loc, file, "tuned.profile");
    check(!p->empty() || !p->includes.empty() || p->driver.min_version ||
              !p->driver.bad_versions.empty(),
          "a profile that asks for nothing was accepted");
    return true;
}

// ---- parse_config

bool config_target(Bytes in) {
    const std::string file(kConfigFile);
    auto cfg = parse_config(text_of(in), file);
    if (!cfg) {
        check_file_error(cfg.error(), file);
        return false;
    }

    for (const auto& dir : cfg->profiles_dirs)
        check(dir.starts_with('/'), "profiles_dirs: '{}' is not absolute", dir);
    if (cfg->state_dir)
        check(cfg->state_dir->starts_with('/'), "state_dir '{}' is not absolute", *cfg->state_dir);
    for (const auto& b : cfg->bindings) {
        check(profile::validate_name(b.profile).has_value(),
              "a binding to '{}', not a profile name", b.profile);
        check(b.interface || b.mac || b.pci || b.driver, "the binding to {} matches nothing",
              b.profile);
        check_loc(b.loc, file, "[[bind]]");
        check_loc(b.profile_loc, file, "bind.profile");
        if (b.mac)
            check(b.mac->size() == 17 && lower_hex(*b.mac, ":"),
                  "bind.mac '{}' is not lower-case aa:bb:cc:dd:ee:ff", *b.mac);
        if (b.pci)
            check(b.pci->size() == 12 && lower_hex(*b.pci, ":."),
                  "bind.pci '{}' is not lower-case 0000:03:00.0", *b.pci);

        // The NIC the binding describes (MAC and PCI address in upper case:
        // they match in any case) must match it, and be the one it is bound to.
        const bool literal_name =
            !b.interface || b.interface->find_first_of("*?[\\") == std::string::npos;
        if (!literal_name) continue;
        Identity id;
        id.name = b.interface.value_or("eth0");
        if (b.mac) id.mac = upper_ascii(*b.mac);
        if (b.pci) id.bus_info = upper_ascii(*b.pci);
        id.driver = b.driver;
        check(b.matches(id), "binding '{}' does not match its own NIC", b.describe());
        check(cfg->binding_for(id) != nullptr, "binding_for() misses '{}'", b.describe());
    }
    return true;
}

// ---- FactsBook::parse

bool facts_target(Bytes in) {
    const std::string file(kFactsFile);
    auto book = FactsBook::parse(text_of(in), file);
    if (!book) {
        check_file_error(book.error(), file);
        return false;
    }

    FactsBook merged = FactsBook::builtin();
    merged.merge(*book);
    for (const DriverFacts* fp : book->drivers()) {
        const DriverFacts& f = *fp;
        if (f.max_mtu)
            check(*f.max_mtu >= 68 && *f.max_mtu <= 65535, "{}.max_mtu {} is outside 68..65535",
                  f.driver, *f.max_mtu);
        for (const auto& id : f.pci_ids)
            check(id == to_lower(id), "{}.pci_ids: '{}' is not lower-case", f.driver, id);
        for (const auto& bv : f.bad_versions)
            check(!bv.version.empty(), "{}.bad_versions: an entry without a version", f.driver);
        const DriverFacts* found = merged.find(f.driver);
        check(found != nullptr && found->description == f.description &&
                  found->bad_versions.size() == f.bad_versions.size(),
              "merging the book does not put '{}' in place of the built-in facts", f.driver);
    }
    return true;
}

// ---- state records (interface_record_from_json, system_record_from_json)

bool state_target(Bytes in) {
    const std::string file(kStateFile);
    const std::string_view text = text_of(in);
    bool accepted = false;
    if (auto r = interface_record_from_json(text, file)) {
        accepted = true;
        check(valid_ifname(r->name), "interface record for '{}', not an interface name", r->name);
        // What is read back is what is written again: a record that loads
        // must survive the next save and load unchanged.
        auto again = interface_record_from_json(to_json_text(*r), file);
        check(again.has_value(), "interface record '{}' does not load after a save: {}", r->name,
              again ? "" : again.error().str());
        check(*again == *r, "interface record '{}' changes on a save and a load", r->name);
    } else {
        check_decode_error(r.error());
        check(r.error().context == file, "'{}': the error does not name the file",
              r.error().context);
    }
    if (auto r = system_record_from_json(text, file)) {
        accepted = true;
        auto again = system_record_from_json(to_json_text(*r), file);
        check(again.has_value(), "system record does not load after a save: {}",
              again ? "" : again.error().str());
        check(*again == *r, "system record changes on a save and a load");
    } else {
        check_decode_error(r.error());
        check(r.error().context == file, "'{}': the error does not name the file",
              r.error().context);
    }
    return accepted;
}

// ---- netlink decoders

// One netlink message in a buffer of exactly its length, so that AddressSanitizer
// sees any read past the end. nlmsg_len is set to that length: the socket
// layers (mnl_cb_run, libnl) hand on only messages whose length fits what was
// received, and a decoder may rely on it.
class Message {
  public:
    explicit Message(Bytes in) : size_(in.size()) {
        if (size_ < sizeof(nlmsghdr) || size_ > (1U << 20)) return;
        buf_ = std::make_unique<uint8_t[]>(size_);
        std::memcpy(buf_.get(), in.data(), size_);
        auto* nlh = reinterpret_cast<nlmsghdr*>(buf_.get());
        nlh->nlmsg_len = static_cast<uint32_t>(size_);
    }
    [[nodiscard]] bool usable() const { return buf_ != nullptr; }
    [[nodiscard]] const nlmsghdr* nlh() const {
        return reinterpret_cast<const nlmsghdr*>(buf_.get());
    }

  private:
    std::size_t size_;
    std::unique_ptr<uint8_t[]> buf_;
};

// A generic netlink message built with the product's own encoders.
class Builder {
  public:
    Builder(uint8_t cmd, std::size_t capacity) : buf_((capacity + 3) / 4) {
        nlh_ = mnl_nlmsg_put_header(buf_.data());
        nlh_->nlmsg_type = 21;  // any family id: the decoders look at the command
        auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh_, sizeof(genlmsghdr)));
        genl->cmd = cmd;
    }
    [[nodiscard]] nlmsghdr* nlh() const { return nlh_; }

  private:
    std::vector<uint32_t> buf_;
    nlmsghdr* nlh_;
};

uint8_t genl_cmd_of(const nlmsghdr* nlh) {
    return static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh))->cmd;
}

std::string_view section_name(Section s) {
    return section_info(s).name;
}

bool settings_target(Section section, const nlmsghdr* nlh) {
    auto r = ethnl::decode_settings(section, nlh);
    if (!r) {
        check_decode_error(r.error());
        return false;
    }

    check(r->ifindex > 0, "{} reply for ifindex {}", section_name(section), r->ifindex);
    std::vector<std::pair<Key, uint64_t>> writable;
    for (const KeyInfo& info : device_keys()) {
        const auto v = r->values.get(info.key);
        if (!v) continue;
        check(info.section == section && info.attr != 0, "a {} reply set {}", section_name(section),
              key_path(info.key));
        check_device_value(info.key, *v, "ethtool reply");
        if (info.key == Key::LinkSpeed)
            check(*v != 0 && *v != 0xffffffffULL, "link.speed {} is the kernel's 'unknown'", *v);
        if (info.writable) writable.emplace_back(info.key, *v);
    }

    // What a SET would send for the writable values decodes to the same values.
    Builder b(genl_cmd_of(nlh), 4096);
    ethnl::put_header(b.nlh(), ethnl::kHeaderAttr, r->ifindex, 0);
    ethnl::encode_settings(b.nlh(), section, writable);
    auto again = ethnl::decode_settings(section, b.nlh());
    check(again.has_value(), "re-encoded {} values do not decode: {}", section_name(section),
          again ? "" : again.error().str());
    check(again->ifindex == r->ifindex, "the ifindex changes on re-encoding");
    for (const KeyInfo& info : device_keys()) {
        if (info.section != section) continue;
        auto it = std::find_if(writable.begin(), writable.end(),
                               [&](const auto& kv) { return kv.first == info.key; });
        const auto got = again->values.get(info.key);
        const bool same =
            it == writable.end() ? !got.has_value() : got.has_value() && *got == it->second;
        check(same, "{} changes on re-encoding", key_path(info.key));
    }
    return true;
}

std::size_t words_for(uint32_t nbits) {
    return (std::size_t{nbits} + 31) / 32;
}

bool features_target(const nlmsghdr* nlh) {
    auto r = ethnl::decode_features(nlh);
    if (!r) {
        check_decode_error(r.error());
        return false;
    }

    check(r->ifindex > 0, "FEATURES reply for ifindex {}", r->ifindex);
    check(r->nbits <= 32767, "FEATURES reply of {} bits", r->nbits);
    for (const auto* map : {&r->hw, &r->wanted, &r->active, &r->nochange}) {
        check(map->size() == words_for(r->nbits), "a feature map of {} words for {} bits",
              map->size(), r->nbits);
        if (r->nbits % 32 != 0)
            check((map->back() >> (r->nbits % 32)) == 0, "bits beyond {} are set", r->nbits);
    }

    // Asking for the active state as the wanted one (every bit masked)
    // decodes to it again.
    std::vector<std::pair<std::size_t, bool>> changes;
    for (std::size_t i = 0; i < r->nbits; ++i)
        changes.emplace_back(i, FeatureSet::bit(r->active, i));
    Builder b(genl_cmd_of(nlh), 2 * words_for(r->nbits) * 4 + 256);
    ethnl::put_header(b.nlh(), ethnl::kHeaderAttr, r->ifindex, 0);
    ethnl::encode_features(b.nlh(), r->nbits, changes);
    auto again = ethnl::decode_features(b.nlh());
    check(again.has_value(), "re-encoded features do not decode: {}",
          again ? "" : again.error().str());
    check(again->nbits == r->nbits && again->wanted == r->active,
          "the active features do not survive re-encoding as wanted ones");
    return true;
}

bool feature_strings_target(const nlmsghdr* nlh) {
    auto names = ethnl::decode_feature_strings(nlh);
    if (!names) {
        check_decode_error(names.error());
        return false;
    }
    check(names->size() <= nlh->nlmsg_len, "{} feature names from a message of {} bytes",
          names->size(), nlh->nlmsg_len);
    return true;
}

// The first byte chooses the decoder, the rest is the message.
bool ethnl_target(Bytes in) {
    if (in.empty()) return false;
    const Message msg(in.subspan(1));
    if (!msg.usable()) return false;
    static constexpr std::array<Section, 5> kSettings = {
        Section::Link, Section::Coalesce, Section::Rings, Section::Channels, Section::Pause};
    const std::size_t choice = in[0] % (kSettings.size() + 2);
    if (choice < kSettings.size()) return settings_target(kSettings[choice], msg.nlh());
    if (choice == kSettings.size()) return features_target(msg.nlh());
    return feature_strings_target(msg.nlh());
}

bool rtnl_target(Bytes in) {
    const Message msg(in);
    if (!msg.usable()) return false;
    auto link = rtnl::decode_link(msg.nlh());
    if (!link) {
        check_decode_error(link.error());
        return false;
    }

    check(!link->name.empty() && link->name.find('\0') == std::string::npos, "a link named '{}'",
          link->name);
    for (const auto* mac : {&link->mac, link->perm_mac ? &*link->perm_mac : nullptr}) {
        if (mac == nullptr || mac->empty()) continue;
        check(mac->size() % 3 == 2 && lower_hex(*mac, ":"), "{}: address '{}' is malformed",
              link->name, *mac);
    }
    static constexpr std::array<Key, 6> kLinkKeys = {Key::LinkMtu,       Key::LinkMinMtu,
                                                     Key::LinkMaxMtu,    Key::LinkTxqueuelen,
                                                     Key::LinkOperstate, Key::LinkCarrier};
    for (const KeyInfo& info : device_keys()) {
        const auto v = link->values.get(info.key);
        if (!v) continue;
        check(std::find(kLinkKeys.begin(), kLinkKeys.end(), info.key) != kLinkKeys.end(),
              "{}: a link message set {}", link->name, key_path(info.key));
        check_device_value(info.key, *v, link->name);
    }
    if (auto max = link->values.get(Key::LinkMaxMtu))
        check(*max != 0, "{}: max_mtu 0 (the kernel's 'no limit') kept as a limit", link->name);
    return true;
}

// ---- health: the text parsers (the first byte chooses)

// "file:line", the form every health text parser's errors take.
void check_file_line(const Error& e, std::string_view file) {
    check(!e.message.empty(), "'{}': error without a message", e.context);
    check(e.context == file || e.context.starts_with(std::string(file) + ":"),
          "'{}': {}: the context does not name {}", e.context, e.message, file);
}

bool health_target(Bytes in) {
    if (in.empty()) return false;
    const std::string_view text(reinterpret_cast<const char*>(in.data() + 1), in.size() - 1);
    switch (in[0] % 8) {
        case 0: {
            auto t = sysinfo::parse_interrupts(text);
            if (!t) {
                check_file_line(t.error(), "/proc/interrupts");
                return false;
            }
            check(!t->cpus.empty(), "an interrupt table without CPUs");
            for (const auto& l : t->lines) {
                check(l.per_cpu.size() == t->cpus.size(), "IRQ {}: {} counts for {} CPUs", l.irq,
                      l.per_cpu.size(), t->cpus.size());
                check(t->find(l.irq) == &l, "IRQ {} not found by number", l.irq);
            }
            return true;
        }
        case 1: {
            auto t = sysinfo::parse_softnet(text);
            if (!t) {
                check_file_line(t.error(), "/proc/net/softnet_stat");
                return false;
            }
            return true;
        }
        case 2: {
            auto c = sysinfo::parse_link_file(text, "f.link");
            if (!c) {
                check_file_line(c.error(), "f.link");
                return false;
            }
            for (const auto& st : c->settings) {
                check(st.line >= 1, "{}: no line", st.key);
                check(!st.value.empty(), "{}: empty value", st.key);
            }
            return true;
        }
        case 3: {
            auto c = sysinfo::parse_ifupdown(text, "interfaces", "p4p1");
            if (!c) {
                // "source" lines are followed (on this machine's files: an
                // absolute glob may reach /sbin), and an error in a sourced
                // file names that file and its line.
                const auto& e = c.error();
                const auto colon = e.context.rfind(':');
                check(colon != std::string::npos && colon + 1 < e.context.size() &&
                          std::all_of(e.context.begin() + static_cast<long>(colon) + 1,
                                      e.context.end(),
                                      [](char ch) { return ch >= '0' && ch <= '9'; }),
                      "'{}': {}: the context is not file:line", e.context, e.message);
                check(!e.message.empty(), "'{}': error without a message", e.context);
                return false;
            }
            return c->has_value();
        }
        case 4: {
            auto e = sysinfo::parse_ini(text, "f.conf");
            if (!e) {
                check_file_line(e.error(), "f.conf");
                return false;
            }
            for (const auto& x : *e)
                check(!x.section.empty() && !x.key.empty(), "an entry without section or key");
            return true;
        }
        case 5: {
            auto l = parse_cpulist(text);
            if (!l) return false;
            check(std::is_sorted(l->begin(), l->end()), "an unsorted CPU list");
            const auto again = parse_cpulist(format_cpulist(*l));
            check(again && *again == *l, "a CPU list does not survive format and parse");
            return true;
        }
        case 6: {
            auto scan = sysinfo::scan_cpio(text, "ixgbe");
            check(scan.compressed_at == std::string::npos || scan.compressed_at < text.size(),
                  "compressed part at {} of {} bytes", scan.compressed_at, text.size());
            (void)sysinfo::initramfs_format(text);
            return !scan.modules.empty();
        }
        default: {
            const auto names =
                sysinfo::parse_gstrings(text, static_cast<uint32_t>(text.size() / 8));
            for (const auto& n : names)
                check(n.size() <= 32 && n.find('\0') == std::string::npos, "a bad name");
            return !names.empty();
        }
    }
}

// ---- health: rtnetlink statistics, link mode bitsets, string sets

bool healthnl_target(Bytes in) {
    if (in.empty()) return false;
    const Message msg(in.subspan(1));
    if (!msg.usable()) return false;
    switch (in[0] % 4) {
        case 0: {
            auto r = rtnl::decode_stats(msg.nlh());
            if (!r) {
                check_decode_error(r.error());
                return false;
            }
            check(r->ifindex > 0, "statistics for ifindex {}", r->ifindex);
            return true;
        }
        case 1: {
            auto r = ethnl::decode_link_mode_bits(msg.nlh());
            if (!r) {
                check_decode_error(r.error());
                return false;
            }
            const std::size_t words = (std::size_t{r->nbits} + 31) / 32;
            check(r->supported.size() == words && r->advertised.size() == words &&
                      r->peer.size() == words,
                  "link mode maps not {} words wide", words);
            return true;
        }
        default: {
            auto r =
                ethnl::decode_string_set(msg.nlh(), in[0] % 4 == 2 ? uint32_t{ETH_SS_FEATURES}
                                                                   : uint32_t{ETH_SS_LINK_MODES});
            if (!r) {
                check_decode_error(r.error());
                return false;
            }
            check(r->names.size() <= msg.nlh()->nlmsg_len, "{} names from {} bytes",
                  r->names.size(), msg.nlh()->nlmsg_len);
            return true;
        }
    }
}

constexpr std::array<Target, 8> kTargets = {{
    {"profile", profile_target, "profile::parse"},
    {"config", config_target, "parse_config (nictune.toml)"},
    {"facts", facts_target, "FactsBook::parse (driver-facts.toml)"},
    {"state", state_target, "interface_record_from_json, system_record_from_json"},
    {"ethnl", ethnl_target,
     "ethnl::decode_settings (link, coalesce, rings, channels, pause), decode_features, "
     "decode_feature_strings; the first byte chooses"},
    {"rtnl", rtnl_target, "rtnl::decode_link"},
    {"health", health_target,
     "parse_interrupts, parse_softnet, parse_link_file, parse_ifupdown, parse_ini, "
     "parse_cpulist, scan_cpio, parse_gstrings; the first byte chooses"},
    {"healthnl", healthnl_target,
     "rtnl::decode_stats, ethnl::decode_link_mode_bits, decode_string_set; the first byte "
     "chooses"},
}};

}  // namespace

std::span<const Target> targets() {
    return kTargets;
}

const Target* find_target(std::string_view name) {
    auto it = std::find_if(kTargets.begin(), kTargets.end(),
                           [&](const Target& t) { return t.name == name; });
    return it == kTargets.end() ? nullptr : &*it;
}

void set_violation_handler(ViolationHandler handler) {
    g_violation = handler != nullptr ? handler : print_and_abort;
}

}  // namespace nictune::fuzz
