// The records of the state directory and their text (the record codec):
// what an interface looked like before nictune touched it (InterfaceRecord),
// the system settings interfaces share (SystemRecord), and the journal of a
// running transaction, one record per line. The files that hold them are
// state_store.hpp's and state_journal.hpp's.
//
// The text is JSON with a version: a file this build does not know how to
// read is refused, never guessed at; a truncated or corrupt one is an error
// naming its source. What is saved must read back identically, so a string
// that is not valid UTF-8 is refused when saving instead of mangled.
#pragma once

#include <cstdint>
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
    // Appends, in order, each of `values` whose key has no original yet
    // (the first of a key wins); never overwrites one. One pass over both
    // with an index of the keys: a transaction placing 512 IRQs saves 512
    // originals, and a search of `originals` per value would be quadratic.
    void add_originals(std::vector<SavedValue> values);
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

// A record is filed under its interface's name: Errc::InvalidArgument for
// a name that is not one.
Result<void> check_record_name(std::string_view name);

// The text of one record: a single line of JSON, newline included.
std::string to_json_text(const InterfaceRecord& r);
std::string to_json_text(const SystemRecord& r);
Result<InterfaceRecord> interface_record_from_json(std::string_view text,
                                                   const std::string& source);
Result<SystemRecord> system_record_from_json(std::string_view text, const std::string& source);
// The same text, refused (naming `source`) when it would not read back as
// it is: a string that is not valid UTF-8.
Result<std::string> text_for_saving(const InterfaceRecord& r, const std::string& source);
Result<std::string> text_for_saving(const SystemRecord& r, const std::string& source);
// Many records' lines into one text: r's checked name, then its line
// appended to `out`, refused as text_for_saving() refuses it and naming
// `dir`/NAME.json; `out` is left as it was on an error.
Result<void> append_for_saving(std::string& out, const InterfaceRecord& r,
                               const std::filesystem::path& dir);

// A record's line as append_for_saving() wrote it (for `r`), with r's status
// and update time, which are all that changes between a transaction's
// journal and its end: appended to `out` without encoding the record again.
// False, and `out` as it was, when `line` is not r's line in that layout.
bool append_restamped(std::string& out, std::string_view line, const InterfaceRecord& r);

// The journal's text: a header line, then one interface record per line.
std::string journal_text(const std::string& transaction, std::span<const InterfaceRecord> records);
// The same, checked as text_for_saving() checks a record, each named
// `dir`/NAME.json in its error.
Result<std::string> journal_text_for_saving(const std::string& transaction,
                                            std::span<const InterfaceRecord> records,
                                            const std::filesystem::path& dir);
Result<std::vector<InterfaceRecord>> journal_records(std::string_view text,
                                                     const std::string& source);

}  // namespace nictune
