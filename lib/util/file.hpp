// Whole files, read and written one way everywhere: the state directory, the
// profiles, sysfs and procfs, the node_exporter textfile.
//
// Reading: one loop across short reads and EINTR, "does not exist" kept
// apart from real errors. Writing: AtomicFile, a temporary file in the
// target's directory (rename is atomic only within one file system) that
// takes the target's name once it is complete, so a reader or a crash sees
// the old file or the new one, never a mix. Whether the content and the
// rename must also survive a system crash (fdatasync, then an fsync of the
// directory) is the caller's to say: the state directory's journal must, a
// metrics file need not.
//
// Errors name the target file (not the temporary one) and carry errno.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune {

// An errno about `path` as an Error: "WHAT: PATH: strerror".
std::unexpected<Error> file_error(int err, const std::filesystem::path& path,
                                  std::string_view what);

inline constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

// What an open descriptor holds from its offset on, up to `limit` bytes
// (more is cut off, not an error). `path` names it in errors.
Result<std::string> read_all(int fd, const std::filesystem::path& path,
                             std::size_t limit = kNoLimit);

// The file's text; nullopt when there is no such file (ENOENT).
Result<std::optional<std::string>> read_file(const std::filesystem::path& path,
                                             std::size_t limit = kNoLimit);

// All of `data`, across short writes and EINTR: 0 or the errno.
int write_all(int fd, std::string_view data);

// mkdir, which a directory that is already there satisfies.
Result<void> make_directory(const std::filesystem::path& dir, mode_t mode = 0700);

// An open directory, in which files are replaced and removed by name (one
// path lookup for the directory instead of one per file), and synced once
// for all of them.
class Directory {
  public:
    static Result<Directory> open(std::filesystem::path path);
    // The same, making the directory (0700) and its parent first when it is
    // missing: a state directory exists on every call but the first, and
    // then costs one open instead of two mkdir calls that fail with EEXIST.
    static Result<Directory> open_made(std::filesystem::path path);
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    [[nodiscard]] int fd() const { return fd_.get(); }
    // fsync: the renames and removals made in it survive a system crash.
    // `changed` names the file the caller changed, for the error.
    Result<void> sync(const std::filesystem::path& changed) const;
    // unlinkat: whether there was such a file (one that is already gone is
    // not an error).
    Result<bool> remove(std::string_view name) const;
    // A hard link to the file `existing` takes NAME's place (atomically,
    // when NAME exists: a link under a temporary name, renamed over it).
    // Not synced: Directory::sync.
    Result<void> link(std::string_view existing, std::string_view name) const;

  private:
    Directory(std::filesystem::path path, UniqueFd fd)
        : path_(std::move(path)), fd_(std::move(fd)) {}
    std::filesystem::path path_;
    UniqueFd fd_;
};

// Directory::sync() of `dir`, opened for it.
Result<void> sync_directory(const std::filesystem::path& dir, const std::filesystem::path& changed);

// A replacement for the file NAME in `dir`, written under a temporary name
// (".NAME.XXXXXX": it starts with '.' and keeps no suffix of NAME's, so
// a reader that lists "*.json" or "*.prom" never sees it). Destroyed before
// commit(), it removes its temporary file.
class AtomicFile {
  public:
    // `mode` whatever the umask (a file another user reads needs 0644).
    // `dir` must outlive this object.
    static Result<AtomicFile> create(const Directory& dir, std::string name, mode_t mode = 0600);
    AtomicFile(AtomicFile&& o) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    [[nodiscard]] int fd() const { return fd_.get(); }
    [[nodiscard]] std::filesystem::path target() const { return dir_->path() / name_; }
    Result<void> write(std::string_view data);
    // fdatasync: the content survives a system crash once it is renamed.
    Result<void> sync();
    // Its content also under `name` in the same directory (Directory::link),
    // before or instead of the commit: one file written once for many names.
    Result<void> link_as(std::string_view name) const;
    // Takes NAME's place (the directory is not synced: Directory::sync).
    // The descriptor stays open for a caller that holds a lock on the file;
    // close() reports a delayed write error (NFS) before the rename instead.
    Result<UniqueFd> commit();
    Result<void> close_and_commit();

  private:
    AtomicFile(const Directory& dir, std::string name, std::string tmp, UniqueFd fd)
        : dir_(&dir), name_(std::move(name)), tmp_(std::move(tmp)), fd_(std::move(fd)) {}
    std::unexpected<Error> error(int err, std::string_view what) const;
    const Directory* dir_;
    std::string name_;
    std::string tmp_;  // empty once committed
    UniqueFd fd_;
};

struct AtomicWrite {
    bool sync_file = true;  // fdatasync before the rename
    bool sync_dir = true;   // fsync the directory after it
    mode_t mode = 0600;
};

// `data` replaces `target` atomically (see AtomicFile).
Result<void> write_file_atomically(const std::filesystem::path& target, std::string_view data,
                                   const AtomicWrite& how = {});

}  // namespace nictune
