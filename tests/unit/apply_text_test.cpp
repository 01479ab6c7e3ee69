// The text of an apply result, line for line: one line per step with its
// outcome padded to 11 columns and the setting's key to the longest key (at
// least 20), then what happened. Pinned so that a faster renderer cannot
// change what operators (and their scripts) read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/plan_report.hpp"

namespace nictune {
namespace {

using Json = nlohmann::json;

Json step(std::string key, std::string outcome, Json current, Json target, Json actual,
          std::string kind = "change", std::string resolution = "native", std::string note = "") {
    return {{"key", std::move(key)},          {"outcome", std::move(outcome)},
            {"kind", std::move(kind)},        {"resolution", std::move(resolution)},
            {"requested", "link.mtu = 9000"}, {"note", std::move(note)},
            {"current", std::move(current)},  {"target", std::move(target)},
            {"actual", std::move(actual)},    {"error", nullptr}};
}

Json result_with(Json steps, std::string result = "applied") {
    Json failed = step("channels.combined", "failed", 4, 64, nullptr);
    failed["error"] = {{"text", "channels.combined: Invalid argument"}};
    steps.push_back(std::move(failed));
    return {{"transaction", "tx-1"},
            {"profile", "jumbo"},
            {"result", std::move(result)},
            {"error", nullptr},
            {"interfaces", Json::array({{{"name", "p4p1"},
                                         {"warnings", Json::array({"driver 5.1 is known to drop"})},
                                         {"steps", std::move(steps)}}})},
            {"system", Json::array()},
            {"rollback", Json::array()},
            {"refusals", Json::array()},
            {"left", Json::array()}};
}

TEST(ApplyText, EachOutcomeHasItsLineWithTheKeysAligned) {
    Json steps = Json::array();
    steps.push_back(step("link.mtu", "applied", 1500, 9000, 9000));
    steps.push_back(step("features.rx-checksumming", "translated", false, true, true, "change",
                         "translated", "rx-checksum"));
    steps.push_back(
        step("coalesce.rx_usecs", "adjusted", 3, 50, 48, "change", "native", "the driver rounds"));
    steps.push_back(step("rings.rx", "unchanged", 4096, 4096, 4096, "unchanged"));
    steps.push_back(step("rings.tx_push", "unsupported", nullptr, true, nullptr, "unsupported",
                         "native", "not supported by the driver"));
    steps.push_back(step("link.txqueuelen", "not_reached", 1000, 10000, nullptr));
    steps.push_back(step("features.gro", "rolled_back", true, false, true));
    const std::string want =
        "p4p1: profile jumbo\n"
        "  warning: driver 5.1 is known to drop\n"
        "  applied      link.mtu                  1500 -> 9000\n"
        "  translated   features.rx-checksumming  false -> true  (link.mtu = 9000: rx-checksum)\n"
        "  adjusted     coalesce.rx_usecs         3 -> 48  (link.mtu = 9000: the driver rounds)\n"
        "  unchanged    rings.rx                  4096\n"
        "  unsupported  rings.tx_push             not supported by the driver\n"
        "  not_reached  link.txqueuelen           not applied (an earlier step failed)\n"
        "  rolled_back  features.gro              true -> false, undone by the rollback\n"
        "  failed       channels.combined         channels.combined: Invalid argument\n"
        "\n"
        "result: applied and verified (transaction tx-1)\n";
    EXPECT_EQ(report::apply_text(result_with(steps), false), want);
}

TEST(ApplyText, ShortKeysPadToTwentyColumnsAndColourWrapsTheOutcome) {
    Json steps = Json::array({step("link.mtu", "applied", 1500, 9000, 9000)});
    const std::string text = report::apply_text(result_with(steps), true);
    EXPECT_NE(text.find("  \033[32mapplied    \033[0m  link.mtu              1500 -> 9000\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  \033[1;31mfailed     \033[0m  channels.combined     channels."),
              std::string::npos)
        << text;
}

}  // namespace
}  // namespace nictune
