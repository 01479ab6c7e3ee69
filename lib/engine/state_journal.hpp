// The journal of a running transaction: DIR/journal/TX.json, the records of
// all its interfaces (status applying, with their originals) in one file,
// written durably before the transaction's first change. Until the
// interface files hold the transaction's outcome, the journal is the durable
// copy of the originals.
//
// Its writer holds a flock on it from before the file has its name (it is
// written under a temporary one and renamed when complete), so a journal
// that nobody holds belongs to a process that died mid-transaction, and a
// temporary one that nobody holds to one that died before it was complete,
// which is before its first change. StateStore::replay_journals() acts on
// those.
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/state_record.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune {

// One journal, held (flock) until finish() or destruction. Destruction
// keeps the file, as a crash would: only finish() says the interface files
// are written.
class Journal {
  public:
    Journal() = default;
    Journal(UniqueFd fd, std::filesystem::path path, std::string text = {})
        : fd_(std::move(fd)), path_(std::move(path)), text_(std::move(text)) {}
    // The transaction's outcome is in the interface files: remove it.
    void finish();
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    // Its records' lines as written (after the header line): the end of
    // the transaction restamps them instead of encoding every record again
    // (StateStore::save_interfaces). Empty once finished.
    [[nodiscard]] std::string_view record_lines() const;

  private:
    UniqueFd fd_;
    std::filesystem::path path_;
    std::string text_;
};

// Writes the journal of `transaction` into `dir` (created when missing),
// synced with its directory, and returns it held.
Result<Journal> write_journal(const std::filesystem::path& dir, const std::string& transaction,
                              std::span<const InterfaceRecord> records);

// Calls `replay` with the records of every complete journal in `dir` whose
// writer died, oldest first, while holding it; removes the journal when
// `replay` succeeds (the first error stops it and keeps the journal).
// Temporary journals of writers that died are removed. A journal that
// another process holds is skipped, unless it has a record of one of
// `locked` (the interfaces the caller holds the locks of): then that
// process is replaying it, and it is waited for.
Result<void> replay_dead_journals(
    const std::filesystem::path& dir, std::span<const std::string> locked,
    const std::function<Result<void>(const std::vector<InterfaceRecord>&)>& replay);

}  // namespace nictune
