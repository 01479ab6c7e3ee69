// One message of nictuned's log as the code that decides writes it: a
// level, the text and the structured fields (interface, profile, setting,
// transaction, and for the events operators watch the event with its
// result, reason and values). Where it goes is the writer's business
// (service/log.hpp: the journal or stderr); the watcher, which decides what
// to log but may not depend on the service layer, is handed a LogSink.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nictune {

enum class Level { Debug, Info, Notice, Warning, Error };

// The events with a journal MESSAGE_ID= (`journalctl MESSAGE_ID=...`); each
// has an entry in systemd/nictune.catalog, documented in nictuned(8).
enum class Event : uint8_t {
    None,
    Applied,     // a profile applied and verified
    RolledBack,  // original settings restored (a rollback request, crash recovery)
    Drift,       // a bound setting changed under nictune
    Failed,      // an apply that did not end applied (rolled back, partial, refused, error)
};

struct LogFields {
    std::string interface;
    std::string profile;
    std::string setting;
    std::string transaction;
    Event event{};
    std::string result{};  // NICTUNE_RESULT=: applied, rolled_back, partial, ...
    std::string reason{};  // NICTUNE_REASON=: boot, reload, hotplug, drift, queues, request, crash
    std::string expected{};  // NICTUNE_EXPECTED= (drift): the value nictune left
    std::string actual{};    // NICTUNE_ACTUAL= (drift): the value found
};

// Where a component's messages go; empty: nowhere.
using LogSink = std::function<void(Level, std::string_view message, const LogFields&)>;

}  // namespace nictune
