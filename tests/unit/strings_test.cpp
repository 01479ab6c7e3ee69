#include "util/strings.hpp"

#include <gtest/gtest.h>

#include <random>

#include "support/process.hpp"
#include "util/json_writer.hpp"

namespace nictune {
namespace {

TEST(VersionCompare, OrdersDriverVersionsNumerically) {
    EXPECT_LT(compare_versions("3.15.1-k", "4.0.1-k"), 0);
    EXPECT_LT(compare_versions("4.0.1-k", "5.3.6"), 0);
    EXPECT_LT(compare_versions("2.9.21", "2.13.10"), 0);
    EXPECT_EQ(compare_versions("5.3.6", "5.3.6"), 0);
    EXPECT_GT(compare_versions("5.3.6.1", "5.3.6"), 0);
    EXPECT_EQ(compare_versions("05.3", "5.3"), 0);
}

TEST(Dotted, JoinsTwoPartsWithADot) {
    EXPECT_EQ(dotted("features", "tx-tcp-segmentation"), "features.tx-tcp-segmentation");
    EXPECT_EQ(dotted("link", "mtu"), "link.mtu");
    EXPECT_EQ(dotted("", ""), ".");
}

TEST(IfName, AcceptsWhatTheKernelAccepts) {
    EXPECT_TRUE(valid_ifname("p4p1"));
    EXPECT_TRUE(valid_ifname("enp3s0f0np0"));
    EXPECT_FALSE(valid_ifname(""));
    EXPECT_FALSE(valid_ifname("a/b"));
    EXPECT_FALSE(valid_ifname("1234567890123456"));
    EXPECT_FALSE(valid_ifname(".."));
    EXPECT_FALSE(valid_ifname("a b"));
}

// Names are checked in their text form; the kernel's rules apply to the
// bytes it stands for (measured on 6.18: \x01, \x7f, \x85 and \xff are
// accepted, \xa0 is refused like any isspace() byte).
TEST(IfName, ChecksTheBytesTheTextStandsFor) {
    EXPECT_TRUE(valid_ifname("\\xff\\xfeq"));
    EXPECT_TRUE(valid_ifname("a\\x5cb"));
    EXPECT_TRUE(valid_ifname("\\x01x"));
    EXPECT_TRUE(valid_ifname("\\x7fx"));
    EXPECT_TRUE(valid_ifname("é0"));
    std::string fifteen;
    for (int i = 0; i < 15; ++i)
        fifteen += "\\xff";
    EXPECT_TRUE(valid_ifname(fifteen)) << "15 bytes, 60 characters of text";
    EXPECT_FALSE(valid_ifname(fifteen + "\\xff"));
    EXPECT_FALSE(valid_ifname("a\\xa0b"));
    EXPECT_FALSE(valid_ifname("a\\x20b"));
    EXPECT_FALSE(valid_ifname("a\\x09b"));
    EXPECT_FALSE(valid_ifname("a\\x00b"));
    EXPECT_FALSE(valid_ifname("a\\b")) << "not the text form";
    EXPECT_FALSE(valid_ifname("\x01x")) << "a raw control byte is not text";
    EXPECT_FALSE(valid_ifname("\xff\xfeq")) << "raw bytes are not text";
    EXPECT_FALSE(valid_ifname("bi0:1"));
}

TEST(IfName, AltnamesMayBeLongerAndHoldAColon) {
    EXPECT_TRUE(valid_name_or_altname("p4p1"));
    EXPECT_TRUE(valid_name_or_altname("bi0:1"));
    EXPECT_TRUE(valid_name_or_altname(std::string(127, 'a')));
    EXPECT_FALSE(valid_name_or_altname(std::string(128, 'a')));
    EXPECT_TRUE(valid_name_or_altname("\\xff\\xfe"));
    EXPECT_FALSE(valid_name_or_altname("a/b"));
    EXPECT_FALSE(valid_name_or_altname("a\\x20b"));
    EXPECT_FALSE(valid_name_or_altname("."));
    EXPECT_FALSE(valid_name_or_altname(""));
}

TEST(Quote, EscapesNonPrintables) {
    EXPECT_EQ(quote("p4p1"), "'p4p1'");
    EXPECT_EQ(quote(std::string("a\0b\n", 4)), "'a\\x00b\\x0a'");
    EXPECT_EQ(quote("a\\b"), "'a\\x5cb'");
    EXPECT_EQ(quote("\xff\xfeq"), "'\\xff\\xfeq'");
}

TEST(ClosestMatch, SuggestsOnlyPlausibleTypos) {
    EXPECT_EQ(closest_match("rx_usec", {"rx_usecs", "tx_usecs"}), "rx_usecs");
    EXPECT_FALSE(closest_match("banana", {"rx_usecs", "tx_usecs"}));
}

// ---- the text form of names

TEST(NameText, KeepsPrintableUtf8AndEscapesEverythingElse) {
    const std::pair<std::string, std::string> cases[] = {
        {"p4p1", "p4p1"},
        {"\xff\xfeq", "\\xff\\xfeq"},
        {"a\\b", "a\\x5cb"},
        {"é0", "é0"},                                  // U+00E9
        {"网卡0", "网卡0"},                            // CJK
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},      // U+1F600, four bytes
        {"\x01x", "\\x01x"},                           // C0 control
        {"x\x7f", "x\\x7f"},                           // DEL
        {"a b", "a\\x20b"},                            // space
        {"\xc2\x85", "\\xc2\\x85"},                    // U+0085, a C1 control
        {"\xc2\xa0", "\\xc2\\xa0"},                    // U+00A0, no-break space
        {"\xe2\x80\x8b", "\\xe2\\x80\\x8b"},           // U+200B, zero-width space
        {"\xe2\x80\xae", "\\xe2\\x80\\xae"},           // U+202E, right-to-left override
        {"\xef\xbb\xbf", "\\xef\\xbb\\xbf"},           // U+FEFF
        {"\xef\xbf\xbe", "\\xef\\xbf\\xbe"},           // U+FFFE, a noncharacter
        {"\xed\xa0\x80", "\\xed\\xa0\\x80"},           // a surrogate
        {"\xc0\xaf", "\\xc0\\xaf"},                    // an overlong '/'
        {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},           // another
        {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},  // past U+10FFFF
        {"\xc3", "\\xc3"},                             // cut off
        {"\xc3"
         "a",
         "\\xc3a"},                       // a lead byte without its tail
        {"\xe4\xb8\xad\xe4", "中\\xe4"},  // a valid one, then a cut one
        {"\\x41", "\\x5cx41"},            // text that looks like an escape
        {std::string("\0", 1), "\\x00"},
        {"", ""},
    };
    for (const auto& [bytes, text] : cases) {
        EXPECT_EQ(escape_name(bytes), text);
        auto back = unescape_name(text);
        ASSERT_TRUE(back) << text << ": " << back.error().str();
        EXPECT_EQ(*back, bytes) << text;
    }
}

TEST(NameText, TakesBackOnlyItsOwnForm) {
    // Each byte string has one text: everything else is refused, saying
    // what that name's text would be.
    const std::pair<std::string, std::string> cases[] = {
        {"\\x41", "'\\x41' is written 'A'"},
        {"\\xFF", "a byte is written \\x and two lower-case hex digits"},
        {"\\x5C", "lower-case"},
        {"\\x", "a backslash \\x5c"},
        {"\\xf", "two lower-case hex digits"},
        {"a\\", "a backslash \\x5c"},
        {"a\\b", "'a\\b' is not in nictune's text form"},
        {"\\q", "a backslash \\x5c"},
        {"a b", "must be written 'a\\x20b'"},
        {"\x01x", "must be written '\\x01x'"},
        {"\xff\xfeq", "must be written '\\xff\\xfeq'"},
        {"\xe2\x80\x8b", "must be written '\\xe2\\x80\\x8b'"},
    };
    for (const auto& [text, why] : cases) {
        auto r = unescape_name(text);
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().code, Errc::InvalidArgument);
        EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
        EXPECT_TRUE(valid_utf8(r.error().message)) << "the message can go over D-Bus";
    }
}

// What escape_name() writes can go anywhere: valid UTF-8, no control
// character, no space, nothing that the kernel could confuse.
void expect_safe_text(const std::string& bytes, const std::string& text) {
    ASSERT_TRUE(valid_utf8(text)) << text;
    for (unsigned char c : text)
        ASSERT_TRUE(c > 0x20 && c != 0x7f) << "byte " << int(c) << " in " << text;
    ASSERT_LE(text.size(), 4 * bytes.size());
}

void expect_round_trip(const std::string& bytes) {
    const std::string text = escape_name(bytes);
    expect_safe_text(bytes, text);
    auto back = unescape_name(text);
    ASSERT_TRUE(back) << text << ": " << back.error().str();
    ASSERT_EQ(*back, bytes) << text;
}

TEST(NameText, IsABijectionOnEveryByteStringUpToTwoBytes) {
    expect_round_trip("");
    for (int a = 0; a < 256; ++a) {
        expect_round_trip(std::string(1, static_cast<char>(a)));
        for (int b = 0; b < 256; ++b) {
            const char two[] = {static_cast<char>(a), static_cast<char>(b)};
            expect_round_trip(std::string(two, 2));
        }
    }
}

// Random byte strings of 3..15 bytes (every name length), drawn so that
// the interesting parts are common: backslashes and "x" and hex digits
// (text that looks like an escape), controls, lone continuation and lead
// bytes, and whole sequences of kept and escaped characters.
std::string random_bytes(std::mt19937& rng) {
    static const std::vector<std::string> pieces = {"\\",
                                                    "x",
                                                    "5",
                                                    "c",
                                                    "f",
                                                    "F",
                                                    "a",
                                                    "0",
                                                    "/",
                                                    ":",
                                                    " ",
                                                    "\t",
                                                    std::string("\0", 1),
                                                    "\x01",
                                                    "\x1f",
                                                    "\x7f",
                                                    "\x80",
                                                    "\xbf",
                                                    "\xc0",
                                                    "\xc1",
                                                    "\xc2",
                                                    "\xdf",
                                                    "\xe0",
                                                    "\xed",
                                                    "\xef",
                                                    "\xf0",
                                                    "\xf4",
                                                    "\xf5",
                                                    "\xfe",
                                                    "\xff",
                                                    "é",
                                                    "\xc2\x85",
                                                    "\xc2\xa0",
                                                    "\xe2\x80\x8b",
                                                    "\xe2\x80\xae",
                                                    "\xef\xbb\xbf",
                                                    "中",
                                                    "\xef\xbf\xbf",
                                                    "\xf0\x9f\x98\x80",
                                                    "\xf4\x8f\xbf\xbf",
                                                    "\xed\xb0\x80",
                                                    "\xe0\x9f\xbf",
                                                    "\xf3\xa0\x80\x81"};
    std::uniform_int_distribution<std::size_t> len(3, 15);
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    std::uniform_int_distribution<int> any(0, 255);
    std::uniform_int_distribution<int> coin(0, 3);
    const std::size_t n = len(rng);
    std::string out;
    while (out.size() < n) {
        if (coin(rng) == 0)
            out += static_cast<char>(any(rng));
        else
            out += pieces[pick(rng)];
    }
    out.resize(n);  // may cut a sequence: cut ones are cases too
    return out;
}

TEST(NameText, IsABijectionOnRandomNamesUpToFifteenBytes) {
    const unsigned seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    for (int i = 0; i < 200000; ++i)
        expect_round_trip(random_bytes(rng));
}

// The other direction: any text that unescape_name() takes is exactly the
// text of the bytes it gives, so no two texts name the same bytes.
TEST(NameText, TakesNoTwoTextsForOneName) {
    const unsigned seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    static const std::vector<std::string> pieces = {
        "\\x",  "\\",   "x",     "0",     "5",     "c",     "f",     "F",
        "A",    "a",    "\\x5c", "\\x41", "\\xff", "\\xc3", "\\xa9", "é",
        "\xc3", "\xa9", " ",     "\x01",  "\\x20", "\\x00", "q"};
    std::uniform_int_distribution<std::size_t> len(1, 12);
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    int taken = 0;
    for (int i = 0; i < 200000; ++i) {
        std::string text;
        for (std::size_t k = len(rng); k > 0; --k)
            text += pieces[pick(rng)];
        auto bytes = unescape_name(text);
        if (!bytes) continue;
        ++taken;
        ASSERT_EQ(escape_name(*bytes), text);
    }
    EXPECT_GT(taken, 1000) << "the generator must reach valid texts too";
}

TEST(NameGlob, MatchesTheRealBytes) {
    EXPECT_TRUE(glob_match("p4p*", "p4p1"));
    EXPECT_FALSE(glob_match("p4p*", "eth0"));
    EXPECT_TRUE(glob_match("*", "\\xff\\xfeq"));
    EXPECT_TRUE(glob_match("\\xff*", "\\xff\\xfeq"));
    EXPECT_FALSE(glob_match("\\xfe*", "\\xff\\xfeq"));
    // '?' is one byte, not one character of text.
    EXPECT_TRUE(glob_match("?\\xfeq", "\\xff\\xfeq"));
    EXPECT_FALSE(glob_match("?0", "é0"));
    EXPECT_TRUE(glob_match("??0", "é0"));
    // A backslash is a byte like any other, never a glob escape.
    EXPECT_TRUE(glob_match("a\\x5c*", "a\\x5cb"));
    EXPECT_TRUE(glob_match("[*]x", "*x"));
    EXPECT_FALSE(glob_match("[*]x", "ax"));
    // Not the text form: matches nothing.
    EXPECT_FALSE(glob_match("a\\*", "a*"));
    EXPECT_FALSE(glob_match("*", "\xff"));
}

// The commands reports suggest name interfaces as shell words: bash, the
// oracle, reads each back as the name's real bytes.
TEST(ShellWord, BashReadsTheWordBackAsTheNamesBytes) {
    if (!test::have_program("bash")) GTEST_SKIP() << "bash is not installed";
    const std::vector<std::string> names = {
        "p4p1",       "eth0.100", "a b", "it's", "$(reboot)", "`id`;x", "q\"w",  "\xc3\xa9th0",
        "\xff\xfe''", "a\\b",     "*",   "-n",   "x\ty",      "!!",     "~root", "#c"};
    for (const auto& bytes : names) {
        const std::string word = shell_word(escape_name(bytes));
        const auto r = test::run({"bash", "-c", "printf %s " + word});
        EXPECT_EQ(r.status, 0) << word << ": " << r.err;
        EXPECT_EQ(r.out, bytes) << "shell word " << word;
    }
    EXPECT_EQ(shell_word("p4p1"), "p4p1");
    EXPECT_EQ(shell_word("a'b"), "'a'\\''b'");
    EXPECT_EQ(shell_word("\\xffq"), "$'\\xffq'");
}

TEST(SysctlValues, NormalizeTrimsAndCollapsesWhitespace) {
    EXPECT_EQ(normalize_sysctl_value("  4096\t131072 \t 6291456\n"), "4096 131072 6291456");
    EXPECT_EQ(normalize_sysctl_value("cubic\n"), "cubic");
    EXPECT_EQ(normalize_sysctl_value(" \n\t"), "");
    EXPECT_EQ(normalize_sysctl_value("a\nb"), "a b");
}

// A floor raises each number to its own at the same place and lowers none.
TEST(SysctlValues, AFloorRaisesEachNumberAndLowersNone) {
    EXPECT_EQ(sysctl_at_least("212992", "16777216"), "16777216");
    EXPECT_EQ(sysctl_at_least("33554432\n", "16777216"), "33554432");
    EXPECT_EQ(sysctl_at_least("4096\t131072\t6291456", "4096 87380 16777216"),
              "4096 131072 16777216");
    EXPECT_EQ(sysctl_at_least("4096 131072 33554432", "4096 87380 16777216"),
              "4096 131072 33554432");
    // Nothing to compare: other counts, or words that are not numbers.
    EXPECT_EQ(sysctl_at_least("4096 131072", "4096 87380 16777216"), std::nullopt);
    EXPECT_EQ(sysctl_at_least("4096 87380 16777216", "16777216"), std::nullopt);
    EXPECT_EQ(sysctl_at_least("cubic", "1"), std::nullopt);
    EXPECT_EQ(sysctl_at_least("-1", "1"), std::nullopt);
    EXPECT_EQ(sysctl_at_least("", ""), std::nullopt);
}

}  // namespace
}  // namespace nictune
