// Terminal colour for the text reports: SGR codes when `on`, plain text
// otherwise (a pipe, NO_COLOR, --no-color).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace nictune::report {

struct Style {
    bool on = false;
    int label_width = 10;  // column of the values after a label

    [[nodiscard]] std::string wrap(std::string_view code, std::string_view s) const {
        if (!on) return std::string(s);
        return fmt::format("\033[{}m{}\033[0m", code, s);
    }
    [[nodiscard]] std::string label(std::string_view s) const {
        return wrap("1", fmt::format("{:<{}}", s, label_width));
    }
    [[nodiscard]] std::string bold(std::string_view s) const { return wrap("1", s); }
    [[nodiscard]] std::string dim(std::string_view s) const { return wrap("2", s); }
    // A check's severity ("fail", "warn", "info") as the reports show it.
    [[nodiscard]] std::string sev(std::string_view v) const {
        if (v == "fail") return wrap("1;31", "FAIL");
        if (v == "warn") return wrap("1;33", "WARN");
        return wrap("36", "info");
    }
};

}  // namespace nictune::report
