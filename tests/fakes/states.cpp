#include "fakes/states.hpp"

#include <algorithm>

namespace nictune::test {

std::shared_ptr<const FeatureNames> feature_names() {
    static auto names =
        std::make_shared<const FeatureNames>(FeatureNames{"tx-scatter-gather",
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
                                                          "rx-ntuple-filter",
                                                          "rx-hashing",
                                                          "rx-checksum",
                                                          "hw-tc-offload"});
    return names;
}

FeatureSet make_features(const std::vector<std::string>& active,
                         const std::vector<std::string>& fixed) {
    FeatureSet fs;
    fs.names = feature_names();
    std::size_t words = (fs.names->size() + 31) / 32;
    fs.hw.assign(words, 0);
    fs.wanted.assign(words, 0);
    fs.active.assign(words, 0);
    fs.nochange.assign(words, 0);
    for (std::size_t i = 0; i < fs.names->size(); ++i) {
        const auto& n = (*fs.names)[i];
        const uint32_t bit = 1U << (i % 32);
        bool on = std::find(active.begin(), active.end(), n) != active.end();
        bool is_fixed = std::find(fixed.begin(), fixed.end(), n) != fixed.end();
        if (on) {
            fs.active[i / 32] |= bit;
            fs.wanted[i / 32] |= bit;
        }
        if (!is_fixed) fs.hw[i / 32] |= bit;
    }
    return fs;
}

namespace {
void link(NicState& s, uint64_t mtu, uint64_t min_mtu, uint64_t max_mtu) {
    s.values.set(Key::LinkMtu, mtu);
    s.values.set(Key::LinkMinMtu, min_mtu);
    s.values.set(Key::LinkMaxMtu, max_mtu);
    s.values.set(Key::LinkTxqueuelen, 1000);
    s.values.set(Key::LinkOperstate, 6);
    s.values.set(Key::LinkCarrier, 1);
}
}  // namespace

NicState ixgbe_port(const std::string& name, const std::string& version) {
    NicState s;
    s.id.name = name;
    s.id.ifindex = 4;
    s.id.mac = "90:e2:ba:00:00:01";
    s.id.driver = "ixgbe";
    s.id.driver_version = version;
    s.id.firmware_version = "0x800004a5";
    s.id.bus_info = "0000:03:00.0";
    s.id.pci_id = "8086:10fb";
    s.id.pci_subsystem = "8086:000c";
    s.id.physical = true;
    link(s, 1500, 68, 9710);
    s.values.set(Key::LinkSpeed, 10000);
    s.values.set(Key::LinkDuplex, 1);
    s.values.set(Key::CoalRxUsecs, 1);
    s.values.set(Key::CoalTxUsecs, 0);
    s.values.set(Key::RingsRx, 512);
    s.values.set(Key::RingsTx, 512);
    s.values.set(Key::RingsRxMax, 4096);
    s.values.set(Key::RingsTxMax, 4096);
    s.values.set(Key::ChanCombined, 8);
    s.values.set(Key::ChanCombinedMax, 63);
    s.values.set(Key::PauseAutoneg, 0);
    s.values.set(Key::PauseRx, 1);
    s.values.set(Key::PauseTx, 1);
    s.features =
        make_features({"tx-scatter-gather", "rx-gro", "tx-tcp-segmentation", "tx-tcp6-segmentation",
                       "tx-generic-segmentation", "rx-checksum", "rx-hashing"},
                      {"highdma", "tx-lockless", "netns-local", "vlan-challenged"});
    return s;
}

NicState i40e_port(const std::string& name) {
    NicState s;
    s.id.name = name;
    s.id.ifindex = 5;
    s.id.driver = "i40e";
    s.id.driver_version = "2.13.10";
    s.id.pci_id = "8086:1572";
    s.id.physical = true;
    link(s, 1500, 68, 9702);
    s.values.set(Key::CoalAdaptiveRx, 1);
    s.values.set(Key::CoalAdaptiveTx, 1);
    s.values.set(Key::CoalRxUsecs, 50);
    s.values.set(Key::CoalTxUsecs, 50);
    s.values.set(Key::CoalRxUsecsHigh, 0);
    s.values.set(Key::RingsRx, 512);
    s.values.set(Key::RingsTx, 512);
    s.values.set(Key::RingsRxMax, 4096);
    s.values.set(Key::RingsTxMax, 4096);
    s.values.set(Key::ChanCombined, 16);
    s.values.set(Key::ChanCombinedMax, 64);
    s.features = make_features({"rx-gro", "tx-tcp-segmentation"}, {});
    return s;
}

NicState veth(const std::string& name) {
    NicState s;
    s.id.name = name;
    s.id.ifindex = 9;
    s.id.driver = "veth";
    s.id.kind = "veth";
    link(s, 1500, 68, 65535);
    s.values.set(Key::ChanRx, 1);
    s.values.set(Key::ChanTx, 1);
    s.values.set(Key::ChanRxMax, 2);
    s.values.set(Key::ChanTxMax, 2);
    s.features = make_features({"rx-gro", "tx-scatter-gather"}, {"rx-lro", "hw-tc-offload"});
    return s;
}

NicState e1000e_port(const std::string& name) {
    NicState s;
    s.id.name = name;
    s.id.ifindex = 2;
    s.id.mac = "52:54:00:12:34:56";
    s.id.driver = "e1000e";
    s.id.pci_id = "8086:10d3";
    s.id.physical = true;
    link(s, 1500, 68, 9212);
    s.values.set(Key::CoalRxUsecs, 3);
    s.values.set(Key::RingsRx, 256);
    s.values.set(Key::RingsTx, 256);
    s.values.set(Key::RingsRxMax, 4096);
    s.values.set(Key::RingsTxMax, 4096);
    s.values.set(Key::RingsTxPush, 0);
    s.values.set(Key::PauseAutoneg, 1);
    s.values.set(Key::PauseRx, 1);
    s.values.set(Key::PauseTx, 1);
    s.features =
        make_features({"tx-scatter-gather", "rx-gro", "tx-tcp-segmentation", "rx-checksum"},
                      {"rx-lro", "highdma", "netns-local"});
    return s;
}

NicState netdevsim_port(const std::string& name) {
    NicState s;
    s.id.name = name;
    s.id.ifindex = 3;
    s.id.driver = "netdevsim";
    s.id.physical = true;
    link(s, 1500, 68, 65535);
    for (const auto& k : device_keys())
        if (k.section == Section::Coalesce) s.values.set(k.key, 0);
    s.values.set(Key::RingsRx, 512);
    s.values.set(Key::RingsTx, 512);
    s.values.set(Key::RingsRxMini, 0);
    s.values.set(Key::RingsRxJumbo, 0);
    s.values.set(Key::RingsRxMax, 4096);
    s.values.set(Key::RingsTxMax, 4096);
    s.values.set(Key::RingsRxMiniMax, 4096);
    s.values.set(Key::RingsRxJumboMax, 4096);
    s.values.set(Key::RingsTxPush, 0);
    s.values.set(Key::ChanCombined, 1);
    s.values.set(Key::ChanCombinedMax, 1);
    s.values.set(Key::PauseAutoneg, 0);
    s.values.set(Key::PauseRx, 0);
    s.values.set(Key::PauseTx, 0);
    s.features = make_features({"rx-gro"}, {"rx-lro", "hw-tc-offload"});
    return s;
}

}  // namespace nictune::test
