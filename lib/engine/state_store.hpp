// The state directory (/run/nictune by default): what each interface looked
// like before nictune touched it, what the last transaction set, and how that
// transaction ended. It survives nictunectl and nictuned restarts (not
// reboots: /run is a tmpfs, and so are the settings it describes).
//
// Files are JSON, written atomically (temporary file, fsync, rename, fsync of
// the directory), so a crash leaves either the old or the new file. A corrupt
// or truncated file is an error naming the file, never silently ignored.
//
// Layout (NAME: the interface's current name in nictune's text form,
// escape_name() in util/strings.hpp, so any name the kernel takes is a
// file name here):
//   DIR/interfaces/NAME.json   one InterfaceRecord per interface
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
// A transaction saves the originals of all its interfaces in one journal
// before its first change, and writes the interface files when it ends (one
// file write per interface instead of two; 512 interfaces cost 10 ms less).
// The journal's writer holds a flock on it. A journal nobody holds belongs to
// a process that died mid-transaction: replay_journals() writes its records
// into the interface files (status applying, which recovery restores) unless
// the interface file already holds that transaction's outcome.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/value.hpp"
#include "util/error.hpp"

namespace nictune {

// A setting by its path ("link.mtu", "features.rx-gro",
// "sysctl.net.core.rmem_max", "tuned.profile") and a value.
struct SavedValue {
    std::string key;
    Scalar value;
    bool operator==(const SavedValue&) const = default;
};

enum class TxStatus : uint8_t {
    Applying,    // changes may be half done: restore the originals (crash recovery)
    Applied,     // applied and verified
    RolledBack,  // failed and restored
    Failed,      // failed and the rollback did not complete
};
const char* tx_status_name(TxStatus s);
std::optional<TxStatus> tx_status_from(std::string_view s);

struct InterfaceRecord {
    std::string name;
    int ifindex = 0;
    std::string mac;
    std::optional<std::string> perm_mac;
    std::optional<std::string> bus_info;
    std::string profile;      // the profile last applied
    std::string transaction;  // id of the last transaction
    TxStatus status = TxStatus::Applying;
    // Values before nictune's first change, in the order they were first
    // changed. A later apply adds keys it touches for the first time and never
    // overwrites an original: rollback returns to what the operator had.
    std::vector<SavedValue> originals;
    // What the last transaction set (device form), for verify and drift.
    std::vector<SavedValue> targets;
    int64_t updated_at = 0;  // unix seconds

    bool operator==(const InterfaceRecord&) const = default;
    [[nodiscard]] const SavedValue* original(std::string_view key) const;
};

struct SystemEntry {
    std::string key;                  // "sysctl.NAME" or "tuned.profile"
    Scalar original;                  // before nictune's first change (monostate: none)
    std::vector<std::string> owners;  // interfaces whose profile needs it
    bool operator==(const SystemEntry&) const = default;
};

struct SystemRecord {
    std::vector<SystemEntry> entries;
    bool operator==(const SystemRecord&) const = default;
    [[nodiscard]] SystemEntry* find(std::string_view key);
};

// Serialisation, exposed for tests and for the daemon's Status reply.
std::string to_json_text(const InterfaceRecord& r);
Result<InterfaceRecord> interface_record_from_json(std::string_view text,
                                                   const std::string& source);
std::string to_json_text(const SystemRecord& r);
Result<SystemRecord> system_record_from_json(std::string_view text, const std::string& source);

// A device as the kernel shows it now, to find its record by.
struct DeviceRef {
    std::string name;  // current name, text form
    int ifindex = 0;
    std::string mac;
    std::optional<std::string> perm_mac;
};
// Whether the record was saved for this device (same ifindex, and the same
// current or permanent MAC).
bool same_device(const InterfaceRecord& r, const DeviceRef& d);

// An exclusive lock on one interface's transactions; released on destruction.
class StateLock {
  public:
    StateLock() = default;
    explicit StateLock(int fd) : fd_(fd) {}
    StateLock(StateLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    StateLock& operator=(StateLock&& o) noexcept;
    ~StateLock();

  private:
    int fd_ = -1;
};

// The journal of one running transaction (StateStore::begin_journal). Its
// flock is held until finish() or destruction; destruction keeps the file, as
// a crash would: only finish() says the interface files are written.
class Journal {
  public:
    Journal() = default;
    Journal(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
    Journal(Journal&& o) noexcept;
    Journal& operator=(Journal&& o) noexcept;
    ~Journal();
    // The transaction's outcome is in the interface files: remove it.
    void finish();
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    int fd_ = -1;
    std::filesystem::path path_;
};

// The journal file's text, exposed for tests: a header line, then one
// interface record per line.
std::string journal_text(const std::string& transaction, std::span<const InterfaceRecord> records);
Result<std::vector<InterfaceRecord>> journal_records(std::string_view text,
                                                     const std::string& source);

class StateStore {
  public:
    explicit StateStore(std::filesystem::path dir);
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

    // nullopt when the interface has no record.
    [[nodiscard]] Result<std::optional<InterfaceRecord>> load_interface(
        std::string_view name) const;
    // The records of `names`, in order (nullopt: none); the first error
    // stops it. From kListingThreshold names on, one directory listing
    // replaces an open() per name that has no file.
    static constexpr std::size_t kListingThreshold = 16;
    [[nodiscard]] Result<std::vector<std::optional<InterfaceRecord>>> load_interfaces(
        std::span<const std::string> names) const;
    // Whether there is a record, without reading it.
    [[nodiscard]] bool has_interface(std::string_view name) const;
    Result<void> save_interface(const InterfaceRecord& r);
    // Several records, each replaced atomically, with one directory sync
    // for all (a transaction over many interfaces). Stops at the first error.
    Result<void> save_interfaces(std::span<const InterfaceRecord> records);
    Result<void> remove_interface(std::string_view name);
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
