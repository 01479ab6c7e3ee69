// The driver facts' table of what each driver accepts: the shipped file's
// coverage and citations, the parser's errors, and the value rules.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "profile/facts.hpp"
#include "profile/facts_split.hpp"

namespace nictune {
namespace {

const DriverFacts& builtin(const std::string& driver) {
    const DriverFacts* f = FactsBook::builtin().find(driver);
    if (!f) throw std::runtime_error("no built-in facts for " + driver);
    return *f;
}

Result<FactsBook> parse(const std::string& text) {
    return FactsBook::parse(text, "f.toml");
}

// A complete table for driver "d", with `extra` appended to it.
std::string table(const std::string& extra = "") {
    return "[d]\n"
           "[[d.accepts]]\nsection = \"coalesce\"\nkeys = [\"rx_usecs\"]\nsource = \"d.c ops\"\n"
           "[[d.accepts]]\nsection = \"rings\"\nkeys = [\"rx\"]\nsource = \"d.c ops\"\n"
           "[[d.accepts]]\nsection = \"channels\"\nkeys = []\nsource = \"d.c ops\"\n"
           "[[d.accepts]]\nsection = \"pause\"\nkeys = []\nsource = \"d.c ops\"\n" +
           extra;
}

TEST(DriverFacts, TheShippedTableCoversTheDriversAndCitesTheirSources) {
    for (const char* d :
         {"ixgbe", "i40e", "ixgbevf", "iavf", "e1000e", "igb", "virtio_net", "netdevsim", "veth"}) {
        SCOPED_TRACE(d);
        const auto& f = builtin(d);
        EXPECT_TRUE(f.knows_settable());
        EXPECT_EQ(f.accepts.size(), 4U);
        for (const auto& a : f.accepts)
            EXPECT_NE(a.source.find("drivers/net/"), std::string::npos) << a.source;
        for (const auto& v : f.values)
            EXPECT_NE(v.source.find("drivers/net/"), std::string::npos) << v.source;
        for (const auto& r : f.resets_link)
            EXPECT_NE(r.source.find("drivers/net/"), std::string::npos) << r.source;
    }
}

TEST(DriverFacts, SaysWhatADriverAcceptsWithItsSource) {
    const auto& ixgbe = builtin("ixgbe");
    EXPECT_TRUE(ixgbe.settable(Key::CoalRxUsecs));
    EXPECT_TRUE(ixgbe.settable(Key::CoalTxUsecs));
    EXPECT_FALSE(ixgbe.settable(Key::CoalTxFramesIrq));
    EXPECT_FALSE(ixgbe.settable(Key::CoalAdaptiveRx));
    EXPECT_FALSE(ixgbe.settable(Key::RingsTxPush));
    EXPECT_TRUE(ixgbe.settable(Key::LinkMtu)) << "[link] is rtnetlink's, not the driver's table";
    EXPECT_EQ(ixgbe.accepts_text(Section::Coalesce),
              "ixgbe accepts only rx_usecs, tx_usecs in [coalesce] "
              "(drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c supported_coalesce_params)");
    EXPECT_EQ(builtin("veth").accepts_text(Section::Rings),
              "veth has no rings SET (drivers/net/veth.c veth_ethtool_ops has no set_ringparam)");
    EXPECT_TRUE(builtin("netdevsim").settable(Key::CoalTxFramesIrq));
    EXPECT_FALSE(builtin("netdevsim").settable(Key::CoalCqeModeRx));
    EXPECT_FALSE(builtin("netdevsim").settable(Key::RingsTxPush));
}

TEST(DriverFacts, ResetRowsAreCompleteForADriverWithATable) {
    const auto& ixgbe = builtin("ixgbe");
    EXPECT_EQ(ixgbe.resets("rings.rx"), true);
    EXPECT_EQ(ixgbe.resets("features.rx-lro"), true);
    EXPECT_EQ(ixgbe.resets("features.rx-gro"), false);
    EXPECT_EQ(ixgbe.resets("coalesce.rx_usecs"), false) << "conditional: translate.cpp";
    EXPECT_EQ(builtin("netdevsim").resets("rings.rx"), false);
    EXPECT_EQ(builtin("virtio_net").resets("channels.combined"), false);
    EXPECT_EQ(builtin("veth").resets("channels.rx"), true);
    DriverFacts unknown;
    EXPECT_EQ(unknown.resets("rings.rx"), std::nullopt);
}

TEST(DriverFacts, ValueRulesAcceptRoundAndDescribe) {
    const auto* e1k = builtin("e1000e").value_rule(Key::CoalRxUsecs);
    ASSERT_NE(e1k, nullptr);
    for (uint64_t ok : {0U, 1U, 3U, 4U, 10U, 10000U})
        EXPECT_TRUE(e1k->accepts(ok)) << ok;
    for (uint64_t bad : {2U, 5U, 9U, 10001U})
        EXPECT_FALSE(e1k->accepts(bad)) << bad;
    // 1000000/7000 = 142, & ~3 = 140, read back as 1000000/140.
    EXPECT_EQ(e1k->settles_on(7000), 7142U);
    EXPECT_EQ(e1k->settles_on(50), 50U);
    EXPECT_EQ(e1k->settles_on(3), 3U) << "a mode is stored as given";
    EXPECT_EQ(e1k->describe(),
              "0, 1, 3, 4 or 10..10000 (stored as the rate 1000000/us rounded down to a multiple "
              "of 4)");

    const auto& i40e = builtin("i40e");
    EXPECT_EQ(i40e.value_rule(Key::CoalRxUsecs)->settles_on(51), 52U);
    EXPECT_EQ(i40e.value_rule(Key::CoalRxUsecs)->settles_on(50), 50U);
    EXPECT_FALSE(i40e.value_rule(Key::CoalRxUsecs)->accepts(8161));
    EXPECT_EQ(i40e.value_rule(Key::CoalRxUsecsHigh)->settles_on(21), 20U);
    EXPECT_EQ(i40e.value_rule(Key::CoalRxUsecsHigh)->settles_on(3), 0U);
    EXPECT_FALSE(i40e.value_rule(Key::CoalRxUsecsHigh)->accepts(237));
    EXPECT_EQ(i40e.value_rule(Key::RingsRx)->settles_on(100), 128U);
    EXPECT_FALSE(i40e.value_rule(Key::RingsRx)->accepts(32));
    EXPECT_TRUE(i40e.value_rule(Key::RingsRx)->accepts(8160)) << "no max: the device's applies";
    EXPECT_EQ(i40e.value_rule(Key::RingsRx)->describe(),
              "64..the device's maximum (rounded up to a multiple of 32)");
    EXPECT_EQ(builtin("ixgbe").value_rule(Key::CoalRxUsecs)->describe(), "0..1022");
}

TEST(DriverFacts, ParsesATableAndMergesItOverTheBuiltIn) {
    auto b =
        parse(table("[[d.values]]\nkey = \"rings.rx\"\nmin = 64\nstep = 8\nround = \"up\"\n"
                    "source = \"d.c set_ringparam\"\n"
                    "[[d.resets_link]]\nwhat = [\"rings\", \"link.mtu\"]\nsource = \"d.c\"\n"));
    ASSERT_TRUE(b) << b.error().str();
    const auto* d = b->find("d");
    ASSERT_NE(d, nullptr);
    EXPECT_TRUE(d->settable(Key::CoalRxUsecs));
    EXPECT_FALSE(d->settable(Key::CoalTxUsecs));
    EXPECT_EQ(d->value_rule(Key::RingsRx)->settles_on(65), 72U);
    EXPECT_EQ(d->resets("link.mtu"), true);
    EXPECT_EQ(d->resets("channels.combined"), false);

    // An admin's [ixgbe] without a table replaces the built-in one: unknown again.
    FactsBook merged = FactsBook::builtin();
    auto admin = parse("[ixgbe]\ndescription = \"local\"\n");
    ASSERT_TRUE(admin);
    merged.merge(*admin);
    EXPECT_FALSE(merged.find("ixgbe")->knows_settable());
    EXPECT_TRUE(merged.find("ixgbe")->settable(Key::CoalTxFramesIrq));
}

TEST(DriverFacts, RefusesIncompleteOrUncitedRows) {
    struct Case {
        std::string text, error;
    };
    const std::vector<Case> cases = {
        {"[d]\n[[d.accepts]]\nsection = \"coalesce\"\nkeys = []\nsource = \"x\"\n",
         "f.toml:1:1: [d]: 'accepts' must have one row for [rings] (0 found)"},
        {table("[[d.accepts]]\nsection = \"pause\"\nkeys = []\nsource = \"x\"\n"),
         "[d]: 'accepts' must have one row for [pause] (2 found)"},
        {"[d]\n[[d.accepts]]\nsection = \"coalesce\"\nkeys = []\n",
         "f.toml:2:1: d.accepts: 'source' is required (the driver code it reads)"},
        {"[d]\n[[d.accepts]]\nsection = \"link\"\nkeys = []\nsource = \"x\"\n",
         "f.toml:3:11: d.accepts.section: 'link' is not one of coalesce, rings, channels, pause"},
        {"[d]\n[[d.accepts]]\nsection = \"rings\"\nkeys = [\"rx_usecs\"]\nsource = \"x\"\n",
         "f.toml:4:9: d.accepts.keys: 'rx_usecs' is not a settable key of [rings]"},
        {"[d]\n[[d.accepts]]\nsection = \"rings\"\nkeys = [\"rx_max\"]\nsource = \"x\"\n",
         "d.accepts.keys: 'rx_max' is not a settable key of [rings]"},
        {"[d]\n[[d.accepts]]\nsection = \"rings\"\nkeys = []\nsource = \"x\"\nwhat = 1\n",
         "f.toml:6:1: d.accepts: unknown key 'what'"},
        {table("[[d.values]]\nkey = \"coalesce.tx_usecs\"\nmax = 1\nsource = \"x\"\n"),
         "[d]: a value rule for coalesce.tx_usecs, which 'accepts' does not list"},
        {table("[[d.values]]\nkey = \"rings.rx\"\nmin = 9\nmax = 1\nsource = \"x\"\n"),
         "d.values: min is above max"},
        {table("[[d.values]]\nkey = \"rings.rx\"\nsource = \"x\"\n"),
         "d.values: give 'values', 'min' or 'max'"},
        {table("[[d.values]]\nkey = \"rings.rx\"\nmin = 1\nround = \"sideways\"\nsource = \"x\"\n"),
         "d.values.round: 'sideways' is not one of none, up, down, e1000e_itr"},
        {table("[[d.values]]\nkey = \"rings.rx\"\nmin = 1\nround = \"up\"\nsource = \"x\"\n"),
         "d.values: round up/down needs a 'step' above 1"},
        {table("[[d.values]]\nkey = \"rings.rx\"\nmin = -1\nsource = \"x\"\n"),
         "d.values.min: expected a number in 0..4294967295"},
        {table("[[d.values]]\nkey = \"link.speed\"\nmin = 1\nsource = \"x\"\n"),
         "d.values.key: 'link.speed' is not a settable device key"},
        {table("[[d.resets_link]]\nwhat = [\"rings.rx_max\"]\nsource = \"x\"\n"),
         "d.resets_link.what: 'rings.rx_max' is not a device section"},
        {table("[[d.resets_link]]\nwhat = [\"features\"]\nsource = \"x\"\n"),
         "d.resets_link.what: 'features' is not a device section"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.text);
        auto b = parse(c.text);
        ASSERT_FALSE(b);
        EXPECT_NE(b.error().str().find(c.error), std::string::npos) << b.error().str();
        EXPECT_EQ(b.error().str().rfind("f.toml:", 0), 0U) << b.error().str();

        // The built-in facts are parsed one piece per driver: a piece says
        // the same, at the file's line, when another driver's tables sit
        // between the driver's header and its rows.
        ASSERT_EQ(c.text.rfind("[d]\n", 0), 0U);
        const std::string cut =
            "[a]\ndescription = \"first\"\n[d]\n[zz]\ndescription = \"between\"\n" +
            c.text.substr(4);
        auto whole = parse(cut);
        ASSERT_FALSE(whole);
        const auto split = split_facts(cut);
        ASSERT_EQ(split.error, "");
        ASSERT_EQ(split.pieces.size(), 3U);
        const FactsPiece& d = split.pieces[1];
        ASSERT_EQ(d.driver, "d");
        auto piece = parse_facts_piece(d.text, d.runs, "f.toml");
        ASSERT_FALSE(piece);
        EXPECT_EQ(piece.error().str(), whole.error().str());
    }
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(DriverFacts, TheBuiltInPiecesParseToWhatTheWholeFileSays) {
    const std::string file = NICTUNE_SOURCE_DIR "/profiles/facts/driver-facts.toml";
    auto whole = FactsBook::parse(read_file(file), file);
    ASSERT_TRUE(whole) << whole.error().str();
    const auto expected = whole->drivers();
    const auto built_in = FactsBook::builtin().drivers();
    ASSERT_EQ(built_in.size(), expected.size());
    ASSERT_GE(built_in.size(), 9U);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        SCOPED_TRACE(expected[i]->driver);
        EXPECT_EQ(built_in[i]->driver, expected[i]->driver) << "the same order";
        EXPECT_TRUE(*built_in[i] == *expected[i]);
    }
    // A copy of the book (nictunectl merges into one) finds the same facts,
    // parsed once: the same object.
    FactsBook copy = FactsBook::builtin();
    EXPECT_EQ(copy.find("veth"), FactsBook::builtin().find("veth"));
    EXPECT_EQ(copy.find("no-such-driver"), nullptr);
}

TEST(FactsSplit, CutsAtHeadersOnlyOutsideStringsAndArrays) {
    const std::string text =
        "# comment before the tables\n"
        "\n"
        "[b]\n"
        "description = \"\"\"\n"
        "[a]\n"
        "still b's description\"\"\"\"\n"
        "coalesce_note = '''\n"
        "[[a.values]]'''\n"
        "pci_ids = [\n"
        "  \"8086:10fb\", # [a]\n"
        "]\n"
        "[ \"a\" ]\n"
        "description = \"a [b] \\\" [c]\" # [d]\n"
        "[[b.counters]]\n"
        "name = \"x\"\n"
        "kind = \"crc\"\n"
        "meaning = \"m\"\n"
        "source = \"s\"\n"
        "['a'.rx_usecs_modes]\n"
        "\"0\" = \"off\"\n";
    auto whole = parse(text);
    ASSERT_TRUE(whole) << whole.error().str();
    const auto split = split_facts(text);
    ASSERT_EQ(split.error, "") << split.error_line;
    ASSERT_EQ(split.pieces.size(), 2U);
    EXPECT_EQ(split.pieces[0].driver, "a");
    EXPECT_EQ(split.pieces[1].driver, "b");
    EXPECT_EQ(split.pieces[0].runs.size(), 2U);
    EXPECT_EQ(file_line_of(split.pieces[0].runs, 1), 12U);
    EXPECT_EQ(file_line_of(split.pieces[0].runs, 3), 19U);
    for (const auto& p : split.pieces) {
        SCOPED_TRACE(p.driver);
        auto f = parse_facts_piece(p.text, p.runs, "f.toml");
        ASSERT_TRUE(f) << f.error().str();
        EXPECT_TRUE(*f == *whole->find(p.driver));
    }
    EXPECT_EQ(whole->find("b")->description, "[a]\nstill b's description\"");
    EXPECT_EQ(whole->find("b")->counters.size(), 1U);
}

// A one-driver parse reads only the driver's rows: the commentary between
// the tables (most of the shipped file's bytes) stays out of the pieces,
// and an error in a row after it still names the file's line.
TEST(FactsSplit, LeavesCommentsAndBlankLinesBetweenTablesOut) {
    const std::string text =
        "[a]\n"
        "# why a is here\n"
        "\n"
        "description = \"\"\"\n"
        "# kept: inside a string\n"
        "\"\"\"\n"
        "   # an indented comment\n"
        "[a.rx_usecs_modes]\n"
        "\"0\" = 5\n";
    const auto split = split_facts(text);
    ASSERT_EQ(split.error, "") << split.error_line;
    ASSERT_EQ(split.pieces.size(), 1U);
    EXPECT_EQ(split.pieces[0].text,
              "[a]\ndescription = \"\"\"\n# kept: inside a string\n\"\"\"\n"
              "[a.rx_usecs_modes]\n\"0\" = 5\n");
    auto whole = parse(text);
    ASSERT_FALSE(whole);
    EXPECT_EQ(whole.error().str().rfind("f.toml:9:", 0), 0U) << whole.error().str();
    auto piece = parse_facts_piece(split.pieces[0].text, split.pieces[0].runs, "f.toml");
    ASSERT_FALSE(piece);
    EXPECT_EQ(piece.error().str(), whole.error().str());
}

TEST(FactsSplit, RefusesWhatItCannotGiveToADriver) {
    struct Case {
        std::string text;
        uint32_t line;
    };
    for (const auto& c : std::vector<Case>{
             {"# c\ndescription = \"x\"\n[a]\n", 2},
             {"[a]\ndescription = \"\"\"\n[b]\n", 2},
             {"[a]\npci_ids = [\n\"x\",\n[b]\n", 2},
             {"[a]\ndescription = \"x\n[b]\n", 2},
             {"[a]\n[\"a\\u0062\"]\n", 2},
         }) {
        SCOPED_TRACE(c.text);
        const auto split = split_facts(c.text);
        EXPECT_NE(split.error, "");
        EXPECT_EQ(split.error_line, c.line);
        EXPECT_TRUE(split.pieces.empty());
    }
}

}  // namespace
}  // namespace nictune
