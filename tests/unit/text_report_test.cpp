// The text report's ring and channel lines come from the schema: every key
// the audit JSON carries is shown (rx_buf_len, cqe_size, tx_push and
// tcp_data_split were dropped when the keys were written out by hand), a
// queue with its maximum side by side, a queue the device does not have
// (maximum 0) left out.
#include "report/text_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace nictune {
namespace {

using Json = nlohmann::json;

std::string line_of(const std::string& text, std::string_view label) {
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t end = text.find('\n', pos);
        const std::string l = text.substr(pos, end == std::string::npos ? end : end - pos);
        if (l.find(label) != std::string::npos) return l;
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return {};
}

Json report_with(Json rings, Json channels) {
    Json iface = {{"name", "p4p1"}, {"link", {{"mtu", 1500}}}};
    iface["rings"] = std::move(rings);
    iface["channels"] = std::move(channels);
    return Json{{"interfaces", Json::array({iface})}};
}

TEST(TextReport, RingsShowEveryKeyOfTheSchemaAndLeaveOutQueuesTheDeviceLacks) {
    const Json j = report_with({{"rx", 512},
                                {"rx_max", 4096},
                                {"tx", 256},
                                {"tx_max", 4096},
                                {"rx_mini", 0},
                                {"rx_mini_max", 0},
                                {"rx_jumbo", 0},
                                {"rx_jumbo_max", 0},
                                {"rx_buf_len", 2048},
                                {"cqe_size", 64},
                                {"tx_push", true},
                                {"tcp_data_split", "enabled"}},
                               {{"combined", 8}, {"combined_max", 63}, {"rx", 0}, {"rx_max", 0}});
    const std::string text = report::audit_text(j, {});
    const std::string rings = line_of(text, "rings");
    ASSERT_FALSE(rings.empty()) << text;
    EXPECT_NE(rings.find("rx 512/4096"), std::string::npos) << rings;
    EXPECT_NE(rings.find("tx 256/4096"), std::string::npos) << rings;
    EXPECT_NE(rings.find("rx_buf_len 2048"), std::string::npos) << rings;
    EXPECT_NE(rings.find("cqe_size 64"), std::string::npos) << rings;
    EXPECT_NE(rings.find("tx_push true"), std::string::npos) << rings;
    EXPECT_NE(rings.find("tcp_data_split"), std::string::npos) << rings;
    EXPECT_EQ(rings.find("rx_mini"), std::string::npos) << rings;
    EXPECT_EQ(rings.find("rx_jumbo"), std::string::npos) << rings;
    EXPECT_EQ(rings.find("rx_max"), std::string::npos)
        << "maxima only beside their queue: " << rings;
    const std::string channels = line_of(text, "channels");
    EXPECT_NE(channels.find("combined 8/63"), std::string::npos) << channels;
    EXPECT_EQ(channels.find("rx 0"), std::string::npos) << channels;
}

TEST(TextReport, ASectionTheDriverLacksSaysSo) {
    const std::string text = report::audit_text(report_with(Json::object(), nullptr), {});
    EXPECT_NE(line_of(text, "rings").find("not supported by the driver"), std::string::npos)
        << text;
    EXPECT_NE(line_of(text, "channels").find("not supported by the driver"), std::string::npos)
        << text;
}

}  // namespace
}  // namespace nictune
