// What the driver accepts, not what it reports: one test per rule of the
// driver table (profiles/facts/driver-facts.toml) and of the state-dependent
// checks (lib/engine/translate.cpp), through the plan that the transaction
// and the audit use. Every plan refusal here is also checked to change
// nothing through apply_plan.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/audit.hpp"
#include "engine/plan.hpp"
#include "engine/transaction.hpp"
#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "profile/loader.hpp"
#include "report/plan_report.hpp"
#include "support/profile_text.hpp"

namespace nictune {
namespace {
using ::nictune::test::profile_of;
namespace fs = std::filesystem;

Plan plan_of(const std::string& text, const NicState& nic, const SystemState& sys = {}) {
    return make_plan(profile_of("t", text), std::span<const NicState>(&nic, 1), sys);
}

const PlanStep& step(const Plan& p, const std::string& path) {
    for (const auto& s : p.interfaces.at(0).steps)
        if (s.setting.path() == path) return s;
    throw std::runtime_error("no step " + path);
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

class DriverRulesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-rules-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Applies `plan` on a fake kernel holding `nic`; the kernel as it was
    // afterwards is in be.
    ApplyResult apply(const Plan& plan, const NicState& nic) {
        be.nics = {nic};
        StateStore store(dir_);
        return apply_plan(be, store, plan, {});
    }
    // A plan refused before anything changed: no SET reached the kernel.
    void expect_refused_untouched(const Plan& plan, const NicState& nic) {
        auto r = apply(plan, nic);
        EXPECT_EQ(r.result, TxResult::Refused);
        EXPECT_TRUE(be.calls.empty()) << be.calls.front().what;
        EXPECT_EQ(be.nics.at(0).values, nic.values);
    }

    fs::path dir_;
    test::FakeBackend be;
};

// ---- the table of settable keys ------------------------------------------------

TEST_F(DriverRulesTest, AReportedKeyTheDriverDoesNotAcceptIsRefusedBeforeAnyChange) {
    // Older ixgbe kernels reported tx-frames-irq (the TX work limit); only
    // rx/tx-usecs are in its supported_coalesce_params.
    auto nic = test::ixgbe_port();
    nic.values.set(Key::CoalTxFramesIrq, 256);
    auto plan = plan_of("[link]\nmtu = 9000\n[coalesce]\ntx_frames_irq = 64\n", nic);
    const auto& s = step(plan, "coalesce.tx_frames_irq");
    EXPECT_EQ(s.kind, StepKind::Refused);
    EXPECT_EQ(s.resolution, Resolution::NotSettable);
    ASSERT_EQ(plan.refusals().size(), 1U);
    EXPECT_EQ(plan.refusals()[0],
              "p4p1: coalesce.tx_frames_irq = 64: ixgbe accepts only rx_usecs, tx_usecs in "
              "[coalesce] (drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c "
              "supported_coalesce_params)");
    expect_refused_untouched(plan, nic);
    // Asking for the value it already has changes nothing and is fine.
    EXPECT_EQ(
        step(plan_of("[coalesce]\ntx_frames_irq = 256\n", nic), "coalesce.tx_frames_irq").kind,
        StepKind::Unchanged);
}

TEST_F(DriverRulesTest, TxPushIsRefusedWhereTheDriverHasNoSupportedRingParams) {
    // RINGS_GET always sends tx-push; RINGS_SET takes it only with ETHTOOL_RING_USE_TX_PUSH.
    for (const auto& nic : {test::netdevsim_port(), test::e1000e_port()}) {
        SCOPED_TRACE(*nic.id.driver);
        auto plan = plan_of("[rings]\ntx_push = true\n", nic);
        EXPECT_EQ(step(plan, "rings.tx_push").kind, StepKind::Refused);
        EXPECT_TRUE(contains(step(plan, "rings.tx_push").note, "supported_ring_params") ||
                    contains(step(plan, "rings.tx_push").note, "set_ringparam"))
            << step(plan, "rings.tx_push").note;
        expect_refused_untouched(plan, nic);
        EXPECT_EQ(step(plan_of("[rings]\ntx_push = false\n", nic), "rings.tx_push").kind,
                  StepKind::Unchanged);
    }
}

TEST_F(DriverRulesTest, ADriverOutsideTheTableKeepsReportedAsSettableAndThePlanSaysSo) {
    auto nic = test::ixgbe_port();
    nic.id.driver = "mlx5_core";
    nic.values.set(Key::CoalTxFramesIrq, 256);
    auto plan = plan_of("[coalesce]\ntx_frames_irq = 64\n", nic);
    EXPECT_EQ(step(plan, "coalesce.tx_frames_irq").kind, StepKind::Change);
    ASSERT_EQ(plan.interfaces[0].warnings.size(), 1U);
    EXPECT_EQ(plan.interfaces[0].warnings[0],
              "nictune's driver table does not cover mlx5_core: whether it accepts what it "
              "reports is unknown, the kernel will judge each value");
    // A known driver gets no such warning; nor does an MTU-only plan.
    EXPECT_TRUE(
        plan_of("[coalesce]\nrx_usecs = 50\n", test::ixgbe_port()).interfaces[0].warnings.empty());
    EXPECT_TRUE(plan_of("[link]\nmtu = 9000\n", nic).interfaces[0].warnings.empty());
    // Intel's out-of-tree ixgbe is other code than the in-tree driver the table describes.
    auto oot = test::ixgbe_port();
    oot.id.module_version = "5.3.6";
    oot.values.set(Key::CoalTxFramesIrq, 256);
    auto p2 = plan_of("[coalesce]\ntx_frames_irq = 64\n", oot);
    EXPECT_EQ(step(p2, "coalesce.tx_frames_irq").kind, StepKind::Change);
    ASSERT_EQ(p2.interfaces[0].warnings.size(), 1U);
    EXPECT_EQ(p2.interfaces[0].warnings[0],
              "ixgbe is an out-of-tree build (module version 5.3.6), which nictune's driver "
              "table does not describe: whether it accepts what it reports is unknown, the "
              "kernel will judge each value");
}

TEST_F(DriverRulesTest, AKeyTheDriverNeitherReportsNorAcceptsIsUnsupportedWithTheReason) {
    auto plan = plan_of("[coalesce]\nrx_frames = 8\n", test::ixgbe_port());
    const auto& s = step(plan, "coalesce.rx_frames");
    EXPECT_EQ(s.kind, StepKind::Unsupported);
    EXPECT_EQ(s.note,
              "ixgbe does not report coalesce.rx_frames; ixgbe accepts only rx_usecs, tx_usecs in "
              "[coalesce] (drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c "
              "supported_coalesce_params)");
    EXPECT_TRUE(plan.refusals().empty());
}

// ---- values: ranges and rounding -------------------------------------------------

TEST_F(DriverRulesTest, ValuesOutsideTheDriversRangeAreRefusedNamingTheRangeAndItsSource) {
    struct Case {
        NicState nic;
        std::string profile, key, note;
    };
    auto i40e = test::i40e_port();
    i40e.values.set(Key::CoalAdaptiveRx, 0);
    const std::vector<Case> cases = {
        {test::ixgbe_port(), "[coalesce]\nrx_usecs = 1023\n", "coalesce.rx_usecs",
         "ixgbe accepts coalesce.rx_usecs 0..1022 (drivers/net/ethernet/intel/ixgbe/"
         "ixgbe_ethtool.c ixgbe_set_coalesce (IXGBE_MAX_EITR >> 2))"},
        {test::ixgbe_port(), "[rings]\nrx = 32\n", "rings.rx",
         "ixgbe accepts rings.rx 64..4096 (rounded up to a multiple of 8)"},
        {i40e, "[coalesce]\nrx_usecs = 8161\n", "coalesce.rx_usecs",
         "i40e accepts coalesce.rx_usecs 0..8160 (rounded up to a multiple of 2)"},
        {i40e, "[coalesce]\nrx_usecs_high = 240\n", "coalesce.rx_usecs_high",
         "i40e accepts coalesce.rx_usecs_high 0..236 (rounded down to a multiple of 4)"},
        {i40e, "[rings]\nrx = 32\n", "rings.rx", "i40e accepts rings.rx 64..the device's maximum"},
        {test::e1000e_port(), "[coalesce]\nrx_usecs = 2\n", "coalesce.rx_usecs",
         "e1000e accepts coalesce.rx_usecs 0, 1, 3, 4 or 10..10000"},
        {test::e1000e_port(), "[coalesce]\nrx_usecs = 7\n", "coalesce.rx_usecs",
         "drivers/net/ethernet/intel/e1000e/ethtool.c e1000_set_coalesce"},
        {test::netdevsim_port(), "[pause]\nautoneg = true\n", "pause.autoneg",
         "netdevsim accepts pause.autoneg 0 (drivers/net/netdevsim/ethtool.c "
         "nsim_set_pauseparam (autoneg -> EINVAL))"},
        {test::veth(), "[channels]\nrx = 0\n", "channels.rx", "veth accepts channels.rx 1.."},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.profile);
        auto nic = c.nic;
        auto plan = plan_of(c.profile, nic);
        const auto& s = step(plan, c.key);
        EXPECT_EQ(s.kind, StepKind::Refused);
        EXPECT_EQ(s.resolution, Resolution::OutOfRange);
        EXPECT_TRUE(contains(s.note, c.note)) << s.note;
        expect_refused_untouched(plan, nic);
    }
    // igb: 4..9 are not modes there.
    auto igb = test::ixgbe_port();
    igb.id.driver = "igb";
    igb.values.set(Key::CoalRxUsecs, 3);
    EXPECT_EQ(step(plan_of("[coalesce]\nrx_usecs = 4\n", igb), "coalesce.rx_usecs").kind,
              StepKind::Refused);
    EXPECT_EQ(step(plan_of("[coalesce]\nrx_usecs = 10\n", igb), "coalesce.rx_usecs").kind,
              StepKind::Change);
}

TEST_F(DriverRulesTest, I40eRoundsUsecsUpTo2AndUsecsHighDownTo4AndThePlanSaysSo) {
    auto nic = test::i40e_port();
    auto plan = plan_of(
        "[coalesce]\nadaptive_rx = false\nrx_usecs = 51\nrx_usecs_high = 21\n[rings]\nrx = 100\n",
        nic);
    const auto& usecs = step(plan, "coalesce.rx_usecs");
    EXPECT_EQ(usecs.kind, StepKind::Change);
    EXPECT_EQ(usecs.resolution, Resolution::Adjusted);
    EXPECT_EQ(usecs.target, Scalar{uint64_t{52}});
    EXPECT_EQ(usecs.requested, "coalesce.rx_usecs = 51");
    EXPECT_TRUE(contains(usecs.note, "i40e stores coalesce.rx_usecs 51 as 52")) << usecs.note;
    EXPECT_EQ(step(plan, "coalesce.rx_usecs_high").target, Scalar{uint64_t{20}});
    EXPECT_EQ(step(plan, "rings.rx").target, Scalar{uint64_t{128}});
    EXPECT_TRUE(plan.refusals().empty());

    // The driver does round (the fake kernel does what i40e does): the
    // outcome is "adjusted", nothing fails, nothing is rolled back.
    be.adjust(Key::CoalRxUsecs, [](uint64_t v) { return (v + 1) / 2 * 2; });
    be.adjust(Key::CoalRxUsecsHigh, [](uint64_t v) { return v / 4 * 4; });
    be.adjust(Key::RingsRx, [](uint64_t v) { return (v + 31) / 32 * 32; });
    auto r = apply(plan, nic);
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    for (const auto& sr : r.interfaces[0].steps)
        if (sr.step.resolution == Resolution::Adjusted) {
            EXPECT_EQ(sr.outcome, Outcome::Adjusted) << sr.step.setting.path();
        }
    EXPECT_EQ(be.nics[0].values.get(Key::CoalRxUsecs), 52U);

    // A value that rounds to what the device has is no change at all.
    nic.values.set(Key::CoalAdaptiveRx, 0);
    nic.values.set(Key::CoalRxUsecs, 52);
    EXPECT_EQ(step(plan_of("[coalesce]\nrx_usecs = 51\n", nic), "coalesce.rx_usecs").kind,
              StepKind::Unchanged);
}

TEST_F(DriverRulesTest, E1000ePredictsWhatItsInterruptRateReadsBackAs) {
    auto plan = plan_of("[coalesce]\nrx_usecs = 7000\n[rings]\nrx = 100\n", test::e1000e_port());
    EXPECT_EQ(step(plan, "coalesce.rx_usecs").target, Scalar{uint64_t{7142}});
    EXPECT_EQ(step(plan, "coalesce.rx_usecs").resolution, Resolution::Adjusted);
    EXPECT_EQ(step(plan, "rings.rx").target, Scalar{uint64_t{104}});
}

// ---- checks that depend on the device's state ------------------------------------

TEST_F(DriverRulesTest, I40eRefusesAnRxUsecsChangeWhileAdaptiveRxStaysOn) {
    auto nic = test::i40e_port();  // adaptive-rx on, rx-usecs 50
    for (const char* text :
         {"[coalesce]\nrx_usecs = 84\n", "[coalesce]\nadaptive_rx = true\nrx_usecs = 84\n"}) {
        SCOPED_TRACE(text);
        auto plan = plan_of(text, nic);
        const auto& s = step(plan, "coalesce.rx_usecs");
        EXPECT_EQ(s.kind, StepKind::Refused);
        EXPECT_EQ(s.resolution, Resolution::DriverRefuses);
        EXPECT_TRUE(contains(s.note, "i40e refuses an rx_usecs change while adaptive_rx stays on"))
            << s.note;
        EXPECT_TRUE(contains(s.note, "set adaptive_rx = false with it")) << s.note;
        expect_refused_untouched(plan, nic);
    }
    // Turned off in the same SET, the driver takes it.
    auto plan = plan_of("[coalesce]\nadaptive_rx = false\nrx_usecs = 84\n", nic);
    EXPECT_TRUE(plan.refusals().empty());
    EXPECT_EQ(step(plan, "coalesce.rx_usecs").kind, StepKind::Change);
    // The same for TX.
    EXPECT_EQ(step(plan_of("[coalesce]\ntx_usecs = 84\n", nic), "coalesce.tx_usecs").resolution,
              Resolution::DriverRefuses);
    // Already at the value: nothing is sent, nothing refused.
    EXPECT_EQ(step(plan_of("[coalesce]\nrx_usecs = 50\n", nic), "coalesce.rx_usecs").kind,
              StepKind::Unchanged);
}

TEST_F(DriverRulesTest, IxgbeRefusesTxUsecsWhileRxAndTxShareVectors) {
    auto nic = test::ixgbe_port();  // tx-usecs reported 0: shared vectors, the default
    auto plan = plan_of("[coalesce]\ntx_usecs = 50\n", nic);
    const auto& s = step(plan, "coalesce.tx_usecs");
    EXPECT_EQ(s.kind, StepKind::Refused);
    EXPECT_TRUE(contains(s.note, "ixgbe refuses tx_usecs while RX and TX share interrupt vectors"))
        << s.note;
    EXPECT_TRUE(contains(s.note, "rx_usecs sets the moderation of both")) << s.note;
    expect_refused_untouched(plan, nic);
    // A port whose vectors are separate reports its own tx-usecs and takes it.
    nic.values.set(Key::CoalTxUsecs, 1);
    EXPECT_EQ(step(plan_of("[coalesce]\ntx_usecs = 50\n", nic), "coalesce.tx_usecs").kind,
              StepKind::Change);
}

TEST_F(DriverRulesTest, I40eTxUsecsHighIsItsRxUsecsHigh) {
    auto nic = test::i40e_port();
    auto plan = plan_of("[coalesce]\ntx_usecs_high = 20\n", nic);
    const auto& s = step(plan, "coalesce.rx_usecs_high");
    EXPECT_EQ(s.resolution, Resolution::Translated);
    EXPECT_EQ(s.requested, "coalesce.tx_usecs_high = 20");
    EXPECT_EQ(s.target, Scalar{uint64_t{20}});
    auto both = plan_of("[coalesce]\nrx_usecs_high = 20\ntx_usecs_high = 20\n", nic);
    EXPECT_TRUE(both.refusals().empty());
    int changes = 0;
    for (const auto& st : both.interfaces[0].steps)
        changes += st.kind == StepKind::Change;
    EXPECT_EQ(changes, 1) << "one rate limit, set once";
    auto differ = plan_of("[coalesce]\nrx_usecs_high = 20\ntx_usecs_high = 40\n", nic);
    ASSERT_EQ(differ.refusals().size(), 1U);
    EXPECT_TRUE(contains(differ.refusals()[0], "contradicts") ||
                contains(differ.refusals()[0], "but the profile also sets"))
        << differ.refusals()[0];
}

// ---- which changes reset the link --------------------------------------------

TEST_F(DriverRulesTest, WhichChangesResetTheLinkIsPerDriver) {
    const char* rings = "[rings]\nrx = 1024\n";
    EXPECT_TRUE(step(plan_of(rings, test::e1000e_port()), "rings.rx").resets_link);
    EXPECT_TRUE(step(plan_of(rings, test::ixgbe_port()), "rings.rx").resets_link);
    EXPECT_FALSE(step(plan_of(rings, test::netdevsim_port()), "rings.rx").resets_link)
        << "netdevsim only stores the value";
    auto virtio = test::ixgbe_port();
    virtio.id.driver = "virtio_net";
    EXPECT_FALSE(
        step(plan_of("[channels]\ncombined = 2\n", virtio), "channels.combined").resets_link);
    EXPECT_TRUE(step(plan_of("[channels]\nrx = 2\n", test::veth()), "channels.rx").resets_link);
    EXPECT_TRUE(step(plan_of("[pause]\nrx = false\n", test::ixgbe_port()), "pause.rx").resets_link);
    EXPECT_FALSE(
        step(plan_of("[coalesce]\nrx_usecs = 50\n", test::e1000e_port()), "coalesce.rx_usecs")
            .resets_link);
    // e1000e restarts the link for flow control only while pause autoneg is on.
    auto e1k = test::e1000e_port();
    EXPECT_TRUE(step(plan_of("[pause]\nrx = false\n", e1k), "pause.rx").resets_link);
    EXPECT_FALSE(
        step(plan_of("[pause]\nautoneg = false\nrx = false\n", e1k), "pause.rx").resets_link);
    // A driver outside the table: the schema's defaults (queues and MTU).
    auto other = test::ixgbe_port();
    other.id.driver = "mlx5_core";
    EXPECT_TRUE(step(plan_of(rings, other), "rings.rx").resets_link);
    EXPECT_FALSE(step(plan_of("[pause]\nrx = false\n", other), "pause.rx").resets_link);
}

TEST_F(DriverRulesTest, IxgbeResetsWhenRxUsecsTurnsRscOnOrOffOrCrossesTenMicroseconds) {
    auto lro = test::ixgbe_port();  // rx-usecs 1 (adaptive)
    lro.features = test::make_features({"rx-lro", "rx-gro", "rx-checksum"}, {});
    auto no_lro = test::ixgbe_port();
    struct Case {
        const NicState* nic;
        uint64_t from, to;
        bool resets;
    };
    const std::vector<Case> cases = {
        {&lro, 1, 0, true},      // RSC off (and WTHRESH)
        {&lro, 1, 50, false},    // RSC stays on, both >= 10
        {&lro, 50, 8, true},     // crosses 10 us
        {&lro, 20, 12, false},   // nothing crosses
        {&lro, 8, 6, true},      // RSC off at 6 and below
        {&no_lro, 8, 6, false},  // no LRO: no RSC to turn off
        {&no_lro, 1, 0, true},   // WTHRESH
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(std::to_string(c.from) + " -> " + std::to_string(c.to));
        auto nic = *c.nic;
        nic.values.set(Key::CoalRxUsecs, c.from);
        auto plan = plan_of("[coalesce]\nrx_usecs = " + std::to_string(c.to) + "\n", nic);
        const auto& s = step(plan, "coalesce.rx_usecs");
        EXPECT_EQ(s.resets_link, c.resets);
        if (c.resets) {
            EXPECT_TRUE(contains(s.note, "ixgbe resets the adapter when rx-usecs")) << s.note;
        }
    }
    // A plan that turns LRO off (features go before coalescing): 8 -> 6 no
    // longer touches RSC.
    auto nic = lro;
    nic.values.set(Key::CoalRxUsecs, 8);
    EXPECT_FALSE(step(plan_of("[features]\nlro = false\n[coalesce]\nrx_usecs = 6\n", nic),
                      "coalesce.rx_usecs")
                     .resets_link);
}

// ---- features the kernel will not give ------------------------------------------

TEST_F(DriverRulesTest, AFixedFeatureIsBlockedWithTheReasonNotFailed) {
    auto nic = test::e1000e_port();  // rx-lro fixed off
    auto plan = plan_of("[features]\nlro = true\n", nic);
    const auto& s = step(plan, "features.rx-lro");
    EXPECT_EQ(s.kind, StepKind::Blocked);
    EXPECT_EQ(s.note, "rx-lro is fixed off on this device (e1000e cannot change it)");
    EXPECT_TRUE(plan.refusals().empty());
    auto r = apply(plan, nic);
    EXPECT_EQ(r.result, TxResult::Applied);
    EXPECT_EQ(r.interfaces[0].steps[0].outcome, Outcome::Blocked);
    EXPECT_TRUE(be.calls.empty());
}

TEST_F(DriverRulesTest, AFeatureWhoseRequestTheKernelOverridesIsBlocked) {
    // ethtool's "off [requested on]": the wanted bit is set, the active one not.
    auto nic = test::ixgbe_port();
    auto& fs = *nic.features;
    const auto tso = *fs.index_of("tx-tcp-segmentation");
    fs.active[tso / 32] &= ~(1U << (tso % 32));
    auto plan = plan_of("[features]\ntx-tcp-segmentation = true\n", nic);
    const auto& s = step(plan, "features.tx-tcp-segmentation");
    EXPECT_EQ(s.kind, StepKind::Blocked);
    EXPECT_TRUE(
        contains(s.note, "the kernel keeps tx-tcp-segmentation off although it is requested"))
        << s.note;
    auto r = apply(plan, nic);
    EXPECT_EQ(r.result, TxResult::Applied);
    EXPECT_TRUE(be.calls.empty());
    // With another feature changing in the same plan (which may lift the
    // cause), it is sent, and verification says what came of it.
    auto both = plan_of("[features]\ntx-tcp-segmentation = true\ntx-scatter-gather = false\n", nic);
    EXPECT_EQ(step(both, "features.tx-tcp-segmentation").kind, StepKind::Change);
}

TEST_F(DriverRulesTest, AFeatureTheKernelKeepsOffAfterTheSetIsBlockedNotRolledBack) {
    auto nic = test::ixgbe_port();
    auto plan = plan_of("[link]\nmtu = 9000\n[features]\nlro = true\n", nic);
    ASSERT_EQ(step(plan, "features.rx-lro").kind, StepKind::Change);
    be.kept_off = {"rx-lro"};
    auto r = apply(plan, nic);
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    for (const auto& sr : r.interfaces[0].steps) {
        if (sr.step.setting.path() != "features.rx-lro") continue;
        EXPECT_EQ(sr.outcome, Outcome::Blocked);
        EXPECT_TRUE(contains(sr.step.note, "the kernel keeps rx-lro off")) << sr.step.note;
    }
    EXPECT_EQ(be.nics[0].values.get(Key::LinkMtu), 9000U) << "the rest stays applied";
}

TEST_F(DriverRulesTest, LroIsBlockedWhileIpForwardingIsOn) {
    auto nic = test::ixgbe_port();
    SystemState fwd;
    fwd.sysctl = {{"net.ipv4.ip_forward", "1"}, {"net.ipv6.conf.all.forwarding", "0"}};
    auto plan = plan_of("[features]\nlro = true\n", nic, fwd);
    const auto& s = step(plan, "features.rx-lro");
    EXPECT_EQ(s.kind, StepKind::Blocked);
    EXPECT_TRUE(contains(s.note, "IP forwarding is on (net.ipv4.ip_forward = 1)")) << s.note;
    fwd.sysctl[0].value = "0";
    EXPECT_EQ(step(plan_of("[features]\nlro = true\n", nic, fwd), "features.rx-lro").kind,
              StepKind::Change);
    // Turning LRO off is always fine, and the plan reads forwarding only for a feature turned on.
    EXPECT_TRUE(plan_sysctls(profile_of("t", "[features]\nlro = false\n")).empty());
    EXPECT_EQ(plan_sysctls(profile_of("t", "[features]\nlro = true\n")),
              (std::vector<std::string>{"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"}));
}

TEST_F(DriverRulesTest, AuditReportsRefusalsAndBlockedFeatures) {
    auto nic = test::i40e_port();
    auto p = profile_of("t", "[coalesce]\nrx_usecs = 84\n[features]\nhw-tc-offload = true\n");
    const auto tc = *nic.features->index_of("hw-tc-offload");
    nic.features->hw[tc / 32] &= ~(1U << (tc % 32));  // fixed off
    AuditContext ctx{&FactsBook::builtin(), nullptr, ""};
    auto findings = audit_interface(nic, &p, ctx);
    bool refused = false, blocked = false;
    for (const auto& f : findings) {
        if (f.key == "coalesce.rx_usecs") {
            refused = true;
            EXPECT_EQ(f.severity, Severity::Fail);
            EXPECT_TRUE(contains(f.message, "i40e refuses an rx_usecs change")) << f.message;
        }
        if (f.key == "features.hw-tc-offload") {
            blocked = true;
            EXPECT_EQ(f.severity, Severity::Info);
            EXPECT_TRUE(contains(f.message, "fixed off")) << f.message;
        }
    }
    EXPECT_TRUE(refused);
    EXPECT_TRUE(blocked);
}

TEST_F(DriverRulesTest, ThePlansTextAndJsonSayBlockedAndAdjusted) {
    auto nic = test::e1000e_port();
    auto plan = plan_of("[coalesce]\nrx_usecs = 7000\n[features]\nlro = true\n", nic);
    auto j = report::plan_json(plan);
    bool adjusted = false, blocked = false;
    for (const auto& s : j.at("interfaces").at(0).at("steps")) {
        if (s.at("key") == "coalesce.rx_usecs") {
            adjusted = true;
            EXPECT_EQ(s.at("resolution"), "adjusted");
            EXPECT_EQ(s.at("target"), 7142);
        }
        if (s.at("key") == "features.rx-lro") {
            blocked = true;
            EXPECT_EQ(s.at("kind"), "blocked");
        }
    }
    EXPECT_TRUE(adjusted && blocked);
    const auto text = report::plan_text(j, false);
    EXPECT_TRUE(contains(text, "features.rx-lro")) << text;
    EXPECT_TRUE(contains(text, "blocked (false)  rx-lro is fixed off")) << text;
    EXPECT_TRUE(contains(text, "3 -> 7142")) << text;
}

}  // namespace
}  // namespace nictune
