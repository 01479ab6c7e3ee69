// The ethtool netlink codecs, tested on bytes: messages built with libmnl the
// way the kernel lays them out, and replies captured from a real kernel
// (tests/data/ethnl, see the README there).
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ethnl/codecs.hpp"
#include "netlink/attr.hpp"

namespace nictune::ethnl {
namespace {

using netlink::attr_get;
using netlink::attr_len;
using netlink::attr_str;
using netlink::attr_type;
using netlink::AttrList;

// Any id: the decoders look at the genetlink command, not at the family id
// (which the kernel assigns at boot).
constexpr uint16_t kFamily = 21;

// A generic netlink message under construction.
class Msg {
  public:
    explicit Msg(uint8_t cmd) {
        nlh_ = mnl_nlmsg_put_header(buf_.data());
        nlh_->nlmsg_type = kFamily;
        auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh_, sizeof(genlmsghdr)));
        genl->cmd = cmd;
        genl->version = ETHTOOL_GENL_VERSION;
    }
    Msg(const Msg&) = delete;
    Msg& operator=(const Msg&) = delete;

    // The reply header nest the kernel puts first in every per-device reply.
    Msg& header(int ifindex, const char* name, uint16_t attr = kHeaderAttr) {
        begin(attr);
        if (ifindex > 0) u32(ETHTOOL_A_HEADER_DEV_INDEX, static_cast<uint32_t>(ifindex));
        if (name != nullptr) str(ETHTOOL_A_HEADER_DEV_NAME, name);
        return end();
    }
    Msg& u8(uint16_t type, uint8_t v) {
        mnl_attr_put_u8(nlh_, type, v);
        return *this;
    }
    Msg& u32(uint16_t type, uint32_t v) {
        mnl_attr_put_u32(nlh_, type, v);
        return *this;
    }
    Msg& str(uint16_t type, const char* s) {
        mnl_attr_put_strz(nlh_, type, s);
        return *this;
    }
    Msg& flag(uint16_t type) {
        mnl_attr_put(nlh_, type, 0, nullptr);
        return *this;
    }
    Msg& bytes(uint16_t type, std::size_t len, const void* data) {
        mnl_attr_put(nlh_, type, len, data);
        return *this;
    }
    Msg& words(uint16_t type, const std::vector<uint32_t>& w) {
        return bytes(type, w.size() * 4, w.data());
    }
    // Fixed-width value of `width` bytes (1 or 4), as the kernel sends them.
    Msg& value(uint16_t type, int width, uint32_t v) {
        return width == 1 ? u8(type, static_cast<uint8_t>(v)) : u32(type, v);
    }
    Msg& begin(uint16_t type) {
        nests_.push_back(mnl_attr_nest_start(nlh_, type));
        return *this;
    }
    Msg& end() {
        mnl_attr_nest_end(nlh_, nests_.back());
        nests_.pop_back();
        return *this;
    }
    // A compact bitset nest (ETHTOOL_A_BITSET_*), as the kernel sends it
    // with ETHTOOL_FLAG_COMPACT_BITSETS.
    Msg& compact_bitset(uint16_t type, uint32_t nbits, const std::vector<uint32_t>& value,
                        const std::vector<uint32_t>* mask = nullptr) {
        begin(type);
        if (mask == nullptr) flag(ETHTOOL_A_BITSET_NOMASK);
        u32(ETHTOOL_A_BITSET_SIZE, nbits);
        words(ETHTOOL_A_BITSET_VALUE, value);
        if (mask != nullptr) words(ETHTOOL_A_BITSET_MASK, *mask);
        return end();
    }

    [[nodiscard]] nlmsghdr* nlh() const { return nlh_; }
    // The last top-level attribute written.
    [[nodiscard]] nlattr* last_attr() const {
        nlattr* last = nullptr;
        for (const nlattr* a : AttrList::of(nlh_, GENL_HDRLEN))
            last = const_cast<nlattr*>(a);
        return last;
    }

  private:
    alignas(nlmsghdr) std::array<char, 16384> buf_{};
    nlmsghdr* nlh_;
    std::vector<nlattr*> nests_;
};

// ---------------------------------------------------------------------------
// Settings families. The attribute numbers and widths below are written out
// from the kernel's UAPI (not read from the schema table), so that a wrong
// row in the schema shows up here.

struct AttrCase {
    uint16_t attr;
    int width;  // bytes: 1 (u8) or 4 (u32)
    uint32_t value;
    Key key;
};

struct FamilyCase {
    Section section;
    uint8_t reply_cmd;
    uint8_t ntf_cmd;
    std::vector<AttrCase> attrs;
};

const FamilyCase kLinkModes = {
    Section::Link,
    ETHTOOL_MSG_LINKMODES_GET_REPLY,
    ETHTOOL_MSG_LINKMODES_NTF,
    {
        {ETHTOOL_A_LINKMODES_AUTONEG, 1, 1, Key::LinkAutoneg},
        {ETHTOOL_A_LINKMODES_SPEED, 4, 10000, Key::LinkSpeed},
        {ETHTOOL_A_LINKMODES_DUPLEX, 1, DUPLEX_FULL, Key::LinkDuplex},
    },
};

const FamilyCase kCoalesce = {
    Section::Coalesce,
    ETHTOOL_MSG_COALESCE_GET_REPLY,
    ETHTOOL_MSG_COALESCE_NTF,
    {
        {ETHTOOL_A_COALESCE_RX_USECS, 4, 50, Key::CoalRxUsecs},
        {ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 4, 64, Key::CoalRxFrames},
        {ETHTOOL_A_COALESCE_RX_USECS_IRQ, 4, 3, Key::CoalRxUsecsIrq},
        {ETHTOOL_A_COALESCE_RX_MAX_FRAMES_IRQ, 4, 4, Key::CoalRxFramesIrq},
        {ETHTOOL_A_COALESCE_TX_USECS, 4, 5, Key::CoalTxUsecs},
        {ETHTOOL_A_COALESCE_TX_MAX_FRAMES, 4, 6, Key::CoalTxFrames},
        {ETHTOOL_A_COALESCE_TX_USECS_IRQ, 4, 7, Key::CoalTxUsecsIrq},
        {ETHTOOL_A_COALESCE_TX_MAX_FRAMES_IRQ, 4, 8, Key::CoalTxFramesIrq},
        {ETHTOOL_A_COALESCE_STATS_BLOCK_USECS, 4, 9, Key::CoalStatsBlockUsecs},
        {ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1, 1, Key::CoalAdaptiveRx},
        {ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, 1, 0, Key::CoalAdaptiveTx},
        {ETHTOOL_A_COALESCE_PKT_RATE_LOW, 4, 10, Key::CoalPktRateLow},
        {ETHTOOL_A_COALESCE_RX_USECS_LOW, 4, 11, Key::CoalRxUsecsLow},
        {ETHTOOL_A_COALESCE_RX_MAX_FRAMES_LOW, 4, 12, Key::CoalRxFramesLow},
        {ETHTOOL_A_COALESCE_TX_USECS_LOW, 4, 13, Key::CoalTxUsecsLow},
        {ETHTOOL_A_COALESCE_TX_MAX_FRAMES_LOW, 4, 14, Key::CoalTxFramesLow},
        {ETHTOOL_A_COALESCE_PKT_RATE_HIGH, 4, 15, Key::CoalPktRateHigh},
        {ETHTOOL_A_COALESCE_RX_USECS_HIGH, 4, 16, Key::CoalRxUsecsHigh},
        {ETHTOOL_A_COALESCE_RX_MAX_FRAMES_HIGH, 4, 17, Key::CoalRxFramesHigh},
        {ETHTOOL_A_COALESCE_TX_USECS_HIGH, 4, 18, Key::CoalTxUsecsHigh},
        {ETHTOOL_A_COALESCE_TX_MAX_FRAMES_HIGH, 4, 19, Key::CoalTxFramesHigh},
        {ETHTOOL_A_COALESCE_RATE_SAMPLE_INTERVAL, 4, 20, Key::CoalSampleInterval},
        {ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, 1, 1, Key::CoalCqeModeTx},
        {ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, 1, 0, Key::CoalCqeModeRx},
    },
};

const FamilyCase kRings = {
    Section::Rings,
    ETHTOOL_MSG_RINGS_GET_REPLY,
    ETHTOOL_MSG_RINGS_NTF,
    {
        {ETHTOOL_A_RINGS_RX_MAX, 4, 8192, Key::RingsRxMax},
        {ETHTOOL_A_RINGS_RX_MINI_MAX, 4, 0, Key::RingsRxMiniMax},
        {ETHTOOL_A_RINGS_RX_JUMBO_MAX, 4, 2048, Key::RingsRxJumboMax},
        {ETHTOOL_A_RINGS_TX_MAX, 4, 4096, Key::RingsTxMax},
        {ETHTOOL_A_RINGS_RX, 4, 512, Key::RingsRx},
        {ETHTOOL_A_RINGS_RX_MINI, 4, 0, Key::RingsRxMini},
        {ETHTOOL_A_RINGS_RX_JUMBO, 4, 256, Key::RingsRxJumbo},
        {ETHTOOL_A_RINGS_TX, 4, 1024, Key::RingsTx},
        {ETHTOOL_A_RINGS_RX_BUF_LEN, 4, 2048, Key::RingsRxBufLen},
        {ETHTOOL_A_RINGS_TCP_DATA_SPLIT, 1, ETHTOOL_TCP_DATA_SPLIT_ENABLED, Key::RingsTcpDataSplit},
        {ETHTOOL_A_RINGS_CQE_SIZE, 4, 128, Key::RingsCqeSize},
        {ETHTOOL_A_RINGS_TX_PUSH, 1, 1, Key::RingsTxPush},
    },
};

const FamilyCase kChannels = {
    Section::Channels,
    ETHTOOL_MSG_CHANNELS_GET_REPLY,
    ETHTOOL_MSG_CHANNELS_NTF,
    {
        {ETHTOOL_A_CHANNELS_RX_MAX, 4, 1, Key::ChanRxMax},
        {ETHTOOL_A_CHANNELS_TX_MAX, 4, 2, Key::ChanTxMax},
        {ETHTOOL_A_CHANNELS_OTHER_MAX, 4, 1, Key::ChanOtherMax},
        {ETHTOOL_A_CHANNELS_COMBINED_MAX, 4, 63, Key::ChanCombinedMax},
        {ETHTOOL_A_CHANNELS_RX_COUNT, 4, 0, Key::ChanRx},
        {ETHTOOL_A_CHANNELS_TX_COUNT, 4, 0, Key::ChanTx},
        {ETHTOOL_A_CHANNELS_OTHER_COUNT, 4, 1, Key::ChanOther},
        {ETHTOOL_A_CHANNELS_COMBINED_COUNT, 4, 16, Key::ChanCombined},
    },
};

const FamilyCase kPause = {
    Section::Pause,
    ETHTOOL_MSG_PAUSE_GET_REPLY,
    ETHTOOL_MSG_PAUSE_NTF,
    {
        {ETHTOOL_A_PAUSE_AUTONEG, 1, 1, Key::PauseAutoneg},
        {ETHTOOL_A_PAUSE_RX, 1, 0, Key::PauseRx},
        {ETHTOOL_A_PAUSE_TX, 1, 1, Key::PauseTx},
    },
};

const std::array<const FamilyCase*, 5> kFamilies = {&kLinkModes, &kCoalesce, &kRings, &kChannels,
                                                    &kPause};

const FamilyCase& family(Section s) {
    for (const FamilyCase* f : kFamilies)
        if (f->section == s) return *f;
    throw std::logic_error("no family case");
}

void put_all(Msg& m, const FamilyCase& f) {
    for (const auto& a : f.attrs)
        m.value(a.attr, a.width, a.value);
}

// Every attribute of the table decodes to its key and value; nothing else is set.
void expect_decodes_every_attribute(const FamilyCase& f, uint8_t cmd) {
    Msg m(cmd);
    m.header(7, "p4p1");
    put_all(m, f);
    auto r = decode_settings(f.section, m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->ifindex, 7);
    EXPECT_EQ(r->ifname, "p4p1");
    DeviceValues expected;
    for (const auto& a : f.attrs)
        expected.set(a.key, a.value);
    for (const auto& k : device_keys()) {
        SCOPED_TRACE(key_path(k.key));
        EXPECT_EQ(r->values.get(k.key), expected.get(k.key));
    }
}

TEST(SettingsCodecTables, CoverEveryKeyWithAnEthtoolAttribute) {
    // A key added to the schema must get a row in the tables above.
    for (const auto& k : device_keys()) {
        if (k.attr == 0) continue;
        const auto& rows = family(k.section).attrs;
        const bool listed = std::any_of(rows.begin(), rows.end(),
                                        [&](const AttrCase& a) { return a.key == k.key; });
        EXPECT_TRUE(listed) << key_path(k.key);
    }
}

TEST(LinkModesCodec, DecodesSpeedDuplexAndAutoneg) {
    expect_decodes_every_attribute(kLinkModes, kLinkModes.reply_cmd);
}
TEST(CoalesceCodec, DecodesEveryAttributeOfAFullReply) {
    expect_decodes_every_attribute(kCoalesce, kCoalesce.reply_cmd);
}
TEST(RingsCodec, DecodesEveryAttributeOfAFullReply) {
    expect_decodes_every_attribute(kRings, kRings.reply_cmd);
}
TEST(ChannelsCodec, DecodesEveryAttributeOfAFullReply) {
    expect_decodes_every_attribute(kChannels, kChannels.reply_cmd);
}
TEST(PauseCodec, DecodesEveryAttributeOfAFullReply) {
    expect_decodes_every_attribute(kPause, kPause.reply_cmd);
}

TEST(SettingsCodec, DecodesNotificationsLikeReplies) {
    for (const FamilyCase* f : kFamilies) {
        SCOPED_TRACE(section_info(f->section).name);
        expect_decodes_every_attribute(*f, f->ntf_cmd);
    }
}

TEST(CoalesceCodec, LeavesMissingAttributesAbsentNotZero) {
    // What virtio_net sends: five of the coalescing attributes, two of them 0.
    Msg m(ETHTOOL_MSG_COALESCE_GET_REPLY);
    m.header(4, "eth0")
        .u32(ETHTOOL_A_COALESCE_RX_USECS, 0)
        .u32(ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 1)
        .u8(ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 0);
    auto r = decode_settings(Section::Coalesce, m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->values.get(Key::CoalRxUsecs), 0U);
    EXPECT_EQ(r->values.get(Key::CoalRxFrames), 1U);
    EXPECT_EQ(r->values.get(Key::CoalAdaptiveRx), 0U);
    EXPECT_FALSE(r->values.has(Key::CoalAdaptiveTx));
    EXPECT_FALSE(r->values.has(Key::CoalTxUsecs));
    EXPECT_FALSE(r->values.has(Key::CoalRxUsecsHigh));
    EXPECT_FALSE(r->values.has(Key::CoalCqeModeRx));
}

TEST(ChannelsCodec, DecodesAReplyWithOnlyAHeaderAsNoValues) {
    Msg m(ETHTOOL_MSG_CHANNELS_GET_REPLY);
    m.header(3, "veth0");
    auto r = decode_settings(Section::Channels, m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_FALSE(r->values.any_in(Section::Channels));
}

TEST(LinkModesCodec, TreatsUnknownSpeedAndDuplexAsAbsent) {
    struct Case {
        uint32_t speed;
        uint8_t duplex;
        std::optional<uint64_t> want_speed;
        std::optional<uint64_t> want_duplex;
    };
    const Case cases[] = {
        {static_cast<uint32_t>(SPEED_UNKNOWN), DUPLEX_UNKNOWN, std::nullopt, std::nullopt},
        {0, DUPLEX_UNKNOWN, std::nullopt, std::nullopt},
        {1000, DUPLEX_HALF, 1000, DUPLEX_HALF},
        {SPEED_100000, DUPLEX_FULL, SPEED_100000, DUPLEX_FULL},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.speed);
        Msg m(ETHTOOL_MSG_LINKMODES_GET_REPLY);
        m.header(2, "eth1")
            .u8(ETHTOOL_A_LINKMODES_AUTONEG, AUTONEG_DISABLE)
            .u32(ETHTOOL_A_LINKMODES_SPEED, c.speed)
            .u8(ETHTOOL_A_LINKMODES_DUPLEX, c.duplex);
        auto r = decode_settings(Section::Link, m.nlh());
        ASSERT_TRUE(r.has_value()) << r.error().str();
        EXPECT_EQ(r->values.get(Key::LinkSpeed), c.want_speed);
        EXPECT_EQ(r->values.get(Key::LinkDuplex), c.want_duplex);
        EXPECT_EQ(r->values.get(Key::LinkAutoneg), 0U);
    }
}

TEST(RingsCodec, LeavesAnEnumValueItCannotNameAbsent) {
    Msg m(ETHTOOL_MSG_RINGS_GET_REPLY);
    m.header(2, "eth1").u8(ETHTOOL_A_RINGS_TCP_DATA_SPLIT, 7).u32(ETHTOOL_A_RINGS_RX, 512);
    auto r = decode_settings(Section::Rings, m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_FALSE(r->values.has(Key::RingsTcpDataSplit));
    EXPECT_EQ(r->values.get(Key::RingsRx), 512U);
}

TEST(RingsCodec, IgnoresUnknownAttributes) {
    // Attributes above what the pinned headers (Linux 6.14) name: a newer
    // kernel's, some with no fixed width we know.
    Msg m(ETHTOOL_MSG_RINGS_GET_REPLY);
    m.header(4, "eth0").u32(ETHTOOL_A_RINGS_RX, 256);
    m.u8(ETHTOOL_A_RINGS_MAX + 1, 1).u32(ETHTOOL_A_RINGS_MAX + 2, 77);
    const uint8_t odd[3] = {1, 2, 3};
    m.bytes(ETHTOOL_A_RINGS_MAX + 3, sizeof odd, odd);
    m.begin(ETHTOOL_A_RINGS_MAX + 4).u32(1, 5).end();
    m.u32(ETHTOOL_A_RINGS_TX, 128);
    auto r = decode_settings(Section::Rings, m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->values.get(Key::RingsRx), 256U);
    EXPECT_EQ(r->values.get(Key::RingsTx), 128U);
    EXPECT_FALSE(r->values.has(Key::RingsRxMax));
}

TEST(CoalesceCodec, IgnoresUnknownAttributes) {
    // Attributes above what the pinned headers name, as a newer kernel's
    // would be: u32 values and nests.
    Msg m(ETHTOOL_MSG_COALESCE_GET_REPLY);
    m.header(4, "eth0").u32(ETHTOOL_A_COALESCE_RX_USECS, 8);
    for (uint16_t t = ETHTOOL_A_COALESCE_MAX + 1; t <= ETHTOOL_A_COALESCE_MAX + 3; ++t)
        m.u32(t, 1000U + t);
    m.begin(ETHTOOL_A_COALESCE_MAX + 4).begin(1).u32(1, 2).end().end();
    auto r = decode_settings(Section::Coalesce, m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->values.get(Key::CoalRxUsecs), 8U);
}

TEST(SettingsCodec, IgnoresKnownAttributesOutsideTheSchema) {
    // Bitsets, stats and other attributes the headers name that nictune
    // does not read.
    Msg link(ETHTOOL_MSG_LINKMODES_GET_REPLY);
    link.header(2, "eth1").u8(ETHTOOL_A_LINKMODES_AUTONEG, 1);
    link.compact_bitset(ETHTOOL_A_LINKMODES_OURS, 3, {5});
    link.u8(ETHTOOL_A_LINKMODES_MASTER_SLAVE_CFG, 2).u32(ETHTOOL_A_LINKMODES_LANES, 4);
    auto l = decode_settings(Section::Link, link.nlh());
    ASSERT_TRUE(l.has_value()) << l.error().str();
    EXPECT_EQ(l->values.get(Key::LinkAutoneg), 1U);

    Msg pause(ETHTOOL_MSG_PAUSE_GET_REPLY);
    pause.header(2, "eth1").u8(ETHTOOL_A_PAUSE_RX, 1);
    pause.begin(ETHTOOL_A_PAUSE_STATS).u32(ETHTOOL_A_PAUSE_STAT_TX_FRAMES, 9).end();
    auto p = decode_settings(Section::Pause, pause.nlh());
    ASSERT_TRUE(p.has_value()) << p.error().str();
    EXPECT_EQ(p->values.get(Key::PauseRx), 1U);
    EXPECT_FALSE(p->values.has(Key::PauseTx));
}

TEST(SettingsCodec, RejectsAttributesOfTheWrongWidth) {
    struct Case {
        Section section;
        uint16_t attr;
        std::size_t len;
        const char* names;  // the error must say which attribute
    };
    const Case cases[] = {
        {Section::Channels, ETHTOOL_A_CHANNELS_COMBINED_COUNT, 2, "channels.combined"},
        {Section::Coalesce, ETHTOOL_A_COALESCE_RX_USECS, 2, "coalesce.rx_usecs"},
        {Section::Coalesce, ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 0, "coalesce.adaptive_rx"},
        {Section::Rings, ETHTOOL_A_RINGS_RX, 0, "rings.rx"},
        {Section::Rings, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, 4, "rings.tcp_data_split"},
        {Section::Pause, ETHTOOL_A_PAUSE_TX, 4, "pause.tx"},
        {Section::Link, ETHTOOL_A_LINKMODES_SPEED, 3, "link.speed"},
    };
    const uint8_t data[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.names);
        Msg m(family(c.section).reply_cmd);
        m.header(9, "p4p2").bytes(c.attr, c.len, data);
        auto r = decode_settings(c.section, m.nlh());
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, Errc::Internal);
        EXPECT_NE(r.error().message.find(c.names), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find(std::to_string(c.len) + " bytes"), std::string::npos)
            << r.error().message;
    }
}

TEST(SettingsCodec, RejectsAnAttributeThatRunsPastTheEndOfTheMessage) {
    Msg m(ETHTOOL_MSG_CHANNELS_GET_REPLY);
    m.header(3, "veth0").u32(ETHTOOL_A_CHANNELS_RX_COUNT, 1);
    m.last_attr()->nla_len = 64;  // claims more than the message holds
    auto r = decode_settings(Section::Channels, m.nlh());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::Internal);
    EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
}

TEST(SettingsCodec, RejectsAMessageCutInsideAnAttribute) {
    Msg m(ETHTOOL_MSG_RINGS_GET_REPLY);
    m.header(3, "veth0").u32(ETHTOOL_A_RINGS_RX, 1).u32(ETHTOOL_A_RINGS_TX, 1);
    m.nlh()->nlmsg_len -= 6;
    auto r = decode_settings(Section::Rings, m.nlh());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::Internal);
}

TEST(SettingsCodec, RejectsAHeaderWithoutIfindex) {
    Msg m(ETHTOOL_MSG_CHANNELS_GET_REPLY);
    m.header(0, "veth0").u32(ETHTOOL_A_CHANNELS_RX_COUNT, 1);
    auto r = decode_settings(Section::Channels, m.nlh());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::Internal);
    EXPECT_NE(r.error().message.find("device index"), std::string::npos) << r.error().message;
}

TEST(SettingsCodec, AcceptsAHeaderWithoutNameAndIgnoresUnknownHeaderAttributes) {
    Msg m(ETHTOOL_MSG_CHANNELS_GET_REPLY);
    // ETHTOOL_A_HEADER_PHY_INDEX (4) came after 6.1.
    m.begin(kHeaderAttr).u32(ETHTOOL_A_HEADER_DEV_INDEX, 12).u32(ETHTOOL_A_HEADER_MAX + 1, 3).end();
    m.u32(ETHTOOL_A_CHANNELS_COMBINED_COUNT, 2);
    auto r = decode_settings(Section::Channels, m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->ifindex, 12);
    EXPECT_EQ(r->ifname, "");
    EXPECT_EQ(r->values.get(Key::ChanCombined), 2U);
}

TEST(SettingsCodec, RejectsAMalformedHeader) {
    {
        Msg m(ETHTOOL_MSG_PAUSE_GET_REPLY);
        const uint8_t two[2] = {7, 0};
        m.begin(kHeaderAttr).bytes(ETHTOOL_A_HEADER_DEV_INDEX, 2, two).end();
        auto r = decode_settings(Section::Pause, m.nlh());
        ASSERT_FALSE(r.has_value());
        EXPECT_NE(r.error().message.find("DEV_INDEX"), std::string::npos) << r.error().message;
    }
    {
        Msg m(ETHTOOL_MSG_PAUSE_GET_REPLY);
        const char name[4] = {'e', 't', 'h', '0'};  // no NUL
        m.begin(kHeaderAttr).u32(ETHTOOL_A_HEADER_DEV_INDEX, 2);
        m.bytes(ETHTOOL_A_HEADER_DEV_NAME, sizeof name, name).end();
        auto r = decode_settings(Section::Pause, m.nlh());
        ASSERT_FALSE(r.has_value());
        EXPECT_NE(r.error().message.find("NUL"), std::string::npos) << r.error().message;
    }
}

TEST(SettingsCodec, RejectsAReplyWithoutHeader) {
    Msg m(ETHTOOL_MSG_PAUSE_GET_REPLY);
    m.u8(ETHTOOL_A_PAUSE_RX, 1);
    auto r = decode_settings(Section::Pause, m.nlh());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::Internal);
}

TEST(SettingsCodec, RejectsAMessageOfAnotherFamily) {
    Msg m(ETHTOOL_MSG_COALESCE_GET_REPLY);
    m.header(2, "eth1").u32(ETHTOOL_A_COALESCE_RX_USECS, 3);
    for (Section s : {Section::Rings, Section::Features, Section::Sysctl}) {
        auto r = decode_settings(s, m.nlh());
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, Errc::Internal);
    }
}

TEST(SettingsCodec, RejectsAMessageTooShortForTheGenetlinkHeader) {
    alignas(nlmsghdr) std::array<char, 64> buf{};
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
    nlh->nlmsg_type = kFamily;
    auto r = decode_settings(Section::Rings, nlh);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::Internal);
    EXPECT_FALSE(decode_features(nlh).has_value());
    EXPECT_FALSE(decode_feature_strings(nlh).has_value());
}

// ---------------------------------------------------------------------------
// Encoders

TEST(SettingsEncoder, RoundTripsEveryWritableKeyOfEachFamily) {
    for (const FamilyCase* f : kFamilies) {
        SCOPED_TRACE(section_info(f->section).name);
        std::vector<std::pair<Key, uint64_t>> values;
        DeviceValues expected;
        uint64_t n = 3;
        for (const auto& k : device_keys()) {
            if (k.section != f->section || !k.writable || k.attr == 0) continue;
            const uint64_t v = k.type == ValueType::U32 ? 1000 + n : n % 2;
            ++n;
            values.emplace_back(k.key, v);
            expected.set(k.key, v);
        }
        // Encoded as a SET and decoded as if the kernel echoed it in a reply.
        Msg m(f->reply_cmd);
        m.header(5, "p4p1");
        encode_settings(m.nlh(), f->section, values);
        auto r = decode_settings(f->section, m.nlh());
        ASSERT_TRUE(r.has_value()) << r.error().str();
        EXPECT_EQ(r->values, expected);
    }
}

TEST(SettingsEncoder, WritesBoolsAndEnumsAsU8AndNumbersAsU32) {
    Msg m(ETHTOOL_MSG_COALESCE_SET);
    const std::pair<Key, uint64_t> values[] = {
        {Key::CoalAdaptiveRx, 1}, {Key::CoalRxUsecs, 70000}, {Key::CoalCqeModeTx, 5}};
    encode_settings(m.nlh(), Section::Coalesce, values);
    std::vector<std::pair<uint16_t, uint16_t>> seen;  // type, payload length
    for (const nlattr* a : AttrList::of(m.nlh(), GENL_HDRLEN))
        seen.emplace_back(attr_type(a), attr_len(a));
    const std::vector<std::pair<uint16_t, uint16_t>> want = {
        {ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1},
        {ETHTOOL_A_COALESCE_RX_USECS, 4},
        {ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, 1}};
    EXPECT_EQ(seen, want);
    const nlattr* cqe = AttrList::of(m.nlh(), GENL_HDRLEN).find(ETHTOOL_A_COALESCE_USE_CQE_MODE_TX);
    ASSERT_NE(cqe, nullptr);
    EXPECT_EQ(attr_get<uint8_t>(cqe), 1);  // any true value is sent as 1
}

TEST(SettingsEncoder, SkipsOtherSectionsReadOnlyKeysAndRtnetlinkKeys) {
    Msg m(ETHTOOL_MSG_CHANNELS_SET);
    const std::pair<Key, uint64_t> values[] = {{Key::RingsRx, 512},
                                               {Key::ChanCombinedMax, 8},
                                               {Key::LinkMtu, 9000},
                                               {Key::ChanCombined, 4}};
    encode_settings(m.nlh(), Section::Channels, values);
    std::vector<uint16_t> types;
    for (const nlattr* a : AttrList::of(m.nlh(), GENL_HDRLEN))
        types.push_back(attr_type(a));
    EXPECT_EQ(types, std::vector<uint16_t>{ETHTOOL_A_CHANNELS_COMBINED_COUNT});

    Msg link(ETHTOOL_MSG_LINKMODES_SET);
    const std::pair<Key, uint64_t> link_values[] = {{Key::LinkMtu, 9000}, {Key::LinkSpeed, 10}};
    encode_settings(link.nlh(), Section::Link, link_values);
    EXPECT_EQ(link.nlh()->nlmsg_len, NLMSG_HDRLEN + GENL_HDRLEN);
}

TEST(HeaderEncoder, WritesTheDeviceIndexOnlyForADevice) {
    struct Case {
        int ifindex;
        uint32_t flags;
        std::vector<std::pair<uint16_t, uint32_t>> want;
    };
    const Case cases[] = {
        {0, ETHTOOL_FLAG_COMPACT_BITSETS, {{ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_COMPACT_BITSETS}}},
        {7, 0, {{ETHTOOL_A_HEADER_DEV_INDEX, 7}, {ETHTOOL_A_HEADER_FLAGS, 0}}},
    };
    for (const auto& c : cases) {
        Msg m(ETHTOOL_MSG_RINGS_GET);
        put_header(m.nlh(), kHeaderAttr, c.ifindex, c.flags);
        const nlattr* hdr = AttrList::of(m.nlh(), GENL_HDRLEN).find(kHeaderAttr);
        ASSERT_NE(hdr, nullptr);
        std::vector<std::pair<uint16_t, uint32_t>> got;
        for (const nlattr* a : AttrList::nested(hdr))
            got.emplace_back(attr_type(a), attr_get<uint32_t>(a).value_or(0xdead));
        EXPECT_EQ(got, c.want);
    }
}

// ---------------------------------------------------------------------------
// Features

TEST(FeaturesCodec, DecodesCompactBitsets) {
    Msg m(ETHTOOL_MSG_FEATURES_GET_REPLY);
    m.header(4, "eth0");
    const std::vector<uint32_t> all = {0xffffffff, 0xffffffff};
    // hw comes with a mask of all bits, the others without (as 6.18 sends them).
    m.compact_bitset(ETHTOOL_A_FEATURES_HW, 40, {0x00194809, 0x0a}, &all);
    m.compact_bitset(ETHTOOL_A_FEATURES_WANTED, 40, {0x00114809, 0x00});
    m.compact_bitset(ETHTOOL_A_FEATURES_ACTIVE, 40, {0x00134829, 0x80});
    m.compact_bitset(ETHTOOL_A_FEATURES_NOCHANGE, 40, {0x00000400, 0x00});
    auto r = decode_features(m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->ifindex, 4);
    EXPECT_EQ(r->ifname, "eth0");
    EXPECT_EQ(r->nbits, 40U);
    EXPECT_EQ(r->hw, (std::vector<uint32_t>{0x00194809, 0x0a}));
    EXPECT_EQ(r->wanted, (std::vector<uint32_t>{0x00114809, 0x00}));
    EXPECT_EQ(r->active, (std::vector<uint32_t>{0x00134829, 0x80}));
    EXPECT_EQ(r->nochange, (std::vector<uint32_t>{0x00000400, 0x00}));
}

TEST(FeaturesCodec, DropsBitsBeyondTheSizeAndOutsideTheMask) {
    Msg m(ETHTOOL_MSG_FEATURES_GET_REPLY);
    m.header(4, "eth0");
    const std::vector<uint32_t> mask = {0x0000ffff, 0xffffffff};
    m.compact_bitset(ETHTOOL_A_FEATURES_ACTIVE, 36, {0xffffffff, 0xffffffff}, &mask);
    auto r = decode_features(m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->active, (std::vector<uint32_t>{0x0000ffff, 0x0000000f}));
    // Maps the reply did not carry read as all zeros of the same size.
    EXPECT_EQ(r->hw, (std::vector<uint32_t>{0, 0}));
}

TEST(FeaturesCodec, DecodesVerboseBitsetsWithAndWithoutMask) {
    Msg m(ETHTOOL_MSG_FEATURES_NTF);
    m.header(6, "veth1");
    // Without mask (NOMASK): the listed bits are the set ones.
    m.begin(ETHTOOL_A_FEATURES_ACTIVE).flag(ETHTOOL_A_BITSET_NOMASK);
    m.u32(ETHTOOL_A_BITSET_SIZE, 64).begin(ETHTOOL_A_BITSET_BITS);
    for (uint32_t bit : {0U, 13U, 33U}) {
        m.begin(ETHTOOL_A_BITSET_BITS_BIT).u32(ETHTOOL_A_BITSET_BIT_INDEX, bit);
        m.str(ETHTOOL_A_BITSET_BIT_NAME, "some-feature").end();
    }
    m.end().end();
    // With mask: the listed bits are the masked ones; VALUE marks set bits.
    m.begin(ETHTOOL_A_FEATURES_WANTED).u32(ETHTOOL_A_BITSET_SIZE, 64);
    m.begin(ETHTOOL_A_BITSET_BITS);
    m.begin(ETHTOOL_A_BITSET_BITS_BIT).u32(ETHTOOL_A_BITSET_BIT_INDEX, 1).end();
    m.begin(ETHTOOL_A_BITSET_BITS_BIT).u32(ETHTOOL_A_BITSET_BIT_INDEX, 40);
    m.flag(ETHTOOL_A_BITSET_BIT_VALUE).end();
    m.end().end();
    auto r = decode_features(m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->nbits, 64U);
    EXPECT_EQ(r->active, (std::vector<uint32_t>{(1U << 0) | (1U << 13), 1U << 1}));
    EXPECT_EQ(r->wanted, (std::vector<uint32_t>{0, 1U << 8}));
}

TEST(FeaturesCodec, RejectsMalformedBitsets) {
    struct Case {
        const char* what;
        std::function<void(Msg&)> build;
    };
    const std::vector<Case> cases = {
        {"value shorter than the size",
         [](Msg& m) { m.compact_bitset(ETHTOOL_A_FEATURES_HW, 64, {0xff}); }},
        {"mask shorter than the size",
         [](Msg& m) {
             const std::vector<uint32_t> mask = {0xff};
             m.compact_bitset(ETHTOOL_A_FEATURES_HW, 64, {0xff, 0xff}, &mask);
         }},
        {"no size",
         [](Msg& m) {
             m.begin(ETHTOOL_A_FEATURES_HW).flag(ETHTOOL_A_BITSET_NOMASK);
             m.words(ETHTOOL_A_BITSET_VALUE, {1}).end();
         }},
        {"truncated size",
         [](Msg& m) {
             const uint8_t two[2] = {32, 0};
             m.begin(ETHTOOL_A_FEATURES_HW).bytes(ETHTOOL_A_BITSET_SIZE, 2, two).end();
         }},
        {"implausible size",
         [](Msg& m) { m.compact_bitset(ETHTOOL_A_FEATURES_HW, 0xffffffff, {1}); }},
        {"verbose bit beyond the size",
         [](Msg& m) {
             m.begin(ETHTOOL_A_FEATURES_ACTIVE).flag(ETHTOOL_A_BITSET_NOMASK);
             m.u32(ETHTOOL_A_BITSET_SIZE, 8).begin(ETHTOOL_A_BITSET_BITS);
             m.begin(ETHTOOL_A_BITSET_BITS_BIT).u32(ETHTOOL_A_BITSET_BIT_INDEX, 8).end();
             m.end().end();
         }},
        {"verbose bit without index",
         [](Msg& m) {
             m.begin(ETHTOOL_A_FEATURES_ACTIVE).u32(ETHTOOL_A_BITSET_SIZE, 8);
             m.begin(ETHTOOL_A_BITSET_BITS).begin(ETHTOOL_A_BITSET_BITS_BIT);
             m.str(ETHTOOL_A_BITSET_BIT_NAME, "rx-gro").end().end().end();
         }},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        Msg m(ETHTOOL_MSG_FEATURES_GET_REPLY);
        m.header(4, "eth0");
        c.build(m);
        auto r = decode_features(m.nlh());
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, Errc::Internal);
    }
}

TEST(FeaturesCodec, RejectsOtherMessagesAndAMissingHeader) {
    Msg set_reply(ETHTOOL_MSG_FEATURES_SET_REPLY);  // a diff, not the device's state
    set_reply.header(4, "eth0");
    EXPECT_FALSE(decode_features(set_reply.nlh()).has_value());
    Msg no_header(ETHTOOL_MSG_FEATURES_GET_REPLY);
    no_header.compact_bitset(ETHTOOL_A_FEATURES_ACTIVE, 8, {1});
    EXPECT_FALSE(decode_features(no_header.nlh()).has_value());
}

TEST(FeaturesEncoder, WritesACompactWantedBitsetThatMasksOnlyChangedBits) {
    Msg m(ETHTOOL_MSG_FEATURES_SET);
    const std::pair<std::size_t, bool> changes[] = {{3, true}, {33, false}, {39, true}, {40, true}};
    encode_features(m.nlh(), 40, changes);  // bit 40 is beyond the set and dropped
    const nlattr* wanted = AttrList::of(m.nlh(), GENL_HDRLEN).find(ETHTOOL_A_FEATURES_WANTED);
    ASSERT_NE(wanted, nullptr);
    AttrList fields = AttrList::nested(wanted);
    EXPECT_EQ(fields.find(ETHTOOL_A_BITSET_BITS), nullptr);
    EXPECT_EQ(fields.find(ETHTOOL_A_BITSET_NOMASK), nullptr);
    ASSERT_NE(fields.find(ETHTOOL_A_BITSET_SIZE), nullptr);
    EXPECT_EQ(attr_get<uint32_t>(fields.find(ETHTOOL_A_BITSET_SIZE)), 40U);
    auto words_of = [](const nlattr* a) {
        std::vector<uint32_t> w(attr_len(a) / 4);
        std::memcpy(w.data(), mnl_attr_get_payload(a), w.size() * 4);
        return w;
    };
    ASSERT_NE(fields.find(ETHTOOL_A_BITSET_VALUE), nullptr);
    ASSERT_NE(fields.find(ETHTOOL_A_BITSET_MASK), nullptr);
    EXPECT_EQ(words_of(fields.find(ETHTOOL_A_BITSET_VALUE)),
              (std::vector<uint32_t>{1U << 3, 1U << 7}));
    EXPECT_EQ(words_of(fields.find(ETHTOOL_A_BITSET_MASK)),
              (std::vector<uint32_t>{1U << 3, (1U << 1) | (1U << 7)}));
}

TEST(FeaturesEncoder, RoundTripsThroughTheDecoder) {
    Msg m(ETHTOOL_MSG_FEATURES_GET_REPLY);
    m.header(8, "veth0");
    const std::pair<std::size_t, bool> changes[] = {{0, true}, {1, false}, {63, true}};
    encode_features(m.nlh(), 64, changes);
    auto r = decode_features(m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->nbits, 64U);
    EXPECT_EQ(r->wanted, (std::vector<uint32_t>{1U, 1U << 31}));
}

// ---------------------------------------------------------------------------
// String sets

void put_string_set(Msg& m, uint32_t id, uint32_t count,
                    const std::vector<std::pair<uint32_t, const char*>>& strings) {
    m.begin(ETHTOOL_A_STRINGSETS_STRINGSET).u32(ETHTOOL_A_STRINGSET_ID, id);
    m.u32(ETHTOOL_A_STRINGSET_COUNT, count).begin(ETHTOOL_A_STRINGSET_STRINGS);
    for (const auto& [i, s] : strings) {
        m.begin(ETHTOOL_A_STRINGS_STRING).u32(ETHTOOL_A_STRING_INDEX, i);
        m.str(ETHTOOL_A_STRING_VALUE, s).end();
    }
    m.end().end();
}

TEST(StrsetCodec, DecodesFeatureNamesByIndex) {
    Msg m(ETHTOOL_MSG_STRSET_GET_REPLY);
    m.begin(ETHTOOL_A_STRSET_STRINGSETS);
    put_string_set(m, ETH_SS_PRIV_FLAGS, 1, {{0, "legacy-rx"}});
    put_string_set(m, ETH_SS_FEATURES, 3,
                   {{2, "tx-checksum-ipv4"}, {0, "tx-scatter-gather"}, {1, "tx-checksum-ipv6"}});
    m.end();
    auto r = decode_feature_strings(m.nlh());
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(*r, (FeatureNames{"tx-scatter-gather", "tx-checksum-ipv6", "tx-checksum-ipv4"}));
}

TEST(StrsetCodec, RejectsAnIndexBeyondTheCount) {
    Msg m(ETHTOOL_MSG_STRSET_GET_REPLY);
    m.begin(ETHTOOL_A_STRSET_STRINGSETS);
    put_string_set(m, ETH_SS_FEATURES, 2, {{0, "a"}, {2, "c"}});
    m.end();
    auto r = decode_feature_strings(m.nlh());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::Internal);
}

TEST(StrsetCodec, RejectsAReplyWithoutTheFeatureSet) {
    Msg m(ETHTOOL_MSG_STRSET_GET_REPLY);
    m.begin(ETHTOOL_A_STRSET_STRINGSETS);
    put_string_set(m, ETH_SS_PRIV_FLAGS, 1, {{0, "legacy-rx"}});
    m.end();
    EXPECT_FALSE(decode_feature_strings(m.nlh()).has_value());
    Msg empty(ETHTOOL_MSG_STRSET_GET_REPLY);
    EXPECT_FALSE(decode_feature_strings(empty.nlh()).has_value());
}

TEST(StrsetCodec, RejectsACountLargerThanTheMessage) {
    Msg m(ETHTOOL_MSG_STRSET_GET_REPLY);
    m.begin(ETHTOOL_A_STRSET_STRINGSETS);
    put_string_set(m, ETH_SS_FEATURES, 0x7fffffff, {{0, "a"}});
    m.end();
    EXPECT_FALSE(decode_feature_strings(m.nlh()).has_value());
}

// ---------------------------------------------------------------------------
// Replies captured from a 6.18 kernel, virtio_net eth0 (tests/data/ethnl/README.md)

std::vector<uint32_t> load(const std::string& file) {
    std::ifstream in(std::string(NICTUNE_TEST_DATA) + "/ethnl/" + file, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<uint32_t> out((bytes.size() + 3) / 4);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

const nlmsghdr* as_msg(const std::vector<uint32_t>& buf) {
    const auto* nlh = reinterpret_cast<const nlmsghdr*>(buf.data());
    EXPECT_GE(buf.size() * 4, sizeof(nlmsghdr));
    EXPECT_LE(nlh->nlmsg_len, buf.size() * 4);
    return nlh;
}

// Attribute types above `max` that a message carries.
std::vector<uint16_t> types_above(const nlmsghdr* nlh, uint16_t max) {
    std::vector<uint16_t> out;
    for (const nlattr* a : AttrList::of(nlh, GENL_HDRLEN))
        if (attr_type(a) > max) out.push_back(attr_type(a));
    return out;
}

TEST(CapturedReply, CoalesceOfVirtioNetHasOnlyWhatTheDriverSupports) {
    auto buf = load("eth0_coalesce.bin");
    ASSERT_FALSE(buf.empty());
    auto r = decode_settings(Section::Coalesce, as_msg(buf));
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->ifindex, 4);
    EXPECT_EQ(r->ifname, "eth0");
    DeviceValues want;  // ethtool -c: rx-usecs 0, rx-frames 1, tx 0/1, Adaptive RX off TX n/a
    want.set(Key::CoalRxUsecs, 0);
    want.set(Key::CoalRxFrames, 1);
    want.set(Key::CoalTxUsecs, 0);
    want.set(Key::CoalTxFrames, 1);
    want.set(Key::CoalAdaptiveRx, 0);
    EXPECT_EQ(r->values, want);
}

TEST(CapturedReply, RingsOfA618KernelCarryAnAttributeThe61HeadersDoNotName) {
    auto buf = load("eth0_rings.bin");
    ASSERT_FALSE(buf.empty());
    // TX_PUSH was the last RINGS attribute of Linux 6.1; the pinned headers
    // (6.14) name the one after it, RX_PUSH (14), which the schema does not
    // map: the decoder skips it.
    EXPECT_EQ(types_above(as_msg(buf), ETHTOOL_A_RINGS_TX_PUSH),
              std::vector<uint16_t>{ETHTOOL_A_RINGS_RX_PUSH});
    EXPECT_EQ(ETHTOOL_A_RINGS_RX_PUSH, 14);
    auto r = decode_settings(Section::Rings, as_msg(buf));
    ASSERT_TRUE(r.has_value()) << r.error().str();
    DeviceValues want;  // ethtool -g: max 256/256, current 256/256, TX Push off
    want.set(Key::RingsRxMax, 256);
    want.set(Key::RingsTxMax, 256);
    want.set(Key::RingsRx, 256);
    want.set(Key::RingsTx, 256);
    want.set(Key::RingsTxPush, 0);
    EXPECT_EQ(r->values, want);
}

TEST(CapturedReply, ChannelsOfVirtioNetAreCombinedOnly) {
    auto buf = load("eth0_channels.bin");
    ASSERT_FALSE(buf.empty());
    auto r = decode_settings(Section::Channels, as_msg(buf));
    ASSERT_TRUE(r.has_value()) << r.error().str();
    DeviceValues want;
    want.set(Key::ChanCombinedMax, 1);
    want.set(Key::ChanCombined, 1);
    EXPECT_EQ(r->values, want);
}

TEST(CapturedReply, LinkModesWithoutLinkSpeedLeaveSpeedAndDuplexAbsent) {
    auto buf = load("eth0_linkmodes.bin");
    ASSERT_FALSE(buf.empty());
    auto r = decode_settings(Section::Link, as_msg(buf));
    ASSERT_TRUE(r.has_value()) << r.error().str();
    DeviceValues want;  // ethtool: Speed Unknown!, Duplex Unknown! (255), autoneg off
    want.set(Key::LinkAutoneg, 0);
    EXPECT_EQ(r->values, want);
}

TEST(CapturedReply, FeaturesAndTheirNamesAgreeWithEthtool) {
    auto names_buf = load("strset_features.bin");
    auto features_buf = load("eth0_features.bin");
    ASSERT_FALSE(names_buf.empty());
    ASSERT_FALSE(features_buf.empty());
    auto names = decode_feature_strings(as_msg(names_buf));
    ASSERT_TRUE(names.has_value()) << names.error().str();
    ASSERT_EQ(names->size(), 64U);
    EXPECT_EQ(names->front(), "tx-scatter-gather");
    EXPECT_EQ(names->back(), "hsr-dup-offload");
    auto r = decode_features(as_msg(features_buf));
    ASSERT_TRUE(r.has_value()) << r.error().str();
    EXPECT_EQ(r->ifindex, 4);
    EXPECT_EQ(r->nbits, 64U);

    FeatureSet fs{std::make_shared<const FeatureNames>(std::move(*names)), r->hw, r->wanted,
                  r->active, r->nochange};
    struct Expect {
        const char* name;
        bool active;
        bool fixed;
    };
    // `ethtool -k eth0` at capture time.
    const Expect expects[] = {
        {"tx-scatter-gather", true, false},
        {"tx-checksum-ip-generic", true, false},
        {"tx-checksum-ipv4", false, true},
        {"tx-tcp-segmentation", true, false},
        {"tx-tcp-mangleid-segmentation", false, false},
        {"rx-gro", true, false},
        {"rx-lro", false, true},
        {"highdma", true, true},
        {"rx-gro-hw", true, true},
        {"tx-nocache-copy", false, false},
        {"tx-gso-robust", true, true},
        {"rx-checksum", true, true},
        {"hsr-dup-offload", false, true},
    };
    for (const auto& e : expects) {
        SCOPED_TRACE(e.name);
        auto i = fs.index_of(e.name);
        ASSERT_TRUE(i.has_value());
        EXPECT_EQ(fs.is_active(*i), e.active);
        EXPECT_EQ(fs.is_fixed(*i), e.fixed);
    }
}

// ---------------------------------------------------------------------------

TEST(EthnlCommands, MapEachSectionToItsMessageFamily) {
    struct Case {
        Section s;
        uint8_t get, set, reply, ntf;
        uint32_t flags;
    };
    const Case cases[] = {
        {Section::Link, ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_MSG_LINKMODES_SET,
         ETHTOOL_MSG_LINKMODES_GET_REPLY, ETHTOOL_MSG_LINKMODES_NTF, ETHTOOL_FLAG_COMPACT_BITSETS},
        {Section::Coalesce, ETHTOOL_MSG_COALESCE_GET, ETHTOOL_MSG_COALESCE_SET,
         ETHTOOL_MSG_COALESCE_GET_REPLY, ETHTOOL_MSG_COALESCE_NTF, 0},
        {Section::Rings, ETHTOOL_MSG_RINGS_GET, ETHTOOL_MSG_RINGS_SET, ETHTOOL_MSG_RINGS_GET_REPLY,
         ETHTOOL_MSG_RINGS_NTF, 0},
        {Section::Channels, ETHTOOL_MSG_CHANNELS_GET, ETHTOOL_MSG_CHANNELS_SET,
         ETHTOOL_MSG_CHANNELS_GET_REPLY, ETHTOOL_MSG_CHANNELS_NTF, 0},
        {Section::Features, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_MSG_FEATURES_SET,
         ETHTOOL_MSG_FEATURES_GET_REPLY, ETHTOOL_MSG_FEATURES_NTF, ETHTOOL_FLAG_COMPACT_BITSETS},
        {Section::Pause, ETHTOOL_MSG_PAUSE_GET, ETHTOOL_MSG_PAUSE_SET, ETHTOOL_MSG_PAUSE_GET_REPLY,
         ETHTOOL_MSG_PAUSE_NTF, 0},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(section_info(c.s).name);
        EXPECT_EQ(get_cmd(c.s), c.get);
        EXPECT_EQ(set_cmd(c.s), c.set);
        EXPECT_EQ(section_of_kernel_msg(c.reply), c.s);
        EXPECT_EQ(section_of_kernel_msg(c.ntf), c.s);
        EXPECT_EQ(request_flags(c.s), c.flags);
    }
    EXPECT_EQ(get_cmd(Section::Sysctl), ETHTOOL_MSG_USER_NONE);
    EXPECT_EQ(set_cmd(Section::Tuned), ETHTOOL_MSG_USER_NONE);
    EXPECT_FALSE(section_of_kernel_msg(ETHTOOL_MSG_STRSET_GET_REPLY).has_value());
    EXPECT_FALSE(section_of_kernel_msg(ETHTOOL_MSG_FEATURES_SET_REPLY).has_value());
    EXPECT_FALSE(section_of_kernel_msg(ETHTOOL_MSG_LINKINFO_NTF).has_value());
}

TEST(EthnlCommands, TheFamilyTableHasOneRowPerSectionAndNamesItsCommands) {
    std::vector<Section> seen;
    for (const Family& f : families()) {
        SCOPED_TRACE(f.name);
        EXPECT_EQ(std::count(seen.begin(), seen.end(), f.section), 0);
        seen.push_back(f.section);
        EXPECT_EQ(family_of(f.section), &f);
        EXPECT_EQ(family_of_kernel_msg(f.reply), &f);
        EXPECT_EQ(family_of_kernel_msg(f.ntf), &f);
        EXPECT_GT(f.max_attr, kHeaderAttr);
        EXPECT_EQ(f.reply_context, "ethtool " + std::string(f.name) + " reply");
        EXPECT_EQ(command_name(f.set), std::string(f.name) + "_SET");
        EXPECT_EQ(f.replies == Replies::Features, f.section == Section::Features);
    }
    EXPECT_EQ(seen.size(), 6U);
    EXPECT_EQ(family_of(Section::Irq), nullptr);
    EXPECT_EQ(command_name(ETHTOOL_MSG_STRSET_GET), "STRSET_GET");
    EXPECT_EQ(command_name(ETHTOOL_MSG_RINGS_GET), "RINGS_GET");
    EXPECT_EQ(command_name(250), "command 250");
}

}  // namespace
}  // namespace nictune::ethnl
