#include "sysinfo/ini.hpp"

#include "sysinfo/text_file.hpp"

namespace nictune::sysinfo {

Result<std::vector<IniEntry>> parse_ini(std::string_view text, const std::string& file) {
    std::vector<IniEntry> out;
    std::string section;
    int lineno = 0;
    auto bad = [&](int line, std::string why) {
        return fail(Errc::InvalidProfile, file + ":" + std::to_string(line), std::move(why));
    };
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string line(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const int first = ++lineno;
        // Continuation lines.
        while (!line.empty() && line.back() == '\\' && !text.empty()) {
            line.pop_back();
            const auto n2 = text.find('\n');
            line += ' ';
            line += text.substr(0, n2);
            text = n2 == std::string_view::npos ? std::string_view{} : text.substr(n2 + 1);
            ++lineno;
        }
        if (line.find('\0') != std::string::npos) return bad(first, "contains a NUL byte");
        const std::string_view l = detail::trim(line);
        if (l.empty() || l.front() == '#' || l.front() == ';') continue;
        if (l.front() == '[') {
            if (l.back() != ']' || l.size() < 3) return bad(first, "malformed section header");
            section = std::string(detail::trim(l.substr(1, l.size() - 2)));
            continue;
        }
        const auto eq = l.find('=');
        if (eq == std::string_view::npos || eq == 0)
            return bad(first, "expected Key=Value, found \"" + std::string(l.substr(0, 64)) + "\"");
        if (section.empty()) return bad(first, "assignment outside of a section");
        out.push_back(IniEntry{section, std::string(detail::trim(l.substr(0, eq))),
                               std::string(detail::trim(l.substr(eq + 1))), first});
    }
    return out;
}

}  // namespace nictune::sysinfo
