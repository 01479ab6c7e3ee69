// The state directory (/run/nictune by default): what each interface looked
// like before nictune touched it, what the last transaction set, and how that
// transaction ended. It survives nictunectl and nictuned restarts (not
// reboots: /run is a tmpfs, and so are the settings it describes).
//
// Files are JSON, written atomically (temporary file, fsync, rename, fsync of
// the directory), so a crash leaves either the old or the new file. A corrupt
// or truncated file is an error naming the file, never silently ignored.
//
// Layout:
//   DIR/interfaces/NAME.json   one InterfaceRecord per interface
//   DIR/system.json            SystemRecord (sysctls, tuned: shared by interfaces)
//   DIR/locks/NAME.lock        flock()ed while a transaction runs on NAME
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

class StateStore {
  public:
    explicit StateStore(std::filesystem::path dir);
    [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

    // nullopt when the interface has no record.
    [[nodiscard]] Result<std::optional<InterfaceRecord>> load_interface(
        std::string_view name) const;
    Result<void> save_interface(const InterfaceRecord& r);
    // Several records, each replaced atomically, with one directory sync
    // for all (a transaction over many interfaces). Stops at the first error.
    Result<void> save_interfaces(std::span<const InterfaceRecord> records);
    Result<void> remove_interface(std::string_view name);
    // Every interface record (e.g. to find "applying" ones after a crash).
    // A corrupt file is reported in `errors` and skipped.
    [[nodiscard]] std::vector<InterfaceRecord> list(std::vector<Error>* errors = nullptr) const;

    // An empty record when there is no file.
    [[nodiscard]] Result<SystemRecord> load_system() const;
    Result<void> save_system(const SystemRecord& r);

    // Non-blocking: Errc::Busy when another transaction holds the interface.
    Result<StateLock> lock(std::string_view name);

  private:
    std::filesystem::path dir_;
};

}  // namespace nictune
