#include "model/schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nictune {
namespace {

TEST(Schema, KeyNamesAreUniqueWithinASection) {
    std::set<std::string> seen;
    for (const auto& k : device_keys())
        EXPECT_TRUE(seen.insert(key_path(k.key)).second) << key_path(k.key);
}

TEST(Schema, EveryQueueKeyNamesAReadOnlyLimitInItsSection) {
    for (const auto& k : device_keys()) {
        if (!k.accepts_max) continue;
        const auto& lim = key_info(k.limit);
        EXPECT_NE(k.limit, k.key) << key_path(k.key);
        EXPECT_EQ(lim.section, k.section) << key_path(k.key);
        EXPECT_FALSE(lim.writable) << key_path(k.key);
    }
}

TEST(Schema, AttributesMapBackToTheirKey) {
    for (const auto& k : device_keys()) {
        if (k.attr == 0) continue;
        auto back = key_for_attr(k.section, k.attr);
        ASSERT_TRUE(back.has_value()) << key_path(k.key);
        EXPECT_EQ(*back, k.key);
    }
    // And an attribute of no key is none (inside and beyond the lookup table).
    for (const auto& s : sections())
        for (uint16_t attr = 0; attr < 200; ++attr) {
            const bool known =
                std::any_of(device_keys().begin(), device_keys().end(), [&](const KeyInfo& k) {
                    return k.attr != 0 && k.section == s.id && k.attr == attr;
                });
            EXPECT_EQ(key_for_attr(s.id, attr).has_value(), known)
                << section_info(s.id).name << " attribute " << attr;
        }
}

// The apply order is the table's phase column: one phase per section that
// is written, in the order channels ... tuned (rollback undoes it backwards,
// transaction_test.cpp).
TEST(Schema, ThePhaseColumnGivesTheApplyOrder) {
    std::vector<SectionInfo> written;
    for (const auto& s : sections())
        if (s.device || s.id == Section::Sysctl || s.id == Section::Tuned) written.push_back(s);
    std::stable_sort(written.begin(), written.end(),
                     [](const SectionInfo& a, const SectionInfo& b) { return a.phase < b.phase; });
    std::vector<std::string_view> order;
    std::set<Phase> phases;
    for (const auto& s : written) {
        order.push_back(s.name);
        EXPECT_TRUE(phases.insert(s.phase).second) << s.name << " shares its phase";
        EXPECT_EQ(phase_of(s.id), s.phase) << s.name;
    }
    EXPECT_EQ(order, (std::vector<std::string_view>{"channels", "private_flags", "rings", "link",
                                                    "pause", "features", "coalesce", "rss", "irq",
                                                    "rps", "xps", "sysctl", "tuned"}));
    // The sections that are never written are filed with [link].
    EXPECT_EQ(phase_of(Section::Profile), Phase::Link);
    EXPECT_EQ(phase_of(Section::Match), Phase::Link);
    EXPECT_EQ(phase_of(Section::Driver), Phase::Link);
}

TEST(Schema, FindsKeysAndSectionsByName) {
    EXPECT_EQ(find_section("coalesce"), Section::Coalesce);
    EXPECT_FALSE(find_section("coalescing").has_value());
    EXPECT_EQ(find_key(Section::Coalesce, "adaptive_rx"), Key::CoalAdaptiveRx);
    EXPECT_EQ(find_key(Section::Rings, "rx"), Key::RingsRx);
    EXPECT_EQ(find_key(Section::Channels, "rx"), Key::ChanRx);
    EXPECT_FALSE(find_key(Section::Rings, "adaptive_rx").has_value());
    EXPECT_EQ(key_path(Key::ChanCombinedMax), "channels.combined_max");
}

TEST(Schema, EnumNamesRoundTrip) {
    EXPECT_EQ(enum_name(Key::LinkOperstate, 6), "UP");
    EXPECT_EQ(enum_value(Key::LinkOperstate, "LOWERLAYERDOWN"), 3U);
    EXPECT_FALSE(enum_name(Key::LinkOperstate, 7).has_value());
    EXPECT_EQ(enum_name(Key::LinkDuplex, 1), "full");
}

TEST(Schema, SysctlAllowlistAcceptsNetworkKeysOnly) {
    EXPECT_TRUE(sysctl_allowed("net.core.rmem_max"));
    EXPECT_TRUE(sysctl_allowed("net.ipv4.tcp_timestamps"));
    EXPECT_FALSE(sysctl_allowed("kernel.core_pattern"));
    EXPECT_FALSE(sysctl_allowed("net.core."));
    EXPECT_FALSE(sysctl_allowed("net.core/../../kernel"));
    EXPECT_FALSE(sysctl_allowed("net.core..x"));
    EXPECT_FALSE(sysctl_allowed("net.ipv4.conf.all.forwarding"));
}

}  // namespace
}  // namespace nictune
