#include "util/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>

namespace nictune {
namespace {

namespace fs = std::filesystem;

// ".NAME.XXXXXX" with six letters or digits that differ at every call (the
// role of mkostemp's template, which cannot be used relative to a directory
// descriptor).
std::string temp_name(std::string_view name) {
    static std::atomic<uint64_t> counter{0};
    // Once per process: a transaction writes hundreds of files.
    static const auto pid = static_cast<uint64_t>(::getpid());
    uint64_t x =
        pid << 32 ^
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        counter.fetch_add(0x9e3779b97f4a7c15ULL, std::memory_order_relaxed);
    // splitmix64: neighbouring inputs give unrelated outputs.
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    static constexpr std::string_view kChars =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::string out(1, '.');
    out += name;
    out += '.';
    for (int i = 0; i < 6; ++i, x /= kChars.size())
        out += kChars[x % kChars.size()];
    return out;
}

}  // namespace

std::unexpected<Error> file_error(int err, const fs::path& path, std::string_view what) {
    auto e = fail_errno(err, path.string());
    e.error().message = std::string(what) + ": " + e.error().message;
    return e;
}

Result<std::string> read_all(int fd, const fs::path& path, std::size_t limit) {
    std::string text;
    char buf[8192];
    while (text.size() < limit) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return file_error(errno, path, "cannot read");
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    if (text.size() > limit) text.resize(limit);
    return text;
}

Result<std::optional<std::string>> read_file(const fs::path& path, std::size_t limit) {
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::nullopt;
        return file_error(errno, path, "cannot open");
    }
    auto text = read_all(fd.get(), path, limit);
    if (!text) return std::unexpected(std::move(text.error()));
    return std::move(*text);
}

int write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

Result<void> make_directory(const fs::path& dir, mode_t mode) {
    if (::mkdir(dir.c_str(), mode) == 0 || errno == EEXIST) return {};
    return file_error(errno, dir, "cannot create the directory");
}

// ---- Directory

Result<Directory> Directory::open(fs::path path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return file_error(errno, path, "cannot open the directory");
    return Directory(std::move(path), std::move(fd));
}

Result<Directory> Directory::open_made(fs::path path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd && errno == ENOENT) {
        if (auto ok = make_directory(path.parent_path()); !ok) return std::unexpected(ok.error());
        if (auto ok = make_directory(path); !ok) return std::unexpected(ok.error());
        fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    }
    if (!fd) return file_error(errno, path, "cannot open the directory");
    return Directory(std::move(path), std::move(fd));
}

Result<void> Directory::sync(const fs::path& changed) const {
    if (::fsync(fd_.get()) != 0) return file_error(errno, changed, "cannot sync the directory");
    return {};
}

Result<void> sync_directory(const fs::path& dir, const fs::path& changed) {
    const UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return file_error(errno, changed, "cannot open the directory to sync it");
    if (::fsync(fd.get()) != 0) return file_error(errno, changed, "cannot sync the directory");
    return {};
}

Result<bool> Directory::remove(std::string_view name) const {
    const std::string n(name);
    if (::unlinkat(fd_.get(), n.c_str(), 0) == 0) return true;
    if (errno == ENOENT) return false;
    return file_error(errno, path_ / n, "cannot remove");
}

Result<void> Directory::link(std::string_view existing, std::string_view name) const {
    const std::string from(existing);
    const std::string to(name);
    if (::linkat(fd_.get(), from.c_str(), fd_.get(), to.c_str(), 0) == 0) return {};
    if (errno != EEXIST) return file_error(errno, path_ / to, "cannot link");
    // linkat() does not replace: a link under a temporary name, renamed.
    for (int attempt = 0;; ++attempt) {
        const std::string tmp = temp_name(to);
        if (::linkat(fd_.get(), from.c_str(), fd_.get(), tmp.c_str(), 0) != 0) {
            if (errno == EEXIST && attempt < 100) continue;
            return file_error(errno, path_ / to, "cannot link");
        }
        if (::renameat(fd_.get(), tmp.c_str(), fd_.get(), to.c_str()) == 0) return {};
        const int err = errno;
        ::unlinkat(fd_.get(), tmp.c_str(), 0);
        return file_error(err, path_ / to, "cannot replace");
    }
}

// ---- AtomicFile

Result<AtomicFile> AtomicFile::create(const Directory& dir, std::string name, mode_t mode) {
    for (int attempt = 0;; ++attempt) {
        std::string tmp = temp_name(name);
        UniqueFd fd(::openat(dir.fd(), tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode));
        if (!fd) {
            if (errno == EEXIST && attempt < 100) continue;
            return file_error(errno, dir.path() / name, "cannot create a temporary file");
        }
        AtomicFile f(dir, std::move(name), std::move(tmp), std::move(fd));
        // open() applied the umask; a file others must read needs its mode.
        if ((mode & 0077) != 0 && ::fchmod(f.fd(), mode) != 0)
            return f.error(errno, "cannot set the file's mode");
        return f;
    }
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : dir_(o.dir_),
      name_(std::move(o.name_)),
      tmp_(std::exchange(o.tmp_, {})),
      fd_(std::move(o.fd_)) {}

AtomicFile::~AtomicFile() {
    if (!tmp_.empty()) ::unlinkat(dir_->fd(), tmp_.c_str(), 0);
}

std::unexpected<Error> AtomicFile::error(int err, std::string_view what) const {
    return file_error(err, target(), what);
}

Result<void> AtomicFile::write(std::string_view data) {
    if (const int err = write_all(fd_.get(), data)) return error(err, "cannot write");
    return {};
}

Result<void> AtomicFile::sync() {
    if (::fdatasync(fd_.get()) != 0) return error(errno, "cannot sync");
    return {};
}

Result<void> AtomicFile::link_as(std::string_view name) const {
    return dir_->link(tmp_, name);
}

Result<UniqueFd> AtomicFile::commit() {
    if (::renameat(dir_->fd(), tmp_.c_str(), dir_->fd(), name_.c_str()) != 0)
        return error(errno, "cannot replace");
    tmp_.clear();
    return std::move(fd_);
}

Result<void> AtomicFile::close_and_commit() {
    if (const int err = fd_.close()) return error(err, "cannot write");
    auto done = commit();
    if (!done) return std::unexpected(std::move(done.error()));
    return {};
}

Result<void> write_file_atomically(const fs::path& target, std::string_view data,
                                   const AtomicWrite& how) {
    auto dir = Directory::open(target.parent_path().empty() ? fs::path(".") : target.parent_path());
    if (!dir) {
        // Named after the file the caller meant to write.
        dir.error().context = target.string();
        return std::unexpected(std::move(dir.error()));
    }
    auto file = AtomicFile::create(*dir, target.filename().string(), how.mode);
    if (!file) return std::unexpected(std::move(file.error()));
    if (auto ok = file->write(data); !ok) return ok;
    if (how.sync_file)
        if (auto ok = file->sync(); !ok) return ok;
    if (auto ok = file->close_and_commit(); !ok) return ok;
    if (how.sync_dir) return dir->sync(target);
    return {};
}

}  // namespace nictune
