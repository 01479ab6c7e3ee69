#include "report/keys_doc.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace nictune {
namespace {

// docs/profiles.md is generated from the schema table; regenerate it with
// `nictunectl keys --markdown > docs/profiles.md` when the table changes.
TEST(ProfileReference, CommittedDocMatchesTheSchemaTable) {
    std::ifstream in(std::string(NICTUNE_SOURCE_DIR) + "/docs/profiles.md");
    ASSERT_TRUE(in) << "docs/profiles.md is missing";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), report::keys_markdown())
        << "docs/profiles.md is stale: run `nictunectl keys --markdown > docs/profiles.md`";
}

// docs/man/nictune-profile.5 likewise: `nictunectl keys --man`.
TEST(ProfileReference, CommittedManPageMatchesTheSchemaTable) {
    std::ifstream in(std::string(NICTUNE_SOURCE_DIR) + "/docs/man/nictune-profile.5");
    ASSERT_TRUE(in) << "docs/man/nictune-profile.5 is missing";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), report::keys_man())
        << "docs/man/nictune-profile.5 is stale: run `nictunectl keys --man > "
           "docs/man/nictune-profile.5`";
}

// Every key of the schema is in the man page, as a tagged paragraph.
TEST(ProfileReference, ManPageHasEveryKey) {
    const std::string man = report::keys_man();
    // The document is held: a range-for over a member of a temporary would
    // read freed memory (the temporary ends before the loop; C++23's P2718
    // fix is not in g++ 12).
    const auto doc = report::keys_json();
    for (const auto& k : doc["keys"]) {
        std::string key = k["key"].get<std::string>();
        std::string roff;
        for (char c : key)
            roff += c == '-' ? std::string("\\-") : std::string(1, c);
        EXPECT_NE(man.find(".TP\n.B " + roff + "\n"), std::string::npos) << key;
    }
    EXPECT_NE(man.find(".SS [coalesce]\n"), std::string::npos);
}

TEST(ProfileReference, ListsEveryWritableKey) {
    auto j = report::keys_json();
    bool has_rx_usecs = false, has_mtu = false;
    for (const auto& k : j["keys"]) {
        has_rx_usecs |= k["section"] == "coalesce" && k["key"] == "rx_usecs";
        has_mtu |= k["section"] == "link" && k["key"] == "mtu";
    }
    EXPECT_TRUE(has_rx_usecs);
    EXPECT_TRUE(has_mtu);
}

}  // namespace
}  // namespace nictune
