// Reading the small text files of sysfs and procfs: one read of the whole
// file, "does not exist" kept apart from real errors. Private to sysinfo/.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/unique_fd.hpp"

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

// Relative to an open directory. A path like /sys/class/net/IF/queues/rx-0/
// rps_cpus walks every component through kernfs (and the class/net link
// to the device's own directory, made into text at each walk) on every
// open: a reader of many files of one interface opens its directory once
// and the files below it by their own one or two components.
//
// The directory at `path` (O_PATH: for *at() calls only, not for
// listing); empty when it cannot be opened, with errno set.
UniqueFd open_dir(const std::filesystem::path& path);
// `rel` below the open directory `dir` (as open_dir; AT_FDCWD: `rel` as a
// path of its own).
UniqueFd open_dir_at(int dir, const char* rel);

// read_text_file of `rel` below the open directory `dir`, for the small
// one-value files of sysfs and procfs: they are made whole at the first
// read, at most a page (a sysfs attribute, a single_open procfs file), so a
// read shorter than a page is all of it and no second read has to find the
// end; a regular file (a test's fixture) reads whole the same way. Not for
// tables such as /proc/interrupts: a seq_file of many records may stop a
// read short of the buffer before its end.
TextFile read_value_file_at(int dir, const char* rel, std::size_t limit = 64 * 1024);
// The same on an open descriptor, from offset 0 (pread): a descriptor just
// written through reads what a new open would (procfs keeps the offset
// where it was after a write, a regular file moves it past the text).
TextFile read_value_fd(int fd, std::size_t limit = 64 * 1024);
// read_value (below) of `rel` below the open directory `dir`.
std::optional<std::string> read_value_at(int dir, const char* rel);

// Each name in the directory open as `dir` (O_RDONLY | O_DIRECTORY, not
// O_PATH), "." and ".." included, handed to `fn` as it comes: getdents64
// directly, where opendir(3) adds an fstat and fdopendir(3) an fcntl too
// per directory listed. 0 or the errno of the listing.
template <class Fn>
int for_each_entry(int dir, Fn&& fn) {
    alignas(dirent64) char buf[32 * 1024];
    while (true) {
        const ssize_t n = ::getdents64(dir, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return 0;
        for (ssize_t at = 0; at < n;) {
            const auto* e = reinterpret_cast<const dirent64*>(buf + at);
            fn(std::string_view(e->d_name));
            at += e->d_reclen;
        }
    }
}

// Surrounding whitespace removed.
std::string_view trim(std::string_view s);
// A one-value kernel file (sysfs, /proc/PID/comm), trimmed; nullopt when it
// cannot be read or holds nothing.
std::optional<std::string> read_value(const std::filesystem::path& path);

// A single path component: non-empty, not "." or "..", no '/' or NUL.
bool safe_component(std::string_view s);

}  // namespace nictune::sysinfo::detail
