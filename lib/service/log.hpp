// nictuned's log: the journal with structured fields (INTERFACE=, PROFILE=,
// SETTING=, NICTUNE_TRANSACTION=, and for the events operators watch a
// MESSAGE_ID= with NICTUNE_RESULT=, NICTUNE_REASON=, NICTUNE_EXPECTED=,
// NICTUNE_ACTUAL=) when running under systemd, plain stderr otherwise.
// Only the service layer logs; the engine and the kernel layers return
// errors instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nictune::service {

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
// The 128-bit ID as 32 hex digits, "" for Event::None.
std::string_view message_id(Event e);

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

// Chooses the journal when stderr is connected to it (JOURNAL_STREAM).
void init_log(bool debug);
void log(Level level, std::string_view message, const LogFields& fields = {});

}  // namespace nictune::service
