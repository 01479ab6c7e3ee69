#include "engine/state_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "util/file.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

namespace fs = std::filesystem;

// Waits for the flock (another process replaying the journal).
Result<void> lock_waiting(int fd, const fs::path& path) {
    while (::flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) return file_error(errno, path, "cannot lock the journal");
    return {};
}

// Whether a journal another process holds has a record of one of `locked`
// (then that process replays it: a running transaction cannot hold an
// interface whose lock the caller has).
bool holds_one_of(const fs::path& path, std::span<const std::string> locked) {
    if (locked.empty()) return false;
    auto text = read_file(path);
    if (!text || !*text) return false;
    auto records = journal_records(**text, path.string());
    if (!records) return false;  // being written: not ours to wait for
    return std::ranges::any_of(*records, [&](const InterfaceRecord& r) {
        return std::ranges::find(locked, r.name) != locked.end();
    });
}

}  // namespace

void Journal::finish() {
    text_ = {};
    if (!fd_) return;
    // Not synced: if a system crash brings the file back, replay finds the
    // outcome in the interface files (same transaction) and skips them.
    ::unlink(path_.c_str());
    fd_.reset();
}

std::string_view Journal::record_lines() const {
    const auto eol = text_.find('\n');
    return eol == std::string::npos ? std::string_view() : std::string_view(text_).substr(eol + 1);
}

Result<Journal> write_journal(const fs::path& dir, const std::string& transaction,
                              std::span<const InterfaceRecord> records) {
    if (transaction.empty() || transaction.front() == '.' ||
        transaction.find('/') != std::string::npos)
        return fail(Errc::InvalidArgument, "", "invalid transaction id " + quote(transaction));
    auto text = journal_text_for_saving(transaction, records, dir);
    if (!text) return std::unexpected(std::move(text.error()));
    auto d = Directory::open_made(dir);
    if (!d) return std::unexpected(std::move(d.error()));
    const std::string name = transaction + ".json";
    const fs::path path = dir / name;
    // Written under a temporary name and renamed when complete, so that
    // replay never sees half a journal; locked from the start.
    auto file = AtomicFile::create(*d, name);
    if (!file) return std::unexpected(std::move(file.error()));
    if (::flock(file->fd(), LOCK_EX | LOCK_NB) != 0) return file_error(errno, path, "cannot lock");
    if (auto ok = file->write(*text); !ok) return std::unexpected(std::move(ok.error()));
    if (auto ok = file->sync(); !ok) return std::unexpected(std::move(ok.error()));
    auto fd = file->commit();
    if (!fd) return std::unexpected(std::move(fd.error()));
    Journal journal(std::move(*fd), path, std::move(*text));
    if (auto ok = d->sync(path); !ok) {
        journal.finish();
        return std::unexpected(std::move(ok.error()));
    }
    return journal;
}

Result<void> replay_dead_journals(
    const fs::path& dir, std::span<const std::string> locked,
    const std::function<Result<void>(const std::vector<InterfaceRecord>&)>& replay) {
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        files.push_back(it->path().filename().string());
    if (ec && ec != std::errc::no_such_file_or_directory)
        return file_error(ec.value(), dir, "cannot list the journals");
    // Transaction ids start with the time.
    std::ranges::sort(files);
    for (const auto& file : files) {
        const fs::path path = dir / file;
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) {
            if (errno == ENOENT) continue;  // its transaction ended meanwhile
            return file_error(errno, path, "cannot open the journal");
        }
        const bool partial = file.starts_with('.');
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK) return file_error(errno, path, "cannot lock the journal");
            // Its transaction runs, or another process replays it. Only the
            // latter can hold one of our interfaces: wait for it then.
            if (partial || !holds_one_of(path, locked)) continue;
            if (auto ok = lock_waiting(fd.get(), path); !ok) return ok;
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) return file_error(errno, path, "cannot read the journal");
        if (st.st_nlink == 0) continue;  // replayed by another process meanwhile
        Journal held(std::move(fd), path);
        // A temporary journal nobody holds: its writer died before it was
        // complete, which is before the first change.
        if (partial) {
            held.finish();
            continue;
        }
        auto text = read_file(path);
        if (!text) return std::unexpected(std::move(text.error()));
        if (!*text) continue;
        auto records = journal_records(**text, path.string());
        if (!records) return std::unexpected(std::move(records.error()));
        if (auto ok = replay(*records); !ok) return ok;
        held.finish();
    }
    return {};
}

}  // namespace nictune
