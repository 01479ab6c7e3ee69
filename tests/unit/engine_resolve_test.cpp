#include <gtest/gtest.h>

#include "engine/plan.hpp"
#include "engine/resolve.hpp"
#include "engine/translate.hpp"
#include "fakes/states.hpp"
#include "profile/features.hpp"
#include "profile/loader.hpp"
#include "support/profile_text.hpp"

namespace nictune {
namespace {
using ::nictune::test::profile_of;

const ResolvedSetting& setting(const Resolved& r, Key requested) {
    for (const auto& s : r.settings)
        if (s.requested == requested) return s;
    throw std::runtime_error("no resolved setting for " + key_path(requested));
}

TEST(Resolve, UsesNativeKeysWhenTheDeviceHasThem) {
    auto r = resolve(profile_of("t", "[coalesce]\nadaptive_rx = true\nrx_usecs_high = 20\n"),
                     test::i40e_port());
    EXPECT_EQ(setting(r, Key::CoalAdaptiveRx).resolution, Resolution::Native);
    EXPECT_EQ(setting(r, Key::CoalAdaptiveRx).key, Key::CoalAdaptiveRx);
    EXPECT_EQ(setting(r, Key::CoalRxUsecsHigh).value, 20U);
}

TEST(Resolve, ResolvesMaxToTheDeviceLimit) {
    auto r = resolve(profile_of("t", "[rings]\nrx = \"max\"\n[channels]\ncombined = \"max\"\n"),
                     test::ixgbe_port());
    EXPECT_EQ(setting(r, Key::RingsRx).value, 4096U);
    EXPECT_EQ(setting(r, Key::RingsRx).resolution, Resolution::Native);
    EXPECT_EQ(setting(r, Key::ChanCombined).value, 63U);
}

TEST(Resolve, RefusesValuesAboveTheDeviceLimit) {
    auto r =
        resolve(profile_of("t", "[rings]\nrx = 8192\n[link]\nmtu = 9711\n"), test::ixgbe_port());
    EXPECT_EQ(setting(r, Key::RingsRx).resolution, Resolution::OutOfRange);
    EXPECT_EQ(setting(r, Key::RingsRx).note, "the device's maximum is 4096 (rings.rx_max)");
    EXPECT_EQ(setting(r, Key::LinkMtu).resolution, Resolution::OutOfRange);
    EXPECT_EQ(setting(r, Key::LinkMtu).note, "the device accepts MTU 68..9710");
}

TEST(Resolve, TreatsAZeroMaxMtuAsNoLimit) {
    auto lo = test::veth("lo");
    lo.values.set(Key::LinkMinMtu, 0);
    lo.values.set(Key::LinkMaxMtu, 0);
    auto r = resolve(profile_of("t", "[link]\nmtu = 9000\n"), lo);
    EXPECT_EQ(setting(r, Key::LinkMtu).resolution, Resolution::Native);
}

TEST(Resolve, MarksKeysTheDriverDoesNotReportUnsupported) {
    auto r =
        resolve(profile_of("t", "[coalesce]\nrx_usecs = 10\n[rings]\nrx = 512\n"), test::veth());
    EXPECT_EQ(setting(r, Key::CoalRxUsecs).resolution, Resolution::Unsupported);
    EXPECT_EQ(setting(r, Key::RingsRx).resolution, Resolution::Unsupported);
    EXPECT_EQ(setting(r, Key::RingsRx).note, "veth does not report rings.rx");
}

TEST(Resolve, FlagsContradictionsBetweenATranslationAndAnExplicitValue) {
    auto r = resolve(profile_of("t", "[coalesce]\nadaptive_rx = true\nrx_usecs = 50\n"),
                     test::ixgbe_port());
    EXPECT_EQ(setting(r, Key::CoalAdaptiveRx).resolution, Resolution::Conflict);
    EXPECT_NE(setting(r, Key::CoalAdaptiveRx)
                  .note.find("but the profile also sets coalesce.rx_usecs = 50"),
              std::string::npos);
    EXPECT_EQ(setting(r, Key::CoalRxUsecs).resolution, Resolution::Native);
}

TEST(Resolve, AppliesAgreeingTranslationsOnce) {
    auto r = resolve(profile_of("t", "[coalesce]\nadaptive_rx = true\nadaptive_tx = true\n"),
                     test::ixgbe_port());
    EXPECT_EQ(setting(r, Key::CoalAdaptiveRx).resolution, Resolution::Translated);
    EXPECT_EQ(setting(r, Key::CoalAdaptiveTx).resolution, Resolution::Covered);
    auto r2 = resolve(profile_of("t", "[coalesce]\nadaptive_rx = true\nrx_usecs = 1\n"),
                      test::ixgbe_port());
    EXPECT_EQ(setting(r2, Key::CoalAdaptiveRx).resolution, Resolution::Covered);
    EXPECT_EQ(setting(r2, Key::CoalRxUsecs).resolution, Resolution::Native);
}

TEST(Resolve, ExpandsFeatureAliasesAgainstTheDevice) {
    auto r = resolve(profile_of("t", "[features]\ntso = false\n"), test::ixgbe_port());
    std::vector<std::string> names;
    for (const auto& f : r.features)
        names.push_back(f.name);
    EXPECT_EQ(names,
              (std::vector<std::string>{"tx-tcp-segmentation", "tx-tcp-ecn-segmentation",
                                        "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation"}));
    for (const auto& f : r.features)
        EXPECT_EQ(f.status, FeatureStatus::Ok);
}

TEST(Resolve, ReportsFixedAndMissingFeatures) {
    auto r =
        resolve(profile_of("t", "[features]\nlro = true\nhw-tc-offload = true\n"), test::veth());
    ASSERT_EQ(r.features.size(), 2U);
    // In the order the profile names them.
    EXPECT_EQ(r.features[0].name, "rx-lro");
    EXPECT_EQ(r.features[0].status, FeatureStatus::Fixed);
    EXPECT_EQ(r.features[1].name, "hw-tc-offload");
    EXPECT_EQ(r.features[1].status, FeatureStatus::Fixed);
    auto bare = test::veth();
    bare.features.reset();
    auto r2 = resolve(profile_of("t", "[features]\ngro = true\n"), bare);
    ASSERT_EQ(r2.features.size(), 1U);
    EXPECT_EQ(r2.features[0].status, FeatureStatus::NotOnDevice);
}

// A plan expands each feature alias once per list of kernel names: the
// same result as features::expand, the same object the second time, its
// own for another list, and the list kept alive while the result is.
TEST(Resolve, FeatureExpansionsAreComputedOncePerNameList) {
    FeatureExpansions cache;
    const auto ixgbe = test::ixgbe_port().features->names;
    const auto& tso = cache.expand("tso", ixgbe);
    EXPECT_EQ(tso, features::expand("tso", *ixgbe));
    EXPECT_EQ(tso.size(), 4U);
    EXPECT_EQ(&cache.expand("tso", ixgbe), &tso);
    auto other = std::make_shared<const FeatureNames>(
        FeatureNames{"rx-gro", "tx-tcp-segmentation", "tx-checksum-ipv4"});
    const std::weak_ptr<const FeatureNames> held = other;
    const auto& tso2 = cache.expand("tso", other);
    EXPECT_EQ(tso2, std::vector<std::string>{"tx-tcp-segmentation"});
    EXPECT_NE(&tso2, &tso);
    EXPECT_TRUE(cache.expand("lro", other).empty());
    other.reset();
    EXPECT_FALSE(held.expired()) << "its address names the cached results";

    // Resolving with the cache and without gives the same features.
    const auto profile = profile_of("t", "[features]\ntso = false\ngro = true\nlro = true\n");
    for (const auto& nic : {test::ixgbe_port(), test::veth()}) {
        const auto with = resolve(profile, nic, ResolveContext{nullptr, nullptr, &cache});
        const auto without = resolve(profile, nic);
        ASSERT_EQ(with.features.size(), without.features.size()) << nic.id.name;
        for (std::size_t i = 0; i < with.features.size(); ++i) {
            EXPECT_EQ(with.features[i].name, without.features[i].name);
            EXPECT_EQ(with.features[i].status, without.features[i].status);
        }
    }
}

// A plan's steps go by phase, and within a phase keep the order resolution
// gave them (settings, then features as the profile names them).
TEST(Plan, StepsGoByPhaseAndKeepTheirOrderWithinOne) {
    const auto profile =
        profile_of("t",
                   "[link]\nmtu = 9000\n[features]\ntso = false\ngro = true\n"
                   "[rings]\nrx = 4096\n[channels]\ncombined = 8\n[coalesce]\nrx_usecs = 50\n");
    const auto nic = test::ixgbe_port();
    const auto plan = make_plan(profile, std::span<const NicState>(&nic, 1), SystemState{});
    ASSERT_EQ(plan.interfaces.size(), 1U);
    const auto& steps = plan.interfaces[0].steps;
    ASSERT_GE(steps.size(), 9U);
    for (std::size_t i = 1; i < steps.size(); ++i)
        EXPECT_LE(steps[i - 1].phase, steps[i].phase) << i;
    std::vector<std::string> features;
    for (const auto& s : steps)
        if (s.setting.section == Section::Features) features.push_back(s.setting.name);
    std::vector<std::string> resolved;
    for (const auto& f : resolve(profile, nic).features)
        resolved.push_back(f.name);
    EXPECT_EQ(features, resolved);
    EXPECT_EQ(features.back(), "rx-gro");
}

// One test per driver translation rule: each rule's request on a device of
// that driver (which reports no adaptive switch) resolves as the rule says.
TEST(TranslationRules, EveryRuleTranslatesOnItsDriver) {
    ASSERT_FALSE(driver_rules().empty());
    for (const auto& rule : driver_rules()) {
        SCOPED_TRACE(std::string(rule.driver) + " " + key_path(rule.key) + "=" +
                     std::to_string(rule.when));
        auto st = test::ixgbe_port();
        st.id.driver = std::string(rule.driver);
        st.values.erase(Key::CoalAdaptiveRx);
        st.values.erase(Key::CoalAdaptiveTx);
        Profile p;
        p.name = "t";
        p.settings[key_index(rule.key)] = Target{rule.when, false, {}};
        auto r = resolve(p, st);
        const auto& s = setting(r, rule.key);
        EXPECT_EQ(s.note, rule.why);
        if (rule.action == RuleAction::Rewrite) {
            EXPECT_EQ(s.resolution, Resolution::Translated);
            EXPECT_EQ(s.key, rule.to);
            EXPECT_EQ(s.value, rule.to_value);
        } else {
            EXPECT_EQ(s.resolution, Resolution::Unsupported);
            // ...and an explicit fixed value satisfies it.
            p.settings[key_index(rule.to)] = Target{50, false, {}};
            auto r2 = resolve(p, st);
            EXPECT_EQ(setting(r2, rule.key).resolution, Resolution::Covered);
        }
    }
}

TEST(TranslationRules, IxgbeAdaptiveRxBecomesRxUsecsOne) {
    auto r = resolve(profile_of("t", "[coalesce]\nadaptive_rx = true\n"), test::ixgbe_port());
    const auto& s = setting(r, Key::CoalAdaptiveRx);
    EXPECT_EQ(s.resolution, Resolution::Translated);
    EXPECT_EQ(s.key, Key::CoalRxUsecs);
    EXPECT_EQ(s.value, 1U);
}

TEST(TranslationRules, NativeSupportWinsOverARule) {
    auto st = test::i40e_port();
    st.id.driver = "ixgbe";  // a future ixgbe that reports adaptive-rx itself
    auto r = resolve(profile_of("t", "[coalesce]\nadaptive_rx = true\n"), st);
    EXPECT_EQ(setting(r, Key::CoalAdaptiveRx).resolution, Resolution::Native);
}

}  // namespace
}  // namespace nictune
