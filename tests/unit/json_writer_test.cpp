#include "util/json_writer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/audit.hpp"
#include "fakes/states.hpp"
#include "report/json_report.hpp"

namespace nictune::report {
using nictune::append_json_string;
using nictune::JsonWriter;
namespace {

TEST(JsonWriter, LaysOutLikeNlohmannDumpTwo) {
    std::string out;
    JsonWriter w(out);
    w.begin_object();
    w.field("a", uint64_t{1});
    w.key("b");
    w.begin_array();
    w.value(true);
    w.null();
    w.value("x");
    w.end_array();
    w.key("c");
    w.begin_object();
    w.end_object();
    w.key("d");
    w.begin_array();
    w.end_array();
    w.field("e", int64_t{-5});
    w.end_object();
    const auto parsed = nlohmann::json::parse(out);
    nlohmann::ordered_json expect = nlohmann::ordered_json::parse(out);
    EXPECT_EQ(out, expect.dump(2));
    EXPECT_EQ(parsed.at("b").at(2), "x");
}

TEST(JsonWriter, EscapesControlCharactersAndQuotes) {
    std::string out;
    append_json_string(out, std::string("a\"b\\c\n\t\x01", 8));
    EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\t\\u0001\"");
    EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(), std::string("a\"b\\c\n\t\x01", 8));
}

TEST(JsonWriter, ReplacesInvalidUtf8SoTheOutputStaysValid) {
    std::string out;
    append_json_string(out, "ok \xc3\xa9 bad \xff\xc3 end \xed\xa0\x80");
    auto s = nlohmann::json::parse(out).get<std::string>();
    EXPECT_EQ(s,
              "ok \xc3\xa9 bad \xef\xbf\xbd\xef\xbf\xbd end \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

// The fast path reads eight bytes at a time: a byte that needs escaping or
// checking, at every position of strings of every length around a word,
// comes out as nlohmann::json writes it (with U+FFFD for a byte that is not
// UTF-8).
TEST(JsonWriter, EscapesAtEveryPositionOfAWord) {
    const std::vector<std::string> odd{
        std::string(1, '\0'), "\x01", "\x1f", "\"",  "\\", "\n", "\x7f",
        "\xc3\xa9",           "\x80", "\xff", "\xc3"};
    for (std::size_t len = 0; len <= 25; ++len) {
        const std::string plain(len, 'a');
        std::string out;
        EXPECT_TRUE(append_json_string(out, plain));
        EXPECT_EQ(out, nlohmann::json(plain).dump()) << len;
        for (std::size_t at = 0; at < len; ++at)
            for (const auto& o : odd) {
                std::string s = plain;
                s.replace(at, 1, o);
                std::string got;
                const bool valid = append_json_string(got, s);
                const auto expect = nlohmann::json(s).dump(
                    -1, ' ', false, nlohmann::json::error_handler_t::replace);
                const bool utf8 = o != "\x80" && o != "\xff" && o != "\xc3";
                EXPECT_EQ(valid, utf8) << len << " " << at;
                if (utf8)
                    EXPECT_EQ(got, expect) << len << " " << at;
                else
                    EXPECT_EQ(nlohmann::json::parse(got), nlohmann::json::parse(expect))
                        << len << " " << at;
            }
    }
}

// Containers nested deeper than the levels the writer keeps in place, with
// items at every level, and keys and values around the length it writes in
// one piece (64 bytes with the quotes and ": "): the layout is still
// nlohmann::json's, indented and compact.
TEST(JsonWriter, LaysOutDeepNestingAndLongKeysLikeNlohmann) {
    for (const int indent : {2, 0}) {
        std::string out;
        JsonWriter w(out, indent);
        constexpr int kDepth = 40;
        for (int d = 0; d < kDepth; ++d) {
            w.begin_object();
            w.field("", "");
            w.field(std::string(58 + d % 8, 'k'), std::string(58 + d % 8, 'v'));
            w.key("next" + std::to_string(d));
        }
        w.begin_array();
        w.end_array();
        for (int d = 0; d < kDepth; ++d) {
            w.field("after", kDepth - 1 - d);  // the innermost first
            w.end_object();
        }
        const auto parsed = nlohmann::ordered_json::parse(out);
        EXPECT_EQ(out, indent > 0 ? parsed.dump(indent) : parsed.dump()) << "indent " << indent;
        const nlohmann::ordered_json* at = &parsed;
        for (int d = 0; d < kDepth; ++d) {
            EXPECT_EQ(at->at("after"), d);
            EXPECT_EQ(at->at(std::string(58 + d % 8, 'k')), std::string(58 + d % 8, 'v'));
            at = &at->at("next" + std::to_string(d));
        }
        EXPECT_TRUE(at->is_array());
    }
}

// The writer says whether a key or a string value had to be repaired; UTF-8
// beyond ASCII is not.
TEST(JsonWriter, SaysWhetherItReplacedInvalidUtf8) {
    std::string out;
    JsonWriter w(out, 0);
    w.begin_object();
    w.field("caf\xc3\xa9", "\xe2\x82\xac 5");
    EXPECT_FALSE(w.replaced_invalid_utf8());
    w.field("k", "bad \xff");
    EXPECT_TRUE(w.replaced_invalid_utf8());
    w.end_object();
    EXPECT_EQ(nlohmann::json::parse(out).at("k"), "bad \xef\xbf\xbd");

    std::string out2;
    JsonWriter w2(out2, 2);
    w2.begin_object();
    w2.field("\xc3", 1);
    EXPECT_TRUE(w2.replaced_invalid_utf8()) << "a key as well";
    EXPECT_FALSE(append_json_string(out2, "\xed\xa0\x80"));
    EXPECT_TRUE(append_json_string(out2, "\xf0\x9f\x94\x8c"));
}

TEST(AuditJson, ParsesBackWithTheDocumentedFields) {
    AuditReport r;
    r.interfaces.push_back(InterfaceAudit{test::ixgbe_port(), std::nullopt, {}});
    r.interfaces[0].findings.push_back(
        Finding{Severity::Warn, "link.mtu", uint64_t{9014}, uint64_t{1500}, "m", "f"});
    r.interfaces.push_back(InterfaceAudit{test::veth("v\xff"), std::nullopt, {}});
    r.system.sysctl = {{"net.core.rmem_max", "212992"}, {"net.core.busy_poll", std::nullopt}};
    auto j = nlohmann::json::parse(audit_json_text(r));
    const auto& p = j.at("interfaces").at(0);
    EXPECT_EQ(p.at("name"), "p4p1");
    EXPECT_EQ(p.at("pci_id"), "8086:10fb");
    EXPECT_EQ(p.at("link").at("mtu"), 1500);
    EXPECT_EQ(p.at("link").at("operstate"), "UP");
    EXPECT_EQ(p.at("coalesce").at("rx_usecs"), 1);
    EXPECT_FALSE(p.at("coalesce").contains("adaptive_rx")) << "unsupported: absent, never 0";
    EXPECT_EQ(p.at("rings").at("rx_max"), 4096);
    EXPECT_EQ(p.at("features").at("rx-gro"), true);
    EXPECT_EQ(p.at("findings").at(0).at("expected"), 9014);
    EXPECT_TRUE(j.at("interfaces").at(1).at("coalesce").is_null());
    EXPECT_EQ(j.at("interfaces").at(1).at("name"), "v\xef\xbf\xbd");
    EXPECT_TRUE(j.at("sysctl").at("net.core.busy_poll").is_null());
    EXPECT_EQ(j.at("summary").at("warn"), 1);
    EXPECT_EQ(audit_json(r), j);
}

// nictunectl streams the audit in parts of whole interfaces: together they
// are exactly the one-piece text, whatever the part size.
TEST(AuditJson, StreamedInPartsIsTheSameText) {
    AuditReport r;
    for (int i = 0; i < 5; ++i)
        r.interfaces.push_back(
            InterfaceAudit{test::ixgbe_port("p" + std::to_string(i)), std::nullopt, {}});
    r.system.sysctl = {{"net.core.rmem_max", "212992"}};
    const std::string whole = audit_json_text(r);
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3000}, whole.size() * 2}) {
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        std::string joined;
        int parts = 0;
        write_audit_json(
            r,
            [&](std::string_view part) {
                joined.append(part);
                ++parts;
            },
            chunk);
        EXPECT_EQ(joined, whole);
        if (chunk == 1)
            EXPECT_EQ(parts, 6) << "one part per interface, then the rest";
        else if (chunk > whole.size())
            EXPECT_EQ(parts, 1);
        else
            EXPECT_GT(parts, 1);
    }
}

}  // namespace
}  // namespace nictune::report
