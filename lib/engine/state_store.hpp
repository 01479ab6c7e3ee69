// The state directory (/run/nictune by default): what each interface looked
// like before nictune touched it, what the last transaction set, and how that
// transaction ended. It survives nictunectl and nictuned restarts (not
// reboots: /run is a tmpfs, and so are the settings it describes). The
// records and their text are state_record.hpp's, the journal's file
// state_journal.hpp's; this is the directory that holds them, and its locks.
//
// Files are replaced atomically (util/file.hpp: a temporary file, synced,
// renamed, then the directory synced), so a crash leaves either the old or
// the new file. A corrupt or truncated file is an error naming the file,
// never silently ignored.
//
// Layout (NAME: the interface's current name in nictune's text form,
// escape_name() in util/strings.hpp, so any name the kernel takes is a
// file name here):
//   DIR/interfaces/NAME.json   the InterfaceRecord of NAME: a file of one
//                              record, or one of several (one per line)
//                              linked under each of their names
//   DIR/system.json            SystemRecord (sysctls, tuned: shared by interfaces)
//   DIR/locks/NAME.lock        flock()ed while a transaction runs on NAME
//   DIR/journal/TX.json        the records of transaction TX while it runs
//
// Records are the device's, not the word an operator typed: callers resolve
// a name or alternative name to the device's current name first. A record
// keeps the device's ifindex and MAC, so that a device renamed while nobody
// followed it (nictuned stopped) still finds the one under its old name
// (earlier_records).
//
// A transaction saves the originals of all its interfaces in one journal,
// synced before its first change, and writes the interface files when it
// ends, as one file linked under every interface's name (save_interfaces:
// one file to write and sync instead of one per interface); the journal
// goes only once they are durable. A journal
// nobody holds belongs to a process that died mid-transaction:
// replay_journals() writes its records into the interface files (status
// applying, which recovery restores) unless the interface file already holds
// that transaction's outcome.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/state_journal.hpp"
#include "engine/state_record.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune {

// An exclusive lock on one interface's transactions; released on destruction.
class StateLock {
  public:
    StateLock() = default;
    explicit StateLock(UniqueFd fd) : fd_(std::move(fd)) {}

  private:
    UniqueFd fd_;
};

class StateStore {
  public:
    explicit StateStore(std::filesystem::path dir);
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

    // nullopt when the interface has no record.
    [[nodiscard]] Result<std::optional<InterfaceRecord>> load_interface(
        std::string_view name) const;
    // The records of `names`, in order (nullopt: none); the first error
    // stops it. From kListingThreshold names on, one directory listing
    // replaces an open() per name that has no file. Above nictuned's chunk
    // of new links (32): the listing's cost grows with the directory, which
    // holds a record of every interface ever tuned, and listing 520 records
    // for each chunk of a hotplug burst was 1.5 % of nictuned's CPU.
    // `macs`, when not empty, holds the MAC address each name's device has
    // now: a record written for another address is of another device (a
    // link replaced under the same name holds no originals of the new one)
    // and is not read, nullopt as if there were none. Read as written, so
    // that a name that comes back in a hotplug burst costs no JSON parse.
    static constexpr std::size_t kListingThreshold = 64;
    [[nodiscard]] Result<std::vector<std::optional<InterfaceRecord>>> load_interfaces(
        std::span<const std::string> names, std::span<const std::string_view> macs = {}) const;
    // The same with a result per name: one record's error is that name's.
    // A file holding several of the records is read once.
    [[nodiscard]] std::vector<Result<std::optional<InterfaceRecord>>> load_each(
        std::span<const std::string> names) const;
    // Whether there is a record, without reading it.
    [[nodiscard]] bool has_interface(std::string_view name) const;
    Result<void> save_interface(const InterfaceRecord& r);
    // Several records (the end of a transaction over many interfaces), each
    // replaced atomically and all durable when it returns: one file holding
    // them all, one record per line, written and synced once under a
    // temporary name, then hard-linked under each interface's name (over
    // the old file: a link under a temporary name, renamed), then one
    // directory sync. A file created, written and renamed per interface
    // cost most of an MTU-only apply's own work at 256 interfaces (the
    // inode and page of each, and its removal at the rollback), and on a
    // disk file system a flush each; the links share one inode, which goes
    // with its last name. Stops at the first error.
    // `written`: the same records' lines as the journal holds them
    // (Journal::record_lines), restamped with each record's status and
    // update time instead of encoding the records again; ignored unless it
    // holds exactly these records' lines.
    Result<void> save_interfaces(std::span<const InterfaceRecord> records,
                                 std::string_view written = {});
    Result<void> remove_interface(std::string_view name);
    // Several at once, with one directory sync for all: a result per name
    // (a failed sync is every removed one's).
    std::vector<Result<void>> remove_interfaces(std::span<const std::string> names);
    // The records saved for each device under another name (it was renamed
    // while nobody followed it), checked with same_device(), oldest first.
    // Records named in `skip` (the caller's own) are not read; the others
    // are, from one directory listing. A record that does not load is not
    // this lookup's to report (list() reports it).
    [[nodiscard]] std::vector<std::vector<InterfaceRecord>> earlier_records(
        std::span<const DeviceRef> devices, std::span<const std::string> skip) const;
    // The record of `from` becomes the record of `to` (the interface was
    // renamed), with the system record's owners; all or nothing. The caller
    // holds both locks. Nothing to move is not an error.
    Result<void> rename_interface(std::string_view from, std::string_view to);
    // Every interface record (e.g. to find "applying" ones after a crash).
    // A corrupt file is reported in `errors` and skipped.
    [[nodiscard]] std::vector<InterfaceRecord> list(std::vector<Error>* errors = nullptr) const;

    // An empty record when there is no file.
    [[nodiscard]] Result<SystemRecord> load_system() const;
    Result<void> save_system(const SystemRecord& r);

    // Non-blocking: Errc::Busy when another transaction holds the interface.
    Result<StateLock> lock(std::string_view name);
    // The same for several names, the locks directory opened once: a result
    // per name, in order.
    std::vector<Result<StateLock>> lock_each(std::span<const std::string_view> names);

    // Saves `records` (status applying, with their originals) in one journal,
    // durably, before a transaction changes anything.
    Result<Journal> begin_journal(const std::string& transaction,
                                  std::span<const InterfaceRecord> records);
    // Replays the journals of transactions whose process died (see above).
    // `locked`: the interfaces the caller holds the locks of; a journal with
    // one of them that another process is replaying is waited for, so the
    // caller reads its records only after. Other busy journals are skipped.
    Result<void> replay_journals(std::span<const std::string> locked = {});

  private:
    std::filesystem::path dir_;
};

}  // namespace nictune
