// systemd/nictune.catalog against the MESSAGE_IDs nictuned sends
// (lib/service/log.cpp). tests/operators/check-catalog checks that journalctl
// itself parses the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "service/log.hpp"

namespace nictune {
namespace {

// The IDs in the catalog are the ones nictuned sends, one entry each.
TEST(JournalCatalog, HasAnEntryForEveryMessageId) {
    std::ifstream in(std::string(NICTUNE_SOURCE_DIR) + "/systemd/nictune.catalog");
    ASSERT_TRUE(in);
    std::vector<std::string> ids;
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with("-- ")) ids.push_back(line.substr(3));
    std::vector<std::string> sent;
    for (auto e : {service::Event::Applied, service::Event::RolledBack, service::Event::Drift,
                   service::Event::Failed})
        sent.emplace_back(service::message_id(e));
    std::sort(ids.begin(), ids.end());
    std::sort(sent.begin(), sent.end());
    EXPECT_EQ(ids, sent);
    for (const auto& id : sent) {
        EXPECT_EQ(id.size(), 32U) << id;
        EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    }
}

}  // namespace
}  // namespace nictune
