// The text of an apply result, line for line: one line per step with its
// outcome padded to 11 columns and the setting's key to the longest key (at
// least 20), then what happened. Pinned so that a faster renderer cannot
// change what operators (and their scripts) read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/transaction.hpp"
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

RollbackResult rolled_back() {
    RollbackResult r;
    r.interface = "p4p1";
    r.profile = "jumbo";
    r.result = TxResult::RolledBack;
    r.restored = {{"p4p1", "link.mtu", uint64_t{1500}, true, ""},
                  {"p4p1", "features.rx-gro", false, true, ""},
                  {"", "sysctl.net.core.rmem_max", uint64_t{212992}, true, ""},
                  {"p4p1", "channels.combined", uint64_t{8}, true,
                   "the interface is gone; its settings went with it"}};
    return r;
}

RollbackResult partial() {
    RollbackResult r = rolled_back();
    r.result = TxResult::Partial;
    r.restored[1] = {"p4p1", "features.rx-gro", false, false,
                     "reads back as true after the restore"};
    r.restored[3] = {"p4p1", "coalesce.rx_usecs", std::monostate{}, false, "cannot read it back"};
    r.error = Error{Errc::Kernel, 0, "p4p1: features.rx-gro", "reads back as true", {}};
    return r;
}

TEST(RollbackText, RestoredAndNotRestoredLines) {
    EXPECT_EQ(report::rollback_text(report::rollback_json(rolled_back()), false),
              "p4p1: rollback of profile jumbo\n"
              "  restored     p4p1: link.mtu = 1500\n"
              "  restored     p4p1: features.rx-gro = false\n"
              "  restored     sysctl.net.core.rmem_max = 212992\n"
              "  restored     p4p1: channels.combined = 8  (the interface is gone; its settings "
              "went with it)\n"
              "result: original settings restored and verified\n");
    EXPECT_EQ(report::rollback_text(report::rollback_json(partial()), false),
              "p4p1: rollback of profile jumbo\n"
              "  restored     p4p1: link.mtu = 1500\n"
              "  NOT restored  p4p1: features.rx-gro = false  (reads back as true after the "
              "restore)\n"
              "  restored     sysctl.net.core.rmem_max = 212992\n"
              "  NOT restored  p4p1: coalesce.rx_usecs = n/a  (cannot read it back)\n"
              "result: rollback incomplete; the saved originals are kept\n"
              "  p4p1: features.rx-gro: reads back as true\n");
}

// A direct run renders the result itself, nictuned's client its JSON: the
// same text either way.
TEST(RollbackText, FromTheResultAsFromItsJson) {
    RollbackResult nothing;
    nothing.interface = "p4p2";
    nothing.nothing_saved = true;
    RollbackResult refused;
    refused.interface = "p4p3";
    refused.profile = "jumbo";
    refused.result = TxResult::Refused;
    refused.error = Error{Errc::Busy, 0, "p4p3", "another transaction holds it", {}};
    RollbackResult failed = refused;
    failed.result = TxResult::Partial;
    failed.error.reset();
    for (const auto& r : {rolled_back(), partial(), nothing, refused, failed})
        for (bool color : {false, true}) {
            SCOPED_TRACE(r.interface + (color ? " in colour" : ""));
            EXPECT_EQ(report::rollback_text(r, color),
                      report::rollback_text(report::rollback_json(r), color));
        }
}

TEST(ApplyText, AResultWithItsRollbackReadsAsItsJson) {
    ApplyResult r;
    r.transaction = "tx-2";
    r.profile = "jumbo";
    r.result = TxResult::Partial;
    PlanStep mtu;
    mtu.setting = SettingId::device(Key::LinkMtu);
    mtu.requested = "link.mtu = 9000";
    mtu.current = uint64_t{1500};
    mtu.target = uint64_t{9000};
    r.interfaces.push_back(
        {"p4p1", {{mtu, Outcome::RolledBack, uint64_t{9000}, std::nullopt}}, {}});
    r.rollback = partial().restored;
    r.error = Error{Errc::Kernel, 0, "p4p1: link.mtu", "refused", {}};
    for (bool color : {false, true}) {
        const std::string text = report::apply_text(r, color);
        EXPECT_EQ(text, report::apply_text(report::apply_json(r), color));
        EXPECT_NE(text.find("NOT restored"), std::string::npos) << text;
        EXPECT_NE(text.find("coalesce.rx_usecs = n/a  (cannot read it back)"), std::string::npos)
            << text;
    }
}

}  // namespace
}  // namespace nictune
