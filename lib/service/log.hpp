// nictuned's log: the journal with structured fields (INTERFACE=, PROFILE=,
// SETTING=, NICTUNE_TRANSACTION=, and for the events operators watch a
// MESSAGE_ID= with NICTUNE_RESULT=, NICTUNE_REASON=, NICTUNE_EXPECTED=,
// NICTUNE_ACTUAL=) when running under systemd, plain stderr otherwise.
// Only nictuned logs: the service layer here, the watcher through the sink
// it is given (watch/watcher.hpp); the engine and the kernel layers return
// errors instead.
#pragma once

#include <string_view>

#include "model/log_record.hpp"

namespace nictune::service {

// The record types are model/'s (the watcher writes them too); named here
// as well, so that the service code says service::Event as it always has.
using nictune::Event;
using nictune::Level;
using nictune::LogFields;

// The 128-bit ID as 32 hex digits, "" for Event::None.
std::string_view message_id(Event e);

// Chooses the journal when stderr is connected to it (JOURNAL_STREAM).
void init_log(bool debug);
void log(Level level, std::string_view message, const LogFields& fields = {});

}  // namespace nictune::service
