// [rss]: no device on these machines has RSS (veth and netdevsim answer the
// RSS ioctls with EOPNOTSUPP, qemu's e1000e reports hash fields only), so
// the section is exercised here: the ioctl codec on bytes laid out as
// include/uapi/linux/ethtool.h's struct ethtool_rxnfc and struct
// ethtool_rxfh (what the kernel's ethtool_get_rxnfc / ethtool_get_rxfh copy
// back), the text forms, the loader's errors, and plan, apply and rollback on
// the fake backend.
#include "model/rss.hpp"

#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <array>
#include <filesystem>

#include "engine/plan.hpp"
#include "engine/transaction.hpp"
#include "fakes/fake_backend.hpp"
#include "fakes/states.hpp"
#include "profile/loader.hpp"
#include "support/profile_text.hpp"
#include "sysinfo/rss_ioctl.hpp"

namespace nictune {
namespace {
using ::nictune::test::profile_of;
namespace fs = std::filesystem;

static_assert(ETHTOOL_GRXFH == 0x29 && ETHTOOL_SRXFH == 0x2a && ETHTOOL_GRXRINGS == 0x2d &&
              ETHTOOL_GRSSH == 0x46 && ETHTOOL_SRSSH == 0x47);
static_assert(TCP_V4_FLOW == 1 && RXH_IP_SRC == 0x10 && RXH_IP_DST == 0x20 &&
              RXH_L4_B_0_1 == 0x40 && RXH_L4_B_2_3 == 0x80);

// The first 16 bytes of struct ethtool_rxnfc (little endian): cmd, flow_type,
// data. ETHTOOL_GRXRINGS answered with 16 rings; the kernel copies the whole
// struct back, the rest zero.
std::vector<uint8_t> rxnfc_reply(std::array<uint8_t, 16> head) {
    std::vector<uint8_t> b(sizeof(ethtool_rxnfc), 0);
    std::copy(head.begin(), head.end(), b.begin());
    return b;
}
const std::array<uint8_t, 16> kGrxringsReply = {
    0x2d, 0, 0, 0,              // cmd ETHTOOL_GRXRINGS
    0,    0, 0, 0,              // flow_type
    16,   0, 0, 0, 0, 0, 0, 0,  // data: 16 RX rings
};
// ETHTOOL_GRXFH for tcp4 on a driver hashing IP SA, IP DA and both ports.
const std::array<uint8_t, 16> kGrxfhTcp4Reply = {
    0x29, 0, 0, 0,              // cmd ETHTOOL_GRXFH
    1,    0, 0, 0,              // flow_type TCP_V4_FLOW
    0xf0, 0, 0, 0, 0, 0, 0, 0,  // data: RXH_IP_SRC|IP_DST|L4_B_0_1|L4_B_2_3
};

TEST(RssCodec, DecodesTheRingCountAndHashFieldsReplies) {
    auto rings = sysinfo::rss::decode_rxnfc_data(rxnfc_reply(kGrxringsReply), ETHTOOL_GRXRINGS);
    ASSERT_TRUE(rings) << rings.error().str();
    EXPECT_EQ(*rings, 16U);
    // GRXFH copies only cmd, flow_type and data (16 bytes) back.
    auto fields = sysinfo::rss::decode_rxnfc_data(kGrxfhTcp4Reply, ETHTOOL_GRXFH);
    ASSERT_TRUE(fields) << fields.error().str();
    EXPECT_EQ(format_rss_hash_fields(*fields), "sdfn");
}

TEST(RssCodec, RefusesShortRepliesAndRepliesToAnotherCommand) {
    auto shorter = sysinfo::rss::decode_rxnfc_data(
        std::span<const uint8_t>(kGrxringsReply.data(), 12), ETHTOOL_GRXRINGS);
    ASSERT_FALSE(shorter);
    EXPECT_EQ(shorter.error().message,
              "ethtool_rxnfc of 12 bytes, shorter than its cmd, flow_type and data");
    auto other = sysinfo::rss::decode_rxnfc_data(kGrxfhTcp4Reply, ETHTOOL_GRXRINGS);
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().message, "ethtool_rxnfc answers command 41, not 45");
}

TEST(RssCodec, EncodesRingAndHashRequestsInTheRxnfcLayout) {
    auto b = sysinfo::rss::encode_rxnfc(ETHTOOL_SRXFH, TCP_V4_FLOW, RXH_IP_SRC | RXH_IP_DST);
    ASSERT_EQ(b.size(), sizeof(ethtool_rxnfc));
    const std::array<uint8_t, 16> want = {0x2a, 0, 0, 0, 1, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_TRUE(std::equal(want.begin(), want.end(), b.begin()));
    EXPECT_TRUE(std::all_of(b.begin() + 16, b.end(), [](uint8_t x) { return x == 0; }));
}

// struct ethtool_rxfh: cmd, rss_context, indir_size, key_size (u32 each),
// hfunc (u8), input_xfrm / rsvd8[0], rsvd8, rsvd32, then rss_config: the
// table (u32 each) and the key. The sizes-only answer of i40e-like hardware:
// 16 entries, a 52-byte key, Toeplitz.
const std::array<uint8_t, 24> kGrsshSizes = {
    0x46, 0, 0, 0,  // cmd ETHTOOL_GRSSH
    0,    0, 0, 0,  // rss_context 0
    16,   0, 0, 0,  // indir_size
    52,   0, 0, 0,  // key_size
    1,    0, 0, 0,  // hfunc ETH_RSS_HASH_TOP (toeplitz), input_xfrm, rsvd8[2]
    0,    0, 0, 0,  // rsvd32
};
std::vector<uint8_t> grssh_full(const std::vector<uint32_t>& table, uint32_t key = 52) {
    std::vector<uint8_t> b(kGrsshSizes.begin(), kGrsshSizes.end());
    b[8] = static_cast<uint8_t>(table.size());
    b[12] = static_cast<uint8_t>(key);
    for (uint32_t q : table)
        for (int i = 0; i < 4; ++i)
            b.push_back(static_cast<uint8_t>(q >> (8 * i)));
    for (uint32_t i = 0; i < key; ++i)
        b.push_back(static_cast<uint8_t>(0x6d + i));
    return b;
}

TEST(RssCodec, DecodesTheSizesThenTheTable) {
    auto head = sysinfo::rss::decode_rxfh(kGrsshSizes, false);
    ASSERT_TRUE(head) << head.error().str();
    EXPECT_EQ(head->indir_size, 16U);
    EXPECT_EQ(head->key_size, 52U);
    EXPECT_EQ(head->hfunc, 1U);
    EXPECT_TRUE(head->indirection.empty());
    std::vector<uint32_t> table;
    for (uint32_t i = 0; i < 16; ++i)
        table.push_back(i % 4);
    table[15] = 300;  // a queue number above 255 takes more than one byte
    auto full = sysinfo::rss::decode_rxfh(grssh_full(table), true);
    ASSERT_TRUE(full) << full.error().str();
    EXPECT_EQ(full->indirection, table);
    EXPECT_EQ(format_rss_hfunc(full->hfunc), "toeplitz");
}

TEST(RssCodec, RefusesATableShorterThanItsHeaderSays) {
    std::vector<uint32_t> table(16, 0);
    auto b = grssh_full(table);
    b.resize(b.size() - 1);  // the key's last byte is missing
    EXPECT_FALSE(sysinfo::rss::decode_rxfh(b, true));
    auto header =
        sysinfo::rss::decode_rxfh(std::span<const uint8_t>(kGrsshSizes.data(), 20), false);
    ASSERT_FALSE(header);
    EXPECT_EQ(header.error().message, "ethtool_rxfh of 20 bytes, shorter than its header");
    auto huge = std::vector<uint8_t>(kGrsshSizes.begin(), kGrsshSizes.end());
    huge[11] = 0x10;  // indir_size 0x10000010
    EXPECT_FALSE(sysinfo::rss::decode_rxfh(huge, false));
    auto other = std::vector<uint8_t>(kGrsshSizes.begin(), kGrsshSizes.end());
    other[0] = 0x47;
    auto answer = sysinfo::rss::decode_rxfh(other, false);
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().message, "ethtool_rxfh answers command 71, not GRSSH");
}

TEST(RssCodec, EncodesATableOrTheKernelsDefaultAndKeepsTheInputTransform) {
    std::vector<uint32_t> table = {0, 1, 2, 3, 0, 1, 2, 3};
    auto b = sysinfo::rss::encode_rxfh_set(table, 0x80);
    ASSERT_EQ(b.size(), 24U + 8 * 4);
    EXPECT_EQ(b[0], 0x47);  // ETHTOOL_SRSSH
    EXPECT_EQ(b[8], 8);     // indir_size
    EXPECT_EQ(b[12], 0);    // key_size 0: the key stays
    EXPECT_EQ(b[16], 0);    // hfunc ETH_RSS_HASH_NO_CHANGE
    EXPECT_EQ(b[17], 0x80) << "input_xfrm as read, so a 6.8+ kernel keeps symmetric hashing";
    EXPECT_EQ(b[24 + 4 * 3], 3);
    auto d = sysinfo::rss::encode_rxfh_set({});
    ASSERT_EQ(d.size(), 24U);
    EXPECT_EQ(d[8], 0) << "indir_size 0: the kernel's default spread";
    auto q = sysinfo::rss::encode_rxfh_query();
    ASSERT_EQ(q.size(), 24U);
    EXPECT_EQ(q[0], 0x46);
    EXPECT_TRUE(std::all_of(q.begin() + 1, q.end(), [](uint8_t x) { return x == 0; }));
}

TEST(RssCodec, TheDefaultGoesAsTheKernelsOwnAndATableEntryByEntry) {
    sysinfo::rss::RxfhReply head;
    head.indir_size = 8;
    head.key_size = 40;
    head.input_xfrm = 0;
    auto d = sysinfo::rss::encode_indirection("default", head, 8);
    ASSERT_TRUE(d) << d.error().str();
    ASSERT_EQ(d->size(), 24U);
    EXPECT_EQ((*d)[8], 0) << "indir_size 0, so that the driver's table is its own again";
    auto e = sysinfo::rss::encode_indirection("equal 3", head, 8);
    ASSERT_TRUE(e) << e.error().str();
    ASSERT_EQ(e->size(), 24U + 8 * 4);
    EXPECT_EQ((*e)[8], 8);
    for (std::size_t i = 0; i < 8; ++i)
        EXPECT_EQ((*e)[24 + 4 * i], i % 3) << i;
    EXPECT_FALSE(sysinfo::rss::encode_indirection("0 1", head, 8)) << "a list of another length";
    head.indir_size = 0;
    EXPECT_FALSE(sysinfo::rss::encode_indirection("equal 2", head, 8))
        << "a driver without a table";
}

TEST(RssForms, HashFieldsAreEthtoolsLettersInItsOrder) {
    EXPECT_EQ(format_rss_hash_fields(0xf0), "sdfn");
    // Each letter on its own, so that two swapped letters show.
    EXPECT_EQ(format_rss_hash_fields(RXH_IP_SRC), "s");
    EXPECT_EQ(format_rss_hash_fields(RXH_IP_DST), "d");
    EXPECT_EQ(format_rss_hash_fields(RXH_L4_B_0_1), "f");
    EXPECT_EQ(format_rss_hash_fields(RXH_L4_B_2_3), "n");
    EXPECT_EQ(parse_rss_hash_fields("s"), uint64_t{RXH_IP_SRC});
    EXPECT_EQ(parse_rss_hash_fields("t"), uint64_t{RXH_L3_PROTO});
    EXPECT_EQ(parse_rss_hash_fields("m"), uint64_t{RXH_L2DA});
    EXPECT_EQ(parse_rss_hash_fields("nfds"), 0xf0U);
    EXPECT_EQ(parse_rss_hash_fields("mvt"), uint64_t{RXH_L2DA | RXH_VLAN | RXH_L3_PROTO});
    EXPECT_EQ(parse_rss_hash_fields("r"), 0x80000000U);
    EXPECT_EQ(format_rss_hash_fields(0), "");
    EXPECT_FALSE(parse_rss_hash_fields("ss"));
    EXPECT_FALSE(parse_rss_hash_fields("sdx"));
    // A bit without a letter (RXH_GTP_TEID of newer kernels) survives a
    // round trip, so that a rollback restores it.
    EXPECT_EQ(format_rss_hash_fields(0x130), "0x130");
    EXPECT_EQ(parse_rss_hash_fields("0x130"), 0x130U);
}

TEST(RssForms, TablesReadAsDefaultEqualOrTheirEntries) {
    std::vector<uint32_t> t8(16), t4(16);
    for (uint32_t i = 0; i < 16; ++i)
        t8[i] = i % 8, t4[i] = i % 4;
    EXPECT_EQ(format_rss_indirection(t8, 8), "default");
    EXPECT_EQ(format_rss_indirection(t8, 16), "equal 8");
    EXPECT_EQ(format_rss_indirection(t4, 8), "equal 4");
    EXPECT_EQ(format_rss_indirection(std::vector<uint32_t>{0, 0, 1, 1}, 2), "0 0 1 1");
    EXPECT_EQ(rss_indirection_table("equal 4", 16, 8), t4);
    EXPECT_EQ(rss_indirection_table("default", 16, 8), t8);
    EXPECT_EQ(rss_indirection_table("0 0 1 1", 4, 2), (std::vector<uint32_t>{0, 0, 1, 1}));
    EXPECT_FALSE(rss_indirection_table("0 0 1", 4, 2)) << "a list of another length";
    EXPECT_FALSE(rss_indirection_table("equal 0", 4, 2));
    EXPECT_FALSE(rss_indirection_table("default", 4, 0));
    EXPECT_EQ(rss_equal_queues("equal 4", 8), 4U);
    EXPECT_EQ(rss_equal_queues("default", 8), 8U);
    EXPECT_FALSE(rss_equal_queues("0 0 1 1", 2));
}

std::string load_error(const std::string& text) {
    auto p = profile::parse(text, "p.toml");
    return p ? std::string("accepted") : p.error().str();
}

TEST(RssProfile, ReadsQueuesAndHashFieldsByFlowType) {
    auto p = profile::parse(
        "[rss]\nqueues = 4\n[rss.hash]\ntcp4 = \"sdfn\"\nesp6 = \"sd\"\nudp4 = \"ds\"\n", "p.toml");
    ASSERT_TRUE(p) << p.error().str();
    ASSERT_TRUE(p->rss_queues);
    EXPECT_EQ(p->rss_queues->value, 4U);
    ASSERT_EQ(p->rss_hash.size(), 3U);
    EXPECT_EQ(p->rss_hash[0].flow, "tcp4");
    EXPECT_EQ(p->rss_hash[0].fields, 0xf0U);
    EXPECT_EQ(p->rss_hash[1].flow, "ah6") << "esp6 is ethtool's other name of AH_ESP_V6_FLOW";
    EXPECT_EQ(p->rss_hash[2].fields, 0x30U);
    // The inline form is the same table.
    auto q = profile::parse("[rss]\nhash = { tcp6 = \"sdfn\" }\n", "p.toml");
    ASSERT_TRUE(q) << q.error().str();
    ASSERT_EQ(q->rss_hash.size(), 1U);
}

TEST(RssProfile, ErrorsNameFileLineAndColumn) {
    EXPECT_NE(load_error("[rss]\nqueues = 0\n")
                  .find("p.toml:2:10: rss.queues: 0 is out of range 1..65536"),
              std::string::npos)
        << load_error("[rss]\nqueues = 0\n");
    EXPECT_NE(
        load_error("[rss]\nqueues = \"4\"\n").find("p.toml:2:10: rss.queues: expected a number"),
        std::string::npos);
    EXPECT_NE(load_error("[rss]\nqueue = 4\n").find("p.toml:2:1: unknown key 'queue' in [rss]"),
              std::string::npos)
        << load_error("[rss]\nqueue = 4\n");
    EXPECT_NE(load_error("[rss.hash]\ntcp5 = \"sd\"\n")
                  .find("p.toml:2:1: rss.hash: unknown flow type 'tcp5'"),
              std::string::npos)
        << load_error("[rss.hash]\ntcp5 = \"sd\"\n");
    EXPECT_NE(load_error("[rss.hash]\ntcp4 = \"sdx\"\n")
                  .find("p.toml:2:8: rss.hash.tcp4: 'sdx' is not a set of ethtool's hash field "
                        "letters"),
              std::string::npos)
        << load_error("[rss.hash]\ntcp4 = \"sdx\"\n");
    EXPECT_NE(load_error("[rss.hash]\ntcp4 = \"\"\n").find("p.toml:2:8:"), std::string::npos);
    EXPECT_NE(load_error("[rss.hash]\nah4 = \"sd\"\nesp4 = \"sd\"\n")
                  .find("p.toml:3:1: rss.hash.esp4: ah4 and esp4 are one flow type"),
              std::string::npos)
        << load_error("[rss.hash]\nah4 = \"sd\"\nesp4 = \"sd\"\n");
    EXPECT_NE(load_error("[rss]\nhash = 3\n").find("p.toml:2:8: rss.hash: expected a table"),
              std::string::npos)
        << load_error("[rss]\nhash = 3\n");
}

std::vector<uint32_t> spread(std::size_t size, uint32_t n) {
    std::vector<uint32_t> t(size);
    for (std::size_t i = 0; i < size; ++i)
        t[i] = static_cast<uint32_t>(i % n);
    return t;
}

// An i40e port with 16 combined channels, a 32-entry table at the kernel's
// default and two flow types reported.
class RssTransaction : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-rss-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        be.nics = {test::i40e_port("p5p1")};
        be.nics[0].rss = RssState{16, spread(32, 16), 52, 1, {{"tcp4", 0xf0}, {"udp4", 0x30}}};
        be.nics[0].queues = QueueSet{{{"", 0}, {"", 0}}, {}};
        initial = be.nics;
    }
    void TearDown() override { fs::remove_all(dir_); }
    Plan plan_for(const Profile& p) {
        auto nics = be.read_interfaces(ReadRequest{{"p5p1"}, false});
        EXPECT_TRUE(nics);
        auto sys = be.read_system(SystemQuery{plan_sysctls(p)});
        return make_plan(p, *nics, *sys);
    }
    std::vector<std::string> calls() const {
        std::vector<std::string> out;
        for (const auto& c : be.calls)
            out.push_back(c.what);
        return out;
    }
    test::FakeBackend be;
    std::vector<NicState> initial;
    fs::path dir_;
};

TEST_F(RssTransaction, TableAndEachFlowTypeAreStepsOfTheirOwn) {
    auto plan =
        plan_for(profile_of("[rss]\nqueues = 4\n[rss.hash]\ntcp4 = \"sd\"\nudp4 = \"sd\"\n"));
    ASSERT_EQ(plan.interfaces[0].steps.size(), 3U);
    const auto& t = plan.interfaces[0].steps[0];
    EXPECT_EQ(t.setting.path(), "rss.indirection");
    EXPECT_EQ(t.phase, Phase::Rss);
    EXPECT_EQ(t.current, Scalar{std::string("default")});
    EXPECT_EQ(t.target, Scalar{std::string("equal 4")});
    EXPECT_EQ(t.kind, StepKind::Change);
    EXPECT_EQ(plan.interfaces[0].steps[1].setting.path(), "rss.hash.tcp4");
    EXPECT_EQ(plan.interfaces[0].steps[1].current, Scalar{std::string("sdfn")});
    EXPECT_EQ(plan.interfaces[0].steps[1].kind, StepKind::Change);
    EXPECT_EQ(plan.interfaces[0].steps[2].kind, StepKind::Unchanged);
}

TEST_F(RssTransaction, AppliesVerifiesAndRollsBackExactly) {
    StateStore store(dir_);
    auto r = apply_plan(be, store,
                        plan_for(profile_of("[rss]\nqueues = 4\n[rss.hash]\ntcp4 = \"sd\"\n")), {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    EXPECT_EQ(calls(),
              (std::vector<std::string>{"set_rss p5p1 indirection", "set_rss p5p1 hash.tcp4"}));
    EXPECT_EQ(*be.nics[0].rss->indirection, spread(32, 4));
    EXPECT_EQ(be.nics[0].rss->hash[0].fields, 0x30U);
    for (const auto& s : r.interfaces[0].steps)
        EXPECT_EQ(s.outcome, Outcome::Applied) << s.step.setting.path();

    auto rb = rollback_interfaces(be, store, {"p5p1"});
    ASSERT_EQ(rb.size(), 1U);
    EXPECT_EQ(rb[0].result, TxResult::RolledBack);
    EXPECT_EQ(be.nics[0].rss, initial[0].rss);
    EXPECT_TRUE(be.rss_configured.empty())
        << "the default comes back as the kernel's own (indir_size 0), not as a fixed table";
}

TEST_F(RssTransaction, MoreQueuesThanTheDeviceHasIsRefusedBeforeAnyChange) {
    StateStore store(dir_);
    auto r =
        apply_plan(be, store, plan_for(profile_of("[link]\nmtu = 9000\n[rss]\nqueues = 17\n")), {});
    EXPECT_EQ(r.result, TxResult::Refused);
    ASSERT_EQ(r.refusals.size(), 1U);
    EXPECT_EQ(r.refusals[0],
              "p5p1: rss.queues = 17: p.toml:4:10: p5p1 has 16 RX queues: the table cannot "
              "spread over 17");
    EXPECT_TRUE(be.calls.empty());
}

TEST_F(RssTransaction, TheLimitIsTheQueueCountAfterTheProfilesChannels) {
    auto r = plan_for(profile_of("[channels]\ncombined = 4\n[rss]\nqueues = 6\n")).refusals();
    ASSERT_EQ(r.size(), 1U);
    EXPECT_EQ(r[0],
              "p5p1: rss.queues = 6: p.toml:4:10: p5p1 has 4 RX queues after the profile's "
              "[channels]: the table cannot spread over 6");
    EXPECT_TRUE(
        plan_for(profile_of("[channels]\ncombined = 32\n[rss]\nqueues = 24\n")).refusals().empty());
}

TEST_F(RssTransaction, ChannelsFirstThenRssThenRpsAndTheRollbackRestoresTheDefault) {
    StateStore store(dir_);
    auto p = profile_of(
        "[channels]\ncombined = 4\n[coalesce]\nrx_usecs = 62\nadaptive_rx = false\n[rss]\nqueues "
        "= 4\n[rps]\ncpus = \"1\"\n");
    auto plan = plan_for(p);
    auto r = apply_plan(be, store, plan, {});
    ASSERT_EQ(r.result, TxResult::Applied) << (r.error ? r.error->str() : "");
    EXPECT_EQ(calls(), (std::vector<std::string>{
                           "set_device channels p5p1", "set_device coalesce p5p1",
                           "set_rss p5p1 indirection", "set_queue p5p1 0", "set_queue p5p1 1"}))
        << "issue 17's order: channels, (device settings), RSS, RPS";
    EXPECT_EQ(*be.nics[0].rss->indirection, spread(32, 4));
    rollback_interfaces(be, store, {"p5p1"});
    EXPECT_EQ(be.nics[0].values, initial[0].values);
    EXPECT_EQ(be.nics[0].rss, initial[0].rss)
        << "the table restored as the default before the channels grow back, then spread again";
}

TEST_F(RssTransaction, AFailedHashWriteUndoesTheTable) {
    StateStore store(dir_);
    be.fail_call(2, EINVAL, "");
    auto r = apply_plan(be, store,
                        plan_for(profile_of("[rss]\nqueues = 2\n[rss.hash]\ntcp4 = \"sd\"\n")), {});
    EXPECT_EQ(r.result, TxResult::RolledBack) << (r.error ? r.error->str() : "");
    EXPECT_EQ(be.nics[0].rss, initial[0].rss);
}

TEST_F(RssTransaction, ADriverWithoutRssIsUnsupportedAndNothingIsWritten) {
    StateStore store(dir_);
    be.nics[0].rss.reset();
    auto plan = plan_for(profile_of("[rss]\nqueues = 2\n[rss.hash]\ntcp4 = \"sd\"\n"));
    ASSERT_EQ(plan.interfaces[0].steps.size(), 2U);
    for (const auto& s : plan.interfaces[0].steps)
        EXPECT_EQ(s.kind, StepKind::Unsupported) << s.setting.path();
    EXPECT_TRUE(plan.refusals().empty());
    auto r = apply_plan(be, store, plan, {});
    EXPECT_EQ(r.result, TxResult::Applied);
    EXPECT_TRUE(be.calls.empty());
}

TEST(RssSetting, PathsParseBack) {
    for (const char* p : {"rss.indirection", "rss.hash.tcp4", "rss.hash.ah6"}) {
        auto id = SettingId::parse(p);
        ASSERT_TRUE(id) << p;
        EXPECT_EQ(id->path(), p);
    }
    EXPECT_FALSE(SettingId::parse("rss.hash.esp4")) << "state files hold canonical names only";
    EXPECT_FALSE(SettingId::parse("rss.queues"));
}

}  // namespace
}  // namespace nictune
