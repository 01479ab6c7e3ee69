// Reading the small text files of sysfs and procfs: one read of the whole
// file, "does not exist" kept apart from real errors. Private to sysinfo/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace nictune::sysinfo::detail {

struct TextFile {
    std::optional<std::string> content;  // absent: no such file
    int sys_errno = 0;                   // set when the file exists but could not be read
};

// Reads up to `limit` bytes. ENOENT and ENOTDIR mean "absent", not an error.
TextFile read_text_file(const std::filesystem::path& path, std::size_t limit = 64 * 1024);

// Surrounding whitespace removed.
std::string_view trim(std::string_view s);

// A single path component: non-empty, not "." or "..", no '/' or NUL.
bool safe_component(std::string_view s);

}  // namespace nictune::sysinfo::detail
