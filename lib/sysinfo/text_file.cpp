#include "sysinfo/text_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "util/unique_fd.hpp"

namespace nictune::sysinfo::detail {

std::unexpected<Error> open_failure(int err, const std::string& context,
                                    const std::string& absent) {
    if (err == ENOENT || err == ENOTDIR) {
        auto e = fail_errno(err, context, Errc::Unsupported);
        e.error().message = absent;
        return e;
    }
    return fail_errno(err, context);
}

Result<void> write_kernel_value(int fd, std::string_view text, const std::string& context) {
    ssize_t n = -1;
    do {
        n = ::write(fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) return fail_errno(errno, context, Errc::Kernel);
    if (static_cast<std::size_t>(n) != text.size()) return fail(Errc::Io, context, "short write");
    return {};
}

Result<void> write_kernel_file(const std::filesystem::path& path, std::string_view text,
                               const std::string& context, const std::string& absent) {
    // No O_CREAT: a missing file is an error, never a new file.
    const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) return open_failure(errno, context, absent);
    return write_kernel_value(fd.get(), text, context);
}

TextFile read_text_file(const std::filesystem::path& path, std::size_t limit) {
    TextFile out;
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        if (errno != ENOENT && errno != ENOTDIR) out.sys_errno = errno;
        return out;
    }
    std::string text;
    char buf[4096];
    // sysfs and procfs attributes report a size of 4096 or 0 whatever they
    // hold, so read until EOF instead of trusting stat().
    while (text.size() < limit) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            out.sys_errno = errno;
            return out;
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    if (text.size() > limit) text.resize(limit);
    out.content = std::move(text);
    return out;
}

UniqueFd open_dir(const std::filesystem::path& path) {
    return open_dir_at(AT_FDCWD, path.c_str());
}

UniqueFd open_dir_at(int dir, const char* rel) {
    return UniqueFd(::openat(dir, rel, O_PATH | O_DIRECTORY | O_CLOEXEC));
}

TextFile read_value_fd(int fd, std::size_t limit) {
    TextFile out;
    std::string text;
    char buf[4096];
    while (text.size() < limit) {
        const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(text.size()));
        if (n < 0) {
            if (errno == EINTR) continue;
            out.sys_errno = errno;
            return out;
        }
        text.append(buf, static_cast<std::size_t>(n));
        // Short of a page: the end (see read_value_file_at).
        if (static_cast<std::size_t>(n) < sizeof buf) break;
    }
    if (text.size() > limit) text.resize(limit);
    out.content = std::move(text);
    return out;
}

TextFile read_value_file_at(int dir, const char* rel, std::size_t limit) {
    const UniqueFd fd(::openat(dir, rel, O_RDONLY | O_CLOEXEC));
    if (!fd) {
        TextFile out;
        if (errno != ENOENT && errno != ENOTDIR) out.sys_errno = errno;
        return out;
    }
    return read_value_fd(fd.get(), limit);
}

std::optional<std::string> read_value_at(int dir, const char* rel) {
    const auto f = read_value_file_at(dir, rel, 4096);
    if (!f.content) return std::nullopt;
    const auto v = trim(*f.content);
    if (v.empty()) return std::nullopt;
    return std::string(v);
}

std::string_view trim(std::string_view s) {
    constexpr std::string_view kSpace = " \t\n\r\f\v";
    const auto b = s.find_first_not_of(kSpace);
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(kSpace);
    return s.substr(b, e - b + 1);
}

bool safe_component(std::string_view s) {
    return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos &&
           s.find('\0') == std::string_view::npos;
}

std::optional<std::string> read_value(const std::filesystem::path& path) {
    const auto f = read_text_file(path, 4096);
    if (!f.content) return std::nullopt;
    const auto v = trim(*f.content);
    if (v.empty()) return std::nullopt;
    return std::string(v);
}

}  // namespace nictune::sysinfo::detail
