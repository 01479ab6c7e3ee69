// Reading the small text files of sysfs and procfs: one read of the whole
// file, "does not exist" kept apart from real errors. Private to sysinfo/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace nictune::sysinfo::detail {

struct TextFile {
    std::optional<std::string> content;  // absent: no such file
    int sys_errno = 0;                   // set when the file exists but could not be read
};

// Reads up to `limit` bytes. ENOENT and ENOTDIR mean "absent", not an error.
TextFile read_text_file(const std::filesystem::path& path, std::size_t limit = 64 * 1024);

// Writes `text` to a kernel control file (sysfs attribute, /proc/sys entry)
// in one write(2): the kernel parses a value from a single write, so a short
// one counts as a failure. Never creates the file; when it does not exist the
// error is Errc::Unsupported with `absent` as its message. `context` names
// the setting in every error.
Result<void> write_kernel_file(const std::filesystem::path& path, std::string_view text,
                               const std::string& context, const std::string& absent);
// Its two parts, for a file opened otherwise (irq.cpp: relative to a
// directory, for reading too): the error of the open that failed with
// `err`, and the one write(2) to the open file.
std::unexpected<Error> open_failure(int err, const std::string& context, const std::string& absent);
Result<void> write_kernel_value(int fd, std::string_view text, const std::string& context);

// Surrounding whitespace removed.
std::string_view trim(std::string_view s);
// A one-value kernel file (sysfs, /proc/PID/comm), trimmed; nullopt when it
// cannot be read or holds nothing.
std::optional<std::string> read_value(const std::filesystem::path& path);

// A single path component: non-empty, not "." or "..", no '/' or NUL.
bool safe_component(std::string_view s);

}  // namespace nictune::sysinfo::detail
