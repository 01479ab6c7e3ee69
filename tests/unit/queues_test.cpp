// [private_flags], [rps] and [xps]: the CPU mask form, the PRIVFLAGS codec on
// bytes as the kernel sends them, the sysfs queue files on a fixture tree,
// and plan, apply and rollback over the fake backend (veth and netdevsim have
// no private flags; the global net.core.rps_sock_flow_entries is never
// written by a test outside a fake).
#include "sysinfo/queues.hpp"

#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "engine/manager.hpp"
#include "engine/transaction.hpp"
#include "ethnl/codecs.hpp"
#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "model/cpulist.hpp"
#include "profile/loader.hpp"
#include "support/profile_text.hpp"
#include "sysinfo/sysfs.hpp"

namespace nictune {
namespace {
using ::nictune::test::profile_of;
namespace fs = std::filesystem;

TEST(CpuMask, ReadsTheKernelsWordsMostSignificantFirst) {
    EXPECT_EQ(parse_cpumask("0\n"), std::vector<unsigned>{});
    EXPECT_EQ(parse_cpumask("00000000,0000000f"), (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_EQ(parse_cpumask("1,00000001"), (std::vector<unsigned>{0, 32}));
    EXPECT_EQ(parse_cpumask("00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
                            "00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
                            "00000000,00000003\n"),
              (std::vector<unsigned>{0, 1}));
    EXPECT_FALSE(parse_cpumask(""));
    EXPECT_FALSE(parse_cpumask("xyz"));
    EXPECT_FALSE(parse_cpumask("1,"));
    EXPECT_FALSE(parse_cpumask("123456789"));  // a word has 8 digits at most
}

TEST(CpuMask, WritesTheShortestFormTheKernelAccepts) {
    EXPECT_EQ(format_cpumask({}), "0");
    EXPECT_EQ(format_cpumask({0, 1, 2, 3}), "f");
    EXPECT_EQ(format_cpumask({32}), "1,00000000");
    for (const char* list : {"0", "1-3", "0,31-33,63", "5,70"}) {
        auto cpus = parse_cpulist(list);
        ASSERT_TRUE(cpus);
        EXPECT_EQ(parse_cpumask(format_cpumask(*cpus)), *cpus) << list;
    }
}

// PRIVFLAGS_GET_REPLY for e1000e's one flag, s0ix-enabled on, in the form the
// kernel builds it (privflags_fill_reply: a compact bitset with no mask).
static_assert(ETHTOOL_MSG_PRIVFLAGS_GET_REPLY == 14 && ETHTOOL_A_PRIVFLAGS_FLAGS == 2 &&
              ETHTOOL_A_BITSET_SIZE == 2 && ETHTOOL_A_BITSET_VALUE == 4);
const std::array<uint8_t, 68> kPrivFlagsReply = {
    68, 0, 0,    0,    0x14, 0,   0,   0,   1, 0, 0, 0, 0, 0, 0, 0,  // nlmsghdr
    14, 1, 0,    0,                                                  // genl: PRIVFLAGS_GET_REPLY v1
    24, 0, 0x01, 0x80,                                               // HEADER (nested)
    8,  0, 1,    0,    2,    0,   0,   0,                            //   DEV_INDEX 2
    9,  0, 2,    0,    'e',  't', 'h', '0', 0, 0, 0, 0,              //   DEV_NAME "eth0"
    24, 0, 0x02, 0x80,                                               // FLAGS (nested)
    4,  0, 1,    0,                                                  //   BITSET_NOMASK
    8,  0, 2,    0,    1,    0,   0,   0,                            //   BITSET_SIZE 1
    8,  0, 4,    0,    1,    0,   0,   0,                            //   BITSET_VALUE 0x1
};

const nlmsghdr* as_msg(const uint8_t* bytes) {
    return reinterpret_cast<const nlmsghdr*>(bytes);
}

TEST(PrivFlagsCodec, DecodesTheKernelsCompactReply) {
    alignas(nlmsghdr) std::array<uint8_t, 68> buf = kPrivFlagsReply;
    auto r = ethnl::decode_private_flags(as_msg(buf.data()));
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(r->ifindex, 2);
    EXPECT_EQ(r->nbits, 1U);
    auto flags = ethnl::to_private_flags(*r, FeatureNames{"s0ix-enabled"});
    ASSERT_EQ(flags.size(), 1U);
    EXPECT_EQ(flags[0], (PrivateFlag{"s0ix-enabled", true}));
    // Off: the value word is 0.
    buf[64] = 0;
    r = ethnl::decode_private_flags(as_msg(buf.data()));
    ASSERT_TRUE(r);
    EXPECT_FALSE(ethnl::to_private_flags(*r, FeatureNames{"s0ix-enabled"})[0].on);
}

TEST(PrivFlagsCodec, RefusesATruncatedBitsetAndIgnoresUnknownAttributes) {
    alignas(nlmsghdr) std::array<uint8_t, 68> buf = kPrivFlagsReply;
    buf[60] = 12;  // BITSET_VALUE claims more bytes than the nest holds
    EXPECT_FALSE(ethnl::decode_private_flags(as_msg(buf.data())));

    alignas(nlmsghdr) std::array<uint8_t, 76> more{};
    std::copy(kPrivFlagsReply.begin(), kPrivFlagsReply.end(), more.begin());
    more[0] = 76;
    const std::array<uint8_t, 8> unknown = {8, 0, 9, 0, 7, 7, 7, 7};  // attribute 9
    std::copy(unknown.begin(), unknown.end(), more.begin() + 68);
    auto r = ethnl::decode_private_flags(as_msg(more.data()));
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(r->nbits, 1U);
}

// The SET names each flag (a verbose bitset, no NOMASK), so only they change
// and the kernel itself refuses a name the driver does not have.
TEST(PrivFlagsCodec, EncodesOnlyTheNamedFlagsByName) {
    alignas(nlmsghdr) std::array<char, 512> buf{};
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
    const std::vector<PrivateFlag> flags = {{"legacy-rx", true}, {"flow-director-atr", false}};
    ethnl::encode_private_flags(nlh, flags);
    const auto* top = static_cast<const nlattr*>(mnl_nlmsg_get_payload(nlh));
    ASSERT_EQ(mnl_attr_get_type(top), ETHTOOL_A_PRIVFLAGS_FLAGS);
    const auto* bits = static_cast<const nlattr*>(mnl_attr_get_payload(top));
    ASSERT_EQ(mnl_attr_get_type(bits), ETHTOOL_A_BITSET_BITS);
    std::vector<std::pair<std::string, bool>> seen;
    const char* end = reinterpret_cast<const char*>(bits) + bits->nla_len;
    for (const auto* bit = static_cast<const nlattr*>(mnl_attr_get_payload(bits));
         reinterpret_cast<const char*>(bit) < end;
         bit = reinterpret_cast<const nlattr*>(reinterpret_cast<const char*>(bit) +
                                               MNL_ALIGN(bit->nla_len))) {
        ASSERT_EQ(mnl_attr_get_type(bit), ETHTOOL_A_BITSET_BITS_BIT);
        std::string name;
        bool value = false;
        const char* bend = reinterpret_cast<const char*>(bit) + bit->nla_len;
        for (const auto* a = static_cast<const nlattr*>(mnl_attr_get_payload(bit));
             reinterpret_cast<const char*>(a) < bend;
             a = reinterpret_cast<const nlattr*>(reinterpret_cast<const char*>(a) +
                                                 MNL_ALIGN(a->nla_len))) {
            if (mnl_attr_get_type(a) == ETHTOOL_A_BITSET_BIT_NAME) name = mnl_attr_get_str(a);
            if (mnl_attr_get_type(a) == ETHTOOL_A_BITSET_BIT_VALUE) value = true;
            EXPECT_NE(mnl_attr_get_type(a), ETHTOOL_A_BITSET_BIT_INDEX);
        }
        seen.emplace_back(name, value);
    }
    EXPECT_EQ(seen, (std::vector<std::pair<std::string, bool>>{{"legacy-rx", true},
                                                               {"flow-director-atr", false}}));
}

class QueueFilesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-queues-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        const auto q = root_ / "class/net/v0/queues";
        for (const char* d : {"rx-0", "rx-1", "tx-0", "tx-1"})
            fs::create_directories(q / d);
        std::ofstream(q / "rx-0/rps_cpus") << "00000000,00000003\n";
        std::ofstream(q / "rx-0/rps_flow_cnt") << "0\n";
        std::ofstream(q / "rx-1/rps_cpus") << "0\n";
        std::ofstream(q / "rx-1/rps_flow_cnt") << "4096\n";
        std::ofstream(q / "tx-0/xps_cpus") << "4\n";
        // tx-1 has no xps_cpus (a single-queue device answers ENOENT).
    }
    void TearDown() override { fs::remove_all(root_); }
    std::string file(const std::string& rel) {
        std::ifstream in(root_ / "class/net/v0/queues" / rel);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    fs::path root_;
};

TEST_F(QueueFilesTest, ReadsMasksAsCpuListsPerQueue) {
    sysinfo::QueueFiles files(root_);
    auto q = files.read("v0");
    ASSERT_TRUE(q) << q.error().str();
    ASSERT_TRUE(*q);
    ASSERT_EQ((*q)->rx.size(), 2U);
    EXPECT_EQ((*q)->rx[0], (RxQueue{"0-1", 0}));
    EXPECT_EQ((*q)->rx[1], (RxQueue{"", 4096}));
    ASSERT_EQ((*q)->tx.size(), 2U);
    EXPECT_EQ((*q)->tx[0].xps_cpus, "2");
    EXPECT_FALSE((*q)->tx[1].xps_cpus);
    auto none = files.read("nosuch");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
}

TEST_F(QueueFilesTest, BelowTheInterfacesOpenDirectoryReadsWhatTheWholePathReads) {
    sysinfo::QueueFiles files(root_);
    const auto by_path = files.read("v0");
    ASSERT_TRUE(by_path && *by_path);
    // Opened first, then moved away: read below the open directory, the
    // queues are still v0's; by the whole path there are none.
    const UniqueFd dir = sysinfo::open_interface_dir(root_, "v0");
    ASSERT_TRUE(dir);
    fs::rename(root_ / "class/net/v0", root_ / "class/net/moved");
    auto below = files.read_at(dir.get(), "v0");
    ASSERT_TRUE(below) << below.error().str();
    ASSERT_TRUE(*below);
    EXPECT_EQ((*below)->rx, (*by_path)->rx);
    EXPECT_EQ((*below)->tx.size(), (*by_path)->tx.size());
    EXPECT_EQ((*below)->tx[0].xps_cpus, (*by_path)->tx[0].xps_cpus);
    EXPECT_FALSE((*below)->tx[1].xps_cpus);
    auto gone = files.read_at(-1, "v0");
    ASSERT_TRUE(gone);
    EXPECT_FALSE(*gone);
    // A directory without queues/ has none; a queues/ that is a file is no
    // directory either (ENOTDIR), as by the path.
    fs::create_directories(root_ / "class/net/v1");
    std::ofstream(root_ / "class/net/v1/queues") << "x";
    const UniqueFd v1 = sysinfo::open_interface_dir(root_, "v1");
    auto not_dir = files.read_at(v1.get(), "v1");
    ASSERT_TRUE(not_dir);
    EXPECT_FALSE(*not_dir);
    EXPECT_FALSE(*files.read("v1"));
}

TEST_F(QueueFilesTest, WritesTheKernelsMaskFormAndNamesTheQueueOnError) {
    sysinfo::QueueFiles files(root_);
    std::ofstream(root_ / "class/net/v0/queues/rx-1/rps_cpus", std::ios::trunc);
    ASSERT_TRUE(files.write_cpus("v0", "v0", true, 1, "0,32"));
    EXPECT_EQ(file("rx-1/rps_cpus"), "1,00000001");
    std::ofstream(root_ / "class/net/v0/queues/rx-1/rps_flow_cnt", std::ios::trunc);
    ASSERT_TRUE(files.write_flow_cnt("v0", "v0", 1, 2048));
    EXPECT_EQ(file("rx-1/rps_flow_cnt"), "2048");
    auto gone = files.write_cpus("v0", "v0", false, 7, "1");
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, Errc::Unsupported);
    EXPECT_NE(gone.error().str().find("v0: xps.tx-7.cpus=\"1\""), std::string::npos)
        << gone.error().str();
}

TEST(SteeringProfile, RefusesWhatTheKernelWouldRoundOrCannotRead) {
    auto bad = [](const std::string& text) {
        auto p = profile::parse(text, "p.toml");
        return p ? std::string("accepted") : p.error().str();
    };
    EXPECT_NE(bad("[rps]\nflow_cnt = 3000\n")
                  .find("p.toml:2:12: rps.flow_cnt: 3000 must be 0 or "
                        "a power of two"),
              std::string::npos)
        << bad("[rps]\nflow_cnt = 3000\n");
    EXPECT_NE(bad("[rps]\ncpus = \"0-\"\n").find("p.toml:2:8: rps.cpus: '0-' is not a CPU list"),
              std::string::npos)
        << bad("[rps]\ncpus = \"0-\"\n");
    EXPECT_NE(bad("[xps]\ncpus = \"1\"\npolicy = \"off\"\n").find("not both"), std::string::npos);
    EXPECT_NE(bad("[xps]\npolicy = \"local\"\n").find("is not a policy"), std::string::npos);
    EXPECT_NE(bad("[private_flags]\nlegacy-rx = 1\n").find("expected true or false"),
              std::string::npos);
    EXPECT_NE(bad("[rps]\ncpu = \"1\"\n").find("unknown key 'cpu' in [rps]"), std::string::npos);
}

class SteeringTransaction : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-steer-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        be.nics = {test::i40e_port("p5p1")};
        be.nics[0].private_flags = std::vector<PrivateFlag>{
            {"link-down-on-close", false}, {"flow-director-atr", true}, {"legacy-rx", false}};
        // Queues whose originals differ, so that an exact rollback shows.
        be.nics[0].queues = QueueSet{{{"0", 0}, {"1", 256}, {"", 0}}, {{"0-1"}, {""}, {"3"}}};
        be.system.sysctl = {{"net.core.rps_sock_flow_entries", "0"}};
        initial = be.nics;
        initial_system = be.system;
    }
    void TearDown() override { fs::remove_all(dir_); }
    Plan plan_for(const Profile& p) {
        auto nics = be.read_interfaces(ReadRequest{{"p5p1"}, false});
        EXPECT_TRUE(nics);
        auto sys = be.read_system(SystemQuery{plan_sysctls(p)});
        return make_plan(p, *nics, *sys);
    }
    test::FakeBackend be;
    std::vector<NicState> initial;
    SystemState initial_system;
    fs::path dir_;
};

TEST_F(SteeringTransaction, UnknownPrivateFlagRefusesThePlanNamingFileInterfaceAndFlags) {
    StateStore store(dir_);
    auto p = profile_of("[link]\nmtu = 9000\n[private_flags]\nlegacy-rx = true\nno-such = true\n");
    auto r = apply_plan(be, store, plan_for(p), {});
    EXPECT_EQ(r.result, TxResult::Refused);
    ASSERT_EQ(r.refusals.size(), 1U);
    EXPECT_EQ(r.refusals[0],
              "p5p1: private_flags.no-such = true: p.toml:5:1: i40e has no private flag "
              "'no-such' (its flags: link-down-on-close, flow-director-atr, legacy-rx)");
    EXPECT_TRUE(be.calls.empty()) << "nothing may change";
}

TEST_F(SteeringTransaction, PrivateFlagsRpsXpsApplyInPhaseOrderAndRollBackExactly) {
    StateStore store(dir_);
    auto p = profile_of(
        "[channels]\ncombined = 8\n[private_flags]\nlegacy-rx = true\nflow-director-atr = "
        "false\n[rps]\ncpus = \"2-3\"\n[xps]\npolicy = \"off\"\n");
    auto r = apply_plan(be, store, plan_for(p), {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    std::vector<std::string> calls;
    for (const auto& c : be.calls)
        calls.push_back(c.what);
    EXPECT_EQ(calls,
              (std::vector<std::string>{"set_device channels p5p1", "set_private_flags p5p1",
                                        "set_queue p5p1 0", "set_queue p5p1 1", "set_queue p5p1 2",
                                        "set_queue p5p1 0", "set_queue p5p1 2"}))
        << "channels, private flags, RPS on every RX queue, XPS where it differs";
    const auto& n = be.nics[0];
    EXPECT_EQ(*n.private_flags, (std::vector<PrivateFlag>{{"link-down-on-close", false},
                                                          {"flow-director-atr", false},
                                                          {"legacy-rx", true}}));
    for (const auto& q : n.queues->rx)
        EXPECT_EQ(q.rps_cpus, "2-3");
    for (const auto& q : n.queues->tx)
        EXPECT_EQ(q.xps_cpus, "");

    auto rb = rollback_interfaces(be, store, {"p5p1"});
    ASSERT_EQ(rb.size(), 1U);
    EXPECT_EQ(be.nics[0].private_flags, initial[0].private_flags);
    EXPECT_EQ(be.nics[0].queues, initial[0].queues) << "each queue's own original";
    EXPECT_EQ(be.nics[0].values, initial[0].values);
}

TEST_F(SteeringTransaction, AFailedQueueWriteUndoesEverythingBeforeIt) {
    StateStore store(dir_);
    auto p = profile_of("[link]\nmtu = 9000\n[rps]\ncpus = \"2-3\"\n");
    be.fail_call(3, EINVAL, "");  // link, rx-0, then rx-1 fails
    auto r = apply_plan(be, store, plan_for(p), {});
    EXPECT_EQ(r.result, TxResult::RolledBack) << (r.error ? r.error->str() : "");
    EXPECT_EQ(be.nics[0].values, initial[0].values);
    EXPECT_EQ(be.nics[0].queues, initial[0].queues);
}

// The global table behind rps_flow_cnt: raised to flow_cnt times the RX
// queues (a power of two), saved and put back with the interface.
TEST_F(SteeringTransaction, FlowCountRaisesTheGlobalSocketFlowTableAndRestoresIt) {
    StateStore store(dir_);
    auto p = profile_of("[rps]\nflow_cnt = 2048\n");
    auto plan = plan_for(p);
    ASSERT_EQ(plan.system.size(), 1U);
    EXPECT_EQ(plan.system[0].setting.path(), "sysctl.net.core.rps_sock_flow_entries");
    EXPECT_EQ(plan.system[0].target, Scalar{std::string("8192")}) << "2048 x 3 queues, rounded up";
    auto r = apply_plan(be, store, plan, {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    EXPECT_EQ(be.system.sysctl[0].value, "8192");
    for (const auto& q : be.nics[0].queues->rx)
        EXPECT_EQ(q.rps_flow_cnt, 2048U);
    rollback_interfaces(be, store, {"p5p1"});
    EXPECT_EQ(be.system.sysctl[0].value, "0");
    EXPECT_EQ(be.nics[0].queues, initial[0].queues);

    // Never lowered: a larger table stays.
    be.system.sysctl[0].value = "65536";
    plan = plan_for(p);
    ASSERT_EQ(plan.system.size(), 1U);
    EXPECT_EQ(plan.system[0].kind, StepKind::Unchanged);
    // Where the sysctl does not exist (any network namespace but the first).
    be.system.sysctl.clear();
    plan = plan_for(p);
    ASSERT_EQ(plan.system.size(), 1U);
    EXPECT_EQ(plan.system[0].kind, StepKind::Unsupported);
    EXPECT_NE(plan.system[0].note.find("initial network namespace"), std::string::npos);
}

TEST_F(SteeringTransaction, ADriverWithoutPrivateFlagsIsUnsupportedNotAnError) {
    be.nics[0].private_flags.reset();
    auto plan = plan_for(profile_of("[private_flags]\nlegacy-rx = true\n"));
    ASSERT_EQ(plan.interfaces[0].steps.size(), 1U);
    EXPECT_EQ(plan.interfaces[0].steps[0].kind, StepKind::Unsupported);
    EXPECT_TRUE(plan.refusals().empty());
}

}  // namespace
}  // namespace nictune
