#include "profile/features.hpp"

#include <algorithm>
#include <array>

#include "util/find.hpp"
#include "util/strings.hpp"

namespace nictune::features {
namespace {

// ethtool's legacy offload flags and the kernel feature names each one covers.
constexpr std::array<Alias, 12> kAliases = {{
    {"rx", "rx-checksumming", "rx-checksum"},
    {"tx", "tx-checksumming", "tx-checksum-*"},
    {"sg", "scatter-gather", "tx-scatter-gather*"},
    {"tso", "tcp-segmentation-offload", "tx-tcp*-segmentation"},
    {"ufo", "udp-fragmentation-offload", "tx-udp-fragmentation"},
    {"gso", "generic-segmentation-offload", "tx-generic-segmentation"},
    {"gro", "generic-receive-offload", "rx-gro"},
    {"lro", "large-receive-offload", "rx-lro"},
    {"rxvlan", "rx-vlan-offload", "rx-vlan-hw-parse"},
    {"txvlan", "tx-vlan-offload", "tx-vlan-hw-insert"},
    {"ntuple", "ntuple-filters", "rx-ntuple-filter"},
    {"rxhash", "receive-hashing", "rx-hashing"},
}};

constexpr std::array<std::string_view, 62> kKernelNames = {
    "tx-scatter-gather",
    "tx-checksum-ipv4",
    "tx-checksum-ip-generic",
    "tx-checksum-ipv6",
    "highdma",
    "tx-scatter-gather-fraglist",
    "tx-vlan-hw-insert",
    "rx-vlan-hw-parse",
    "rx-vlan-filter",
    "vlan-challenged",
    "tx-generic-segmentation",
    "tx-lockless",
    "netns-local",
    "rx-gro",
    "rx-lro",
    "tx-tcp-segmentation",
    "tx-gso-robust",
    "tx-tcp-ecn-segmentation",
    "tx-tcp-mangleid-segmentation",
    "tx-tcp6-segmentation",
    "tx-fcoe-segmentation",
    "tx-gre-segmentation",
    "tx-gre-csum-segmentation",
    "tx-ipxip4-segmentation",
    "tx-ipxip6-segmentation",
    "tx-udp_tnl-segmentation",
    "tx-udp_tnl-csum-segmentation",
    "tx-gso-partial",
    "tx-tunnel-remcsum-segmentation",
    "tx-sctp-segmentation",
    "tx-esp-segmentation",
    "tx-udp-segmentation",
    "tx-gso-list",
    "tx-checksum-fcoe-crc",
    "tx-checksum-sctp",
    "fcoe-mtu",
    "rx-ntuple-filter",
    "rx-hashing",
    "rx-checksum",
    "tx-nocache-copy",
    "loopback",
    "rx-fcs",
    "rx-all",
    "tx-vlan-stag-hw-insert",
    "rx-vlan-stag-hw-parse",
    "rx-vlan-stag-filter",
    "l2-fwd-offload",
    "hw-tc-offload",
    "esp-hw-offload",
    "esp-tx-csum-hw-offload",
    "rx-udp_tunnel-port-offload",
    "tls-hw-tx-offload",
    "tls-hw-rx-offload",
    "rx-gro-hw",
    "tls-hw-record",
    "rx-gro-list",
    "macsec-hw-offload",
    "rx-udp-gro-forwarding",
    "hsr-tag-ins-offload",
    "hsr-tag-rm-offload",
    "hsr-fwd-offload",
    "hsr-dup-offload",
};

// The alias patterns use only '*'; matching them without fnmatch avoids two
// string copies per comparison (an apply to 512 interfaces expands each alias
// against 64 names on every one).
bool star_match(std::string_view pat, std::string_view s) {
    const auto star = pat.find('*');
    if (star == std::string_view::npos) return pat == s;
    const std::string_view head = pat.substr(0, star);
    if (!s.starts_with(head)) return false;
    const std::string_view rest = pat.substr(star + 1);
    const std::string_view tail = s.substr(head.size());
    for (std::size_t i = 0; i <= tail.size(); ++i)
        if (star_match(rest, tail.substr(i))) return true;
    return false;
}

}  // namespace

std::span<const Alias> aliases() {
    return kAliases;
}

const Alias* find_alias(std::string_view name) {
    return find_first(kAliases,
                      [&](const Alias& a) { return a.short_name == name || a.long_name == name; });
}

std::span<const std::string_view> known_kernel_names() {
    return kKernelNames;
}

bool is_valid_name(std::string_view name, const FeatureNames* runtime) {
    if (find_alias(name)) return true;
    if (std::find(kKernelNames.begin(), kKernelNames.end(), name) != kKernelNames.end())
        return true;
    return runtime && std::find(runtime->begin(), runtime->end(), name) != runtime->end();
}

std::vector<std::string> expand(std::string_view name, const FeatureNames& device_names) {
    std::vector<std::string> out;
    if (const Alias* a = find_alias(name)) {
        for (const auto& n : device_names)
            if (star_match(a->pattern, n)) out.push_back(n);
        return out;
    }
    if (std::find(device_names.begin(), device_names.end(), name) != device_names.end())
        out.emplace_back(name);
    return out;
}

}  // namespace nictune::features
