// The INI dialect of systemd unit/.link files and of tuned.conf: [Section]
// headers, "Key=Value" (spaces around '=' allowed), '#' and ';' comments at
// the start of a line, a trailing backslash continues a line. Errors are
// "file:line: message".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace nictune::sysinfo {

struct IniEntry {
    std::string section;
    std::string key;
    std::string value;
    int line = 0;
};

Result<std::vector<IniEntry>> parse_ini(std::string_view text, const std::string& file);

}  // namespace nictune::sysinfo
