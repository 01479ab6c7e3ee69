// nictuned's log: the journal with structured fields (INTERFACE=, PROFILE=,
// SETTING=, TRANSACTION=) when running under systemd, plain stderr otherwise.
// Only the service layer logs; the engine and the kernel layers return
// errors instead.
#pragma once

#include <string>
#include <string_view>

namespace nictune::service {

enum class Level { Debug, Info, Notice, Warning, Error };

struct LogFields {
    std::string interface;
    std::string profile;
    std::string setting;
    std::string transaction;
};

// Chooses the journal when stderr is connected to it (JOURNAL_STREAM).
void init_log(bool debug);
void log(Level level, std::string_view message, const LogFields& fields = {});

}  // namespace nictune::service
