#include "engine/state_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "model/value_json.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

namespace fs = std::filesystem;

// ordered_json keeps the fields in the order written, so a state file reads
// top-down like the struct when an operator opens it.
using Json = nlohmann::ordered_json;

// Bumped when a field changes meaning or a new one is needed for a correct
// rollback; an older nictune must then refuse the file rather than guess.
constexpr uint64_t kVersion = 1;

// ---- errors

std::unexpected<Error> corrupt(const std::string& source, std::string_view detail) {
    return fail(Errc::Io, source, "truncated or corrupt state file: " + std::string(detail));
}

std::unexpected<Error> sys_error(int err, const fs::path& path, std::string_view what) {
    auto e = fail_errno(err, path.string());
    e.error().message = std::string(what) + ": " + e.error().message;
    return e;
}

Result<void> check_name(std::string_view name) {
    if (valid_ifname(name)) return {};
    return fail(Errc::InvalidArgument, "", "invalid interface name " + quote_name(name));
}

// ---- encoding

void write_values(JsonWriter& w, const char* name, const std::vector<SavedValue>& values) {
    w.key(name);
    w.begin_array();
    for (const auto& v : values) {
        w.begin_object();
        w.field("key", v.key);
        w.key("value");
        json_value(w, v.value);
        w.end_object();
    }
    w.end_array();
}

// Written in one pass: a transaction over hundreds of interfaces saves a
// record each, twice, and building a JSON tree for each cost more than the
// netlink requests.
std::string interface_text(const InterfaceRecord& r) {
    std::string out;
    out.reserve(1024);
    JsonWriter w(out, 0);
    w.begin_object();
    w.field("version", kVersion);
    w.field("name", r.name);
    w.field("ifindex", r.ifindex);
    w.field("mac", r.mac);
    w.field("perm_mac", r.perm_mac);
    w.field("bus_info", r.bus_info);
    w.field("profile", r.profile);
    w.field("transaction", r.transaction);
    w.field("status", tx_status_name(r.status));
    write_values(w, "originals", r.originals);
    write_values(w, "targets", r.targets);
    w.field("updated_at", r.updated_at);
    w.end_object();
    out += '\n';
    return out;
}

std::string system_text(const SystemRecord& r) {
    std::string out;
    JsonWriter w(out, 0);
    w.begin_object();
    w.field("version", kVersion);
    w.key("entries");
    w.begin_array();
    for (const auto& e : r.entries) {
        w.begin_object();
        w.field("key", e.key);
        w.key("original");
        json_value(w, e.original);
        w.key("owners");
        w.begin_array();
        for (const auto& o : e.owners)
            w.value(o);
        w.end_array();
        w.end_object();
    }
    w.end_array();
    w.end_object();
    out += '\n';
    return out;
}

bool scalar_utf8(const Scalar& s) {
    const auto* t = std::get_if<std::string>(&s);
    return !t || valid_utf8(*t);
}

bool values_utf8(const std::vector<SavedValue>& values) {
    return std::all_of(values.begin(), values.end(), [](const SavedValue& v) {
        return valid_utf8(v.key) && scalar_utf8(v.value);
    });
}

// What is saved must read back identically, so a string that is not valid
// UTF-8 (an interface name may hold any byte) is refused instead of mangled.
Result<std::string> encode_for_saving(const InterfaceRecord& r, const fs::path& path) {
    const bool ok = valid_utf8(r.name) && valid_utf8(r.mac) &&
                    (!r.perm_mac || valid_utf8(*r.perm_mac)) &&
                    (!r.bus_info || valid_utf8(*r.bus_info)) && valid_utf8(r.profile) &&
                    valid_utf8(r.transaction) && values_utf8(r.originals) && values_utf8(r.targets);
    if (!ok)
        return fail(Errc::InvalidArgument, path.string(),
                    "cannot save a string that is not valid UTF-8");
    return interface_text(r);
}

Result<std::string> encode_for_saving(const SystemRecord& r, const fs::path& path) {
    for (const auto& e : r.entries) {
        bool ok = valid_utf8(e.key) && scalar_utf8(e.original) &&
                  std::all_of(e.owners.begin(), e.owners.end(),
                              [](const std::string& o) { return valid_utf8(o); });
        if (!ok)
            return fail(Errc::InvalidArgument, path.string(),
                        "cannot save a string that is not valid UTF-8");
    }
    return system_text(r);
}

// ---- decoding

std::string type_of(const Json& j) {
    if (j.is_number_unsigned()) return "an unsigned integer";
    if (j.is_number_integer()) return "a negative integer";
    if (j.is_number_float()) return "a floating-point number";
    if (j.is_null()) return "null";
    if (j.is_boolean()) return "a boolean";
    if (j.is_string()) return "a string";
    if (j.is_array()) return "an array";
    return "an object";
}

// Reads the fields of one JSON object and keeps the first problem found, so
// the record decoders below read as a list of fields rather than a ladder of
// checks. A failed read returns a default value; the caller checks ok() once.
class FieldReader {
  public:
    FieldReader(const Json& obj, std::string where, std::string& problem)
        : obj_(obj), where_(std::move(where)), problem_(problem) {}

    [[nodiscard]] bool ok() const { return problem_.empty(); }

    void note(std::string_view key, std::string_view text) {
        if (ok()) problem_ = path(key) + ": " + std::string(text);
    }

    std::string string(std::string_view key) {
        const Json* j = field(key);
        if (!j) return {};
        if (j->is_string()) return j->get<std::string>();
        wrong_type(key, *j, "a string");
        return {};
    }

    // Absent and null both mean "none": the field is optional in the struct.
    std::optional<std::string> optional_string(std::string_view key) {
        const auto it = obj_.find(std::string(key));
        if (it == obj_.end() || it->is_null()) return std::nullopt;
        if (it->is_string()) return it->get<std::string>();
        wrong_type(key, *it, "a string or null");
        return std::nullopt;
    }

    template <class Int>
    Int integer(std::string_view key) {
        const Json* j = field(key);
        if (!j) return 0;
        if (!j->is_number_integer()) {  // true for unsigned numbers too
            wrong_type(key, *j, "an integer");
            return 0;
        }
        const bool fits = j->is_number_unsigned() ? std::in_range<Int>(j->get<uint64_t>())
                                                  : std::in_range<Int>(j->get<int64_t>());
        if (fits) return j->get<Int>();
        note(key, "integer out of range: " + j->dump());
        return 0;
    }

    Scalar scalar(std::string_view key) {
        const Json* j = field(key);
        if (!j) return {};
        if (j->is_null()) return std::monostate{};
        if (j->is_boolean()) return j->get<bool>();
        if (j->is_number_unsigned()) return j->get<uint64_t>();
        if (j->is_string()) return j->get<std::string>();
        wrong_type(key, *j, "null, a boolean, an unsigned integer or a string");
        return {};
    }

    std::vector<std::string> strings(std::string_view key) {
        std::vector<std::string> out;
        const Json* j = field(key);
        if (!j) return out;
        if (!j->is_array()) {
            wrong_type(key, *j, "an array of strings");
            return out;
        }
        for (std::size_t i = 0; i < j->size(); ++i) {
            const Json& item = (*j)[i];
            if (!item.is_string()) {
                wrong_type(indexed(key, i), item, "a string");
                return out;
            }
            out.push_back(item.get<std::string>());
        }
        return out;
    }

    // Calls each(FieldReader&) for every object of the array `key`.
    template <class F>
    void objects(std::string_view key, F&& each) {
        const Json* j = field(key);
        if (!j) return;
        if (!j->is_array()) return wrong_type(key, *j, "an array of objects");
        for (std::size_t i = 0; i < j->size() && ok(); ++i) {
            const Json& item = (*j)[i];
            if (!item.is_object()) return wrong_type(indexed(key, i), item, "an object");
            FieldReader sub(item, path(indexed(key, i)), problem_);
            each(sub);
        }
    }

  private:
    const Json* field(std::string_view key) {
        const auto it = obj_.find(std::string(key));
        if (it != obj_.end()) return &*it;
        note(key, "missing field");
        return nullptr;
    }

    void wrong_type(std::string_view key, const Json& j, std::string_view expected) {
        note(key, "expected " + std::string(expected) + ", found " + type_of(j));
    }

    static std::string indexed(std::string_view key, std::size_t i) {
        return std::string(key) + "[" + std::to_string(i) + "]";
    }

    [[nodiscard]] std::string path(std::string_view key) const {
        return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
    }

    const Json& obj_;
    std::string where_;  // "originals[2]" inside an array, empty at the top
    std::string& problem_;
};

// The common envelope: one JSON object with a version this build reads.
// Fields we do not know are ignored: the version, not their presence, says
// whether this build may act on the file.
Result<Json> parse_versioned(std::string_view text, const std::string& source) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return corrupt(source, "the file is empty");
    Json j;
    try {
        j = Json::parse(text.begin(), text.end());
    } catch (const Json::exception& e) {
        // Drop nlohmann's "[json.exception.parse_error.101] " tag.
        std::string_view what = e.what();
        if (const auto end = what.find("] "); what.starts_with('[') && end != what.npos)
            what.remove_prefix(end + 2);
        return corrupt(source, what);
    }
    if (!j.is_object()) return corrupt(source, "expected a JSON object, found " + type_of(j));
    const auto v = j.find("version");
    if (v == j.end()) return corrupt(source, "version: missing field");
    if (!v->is_number_unsigned())
        return corrupt(source, "version: expected an unsigned integer, found " + type_of(*v));
    if (v->get<uint64_t>() != kVersion)
        return fail(Errc::Io, source,
                    "unsupported state file version " + std::to_string(v->get<uint64_t>()) +
                        " (this nictune reads version " + std::to_string(kVersion) + ")");
    return j;
}

std::vector<SavedValue> read_values(FieldReader& f, std::string_view key) {
    std::vector<SavedValue> out;
    f.objects(key, [&](FieldReader& item) {
        out.push_back(SavedValue{item.string("key"), item.scalar("value")});
    });
    return out;
}

// ---- files

// The file's content, nullopt when it does not exist.
Result<std::optional<std::string>> read_file(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return std::nullopt;
        return sys_error(errno, path, "cannot open");
    }
    std::string text;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            return sys_error(err, path, "cannot read");
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

Result<void> ensure_dir(const fs::path& dir) {
    if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return {};
    return sys_error(errno, dir, "cannot create the state directory");
}

// Without this the rename may not survive a crash even though the file's
// data would.
Result<void> sync_dir(const fs::path& dir, const fs::path& changed) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return sys_error(errno, changed, "cannot open the directory to sync it");
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return sys_error(err, changed, "cannot sync the directory");
    return {};
}

// Temporary file in the same directory (rename is atomic only within one
// file system), fsync, rename over the target, fsync the directory: a crash
// or a failure leaves the old file or the new one, never a mix. The temporary
// name starts with '.' and does not end in ".json", so list() never reads it.
// All of `data`, across short writes; 0 or the errno.
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

// ".NAME.XXXXXX", a mkostemp template. (Built by appending: g++ 12 at -O3
// warns, wrongly, about `"." + std::string`.)
std::string temp_name(std::string_view name) {
    std::string out(1, '.');
    out += name;
    out += ".XXXXXX";
    return out;
}

// With `locked`: the file is flock()ed before it is written and stays open
// (and locked, through the rename) in *locked, for the caller to close.
Result<void> write_and_rename(const fs::path& target, std::string_view data,
                              int* locked = nullptr) {
    const fs::path dir = target.parent_path();
    std::string tmp = (dir / temp_name(target.filename().string())).string();
    // mkostemp opens with O_CREAT|O_EXCL and mode 0600.
    int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) return sys_error(errno, target, "cannot create a temporary file");

    const auto abandon = [&](int err, std::string_view what) {
        if (fd >= 0) ::close(fd);
        ::unlink(tmp.c_str());
        return sys_error(err, target, what);
    };
    if (locked && ::flock(fd, LOCK_EX | LOCK_NB) != 0) return abandon(errno, "cannot lock");
    if (int err = write_all(fd, data)) return abandon(err, "cannot write");
    if (::fsync(fd) != 0) return abandon(errno, "cannot sync");
    if (locked) {
        if (::rename(tmp.c_str(), target.c_str()) != 0) return abandon(errno, "cannot replace");
        *locked = fd;
        return {};
    }
    // close() reports delayed write errors on some file systems (NFS); the
    // descriptor is gone whatever it returns.
    const int rc = ::close(fd);
    fd = -1;
    if (rc != 0) return abandon(errno, "cannot write");
    if (::rename(tmp.c_str(), target.c_str()) != 0) return abandon(errno, "cannot replace");
    return {};
}

Result<void> write_atomically(const fs::path& target, std::string_view data) {
    if (auto ok = write_and_rename(target, data); !ok) return ok;
    return sync_dir(target.parent_path(), target);
}

Result<std::optional<InterfaceRecord>> load_interface_file(const fs::path& path,
                                                           std::string_view name) {
    auto text = read_file(path);
    if (!text) return std::unexpected(std::move(text.error()));
    if (!*text) return std::nullopt;
    auto r = interface_record_from_json(**text, path.string());
    if (!r) return std::unexpected(std::move(r.error()));
    // Acting on another interface's originals would "restore" the wrong card.
    if (r->name != name)
        return fail(Errc::Io, path.string(),
                    "state file holds the record of " + quote_name(r->name) + ", not of " +
                        quote_name(name));
    return std::move(*r);
}

}  // namespace

// ---- records

const char* tx_status_name(TxStatus s) {
    switch (s) {
        case TxStatus::Applying:
            return "applying";
        case TxStatus::Applied:
            return "applied";
        case TxStatus::RolledBack:
            return "rolled_back";
        case TxStatus::Failed:
            return "failed";
    }
    return "failed";
}

std::optional<TxStatus> tx_status_from(std::string_view s) {
    for (auto t : {TxStatus::Applying, TxStatus::Applied, TxStatus::RolledBack, TxStatus::Failed})
        if (s == tx_status_name(t)) return t;
    return std::nullopt;
}

const SavedValue* InterfaceRecord::original(std::string_view key) const {
    const auto it =
        std::ranges::find_if(originals, [&](const SavedValue& v) { return v.key == key; });
    return it == originals.end() ? nullptr : &*it;
}

SystemEntry* SystemRecord::find(std::string_view key) {
    const auto it =
        std::ranges::find_if(entries, [&](const SystemEntry& e) { return e.key == key; });
    return it == entries.end() ? nullptr : &*it;
}

std::string to_json_text(const InterfaceRecord& r) {
    return interface_text(r);
}

std::string to_json_text(const SystemRecord& r) {
    return system_text(r);
}

Result<InterfaceRecord> interface_record_from_json(std::string_view text,
                                                   const std::string& source) {
    auto j = parse_versioned(text, source);
    if (!j) return std::unexpected(std::move(j.error()));
    std::string problem;
    FieldReader f(*j, "", problem);
    InterfaceRecord r;
    r.name = f.string("name");
    r.ifindex = f.integer<int>("ifindex");
    r.mac = f.string("mac");
    r.perm_mac = f.optional_string("perm_mac");
    r.bus_info = f.optional_string("bus_info");
    r.profile = f.string("profile");
    r.transaction = f.string("transaction");
    const std::string status = f.string("status");
    if (auto s = tx_status_from(status))
        r.status = *s;
    else if (f.ok())
        f.note("status", "unknown transaction status " + quote(status));
    r.originals = read_values(f, "originals");
    r.targets = read_values(f, "targets");
    r.updated_at = f.integer<int64_t>("updated_at");
    if (f.ok() && !valid_ifname(r.name))
        f.note("name", quote_name(r.name) + " is not an interface name");
    if (!f.ok()) return corrupt(source, problem);
    return r;
}

Result<SystemRecord> system_record_from_json(std::string_view text, const std::string& source) {
    auto j = parse_versioned(text, source);
    if (!j) return std::unexpected(std::move(j.error()));
    std::string problem;
    FieldReader f(*j, "", problem);
    SystemRecord r;
    f.objects("entries", [&](FieldReader& item) {
        r.entries.push_back(
            SystemEntry{item.string("key"), item.scalar("original"), item.strings("owners")});
    });
    if (!f.ok()) return corrupt(source, problem);
    return r;
}

// ---- lock

StateLock& StateLock::operator=(StateLock&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
}

StateLock::~StateLock() {
    if (fd_ >= 0) ::close(fd_);
}

// ---- journal

namespace {

// The journal's first line; the records follow, one line each.
std::string journal_header(const std::string& transaction, std::size_t records) {
    std::string out;
    out.reserve(64 + records * 512);
    {
        JsonWriter w(out, 0);
        w.begin_object();
        w.field("version", kVersion);
        w.field("transaction", transaction);
        w.field("records", records);
        w.end_object();
    }
    out += '\n';
    return out;
}

}  // namespace

std::string journal_text(const std::string& transaction, std::span<const InterfaceRecord> records) {
    std::string out = journal_header(transaction, records.size());
    for (const auto& r : records)
        out += interface_text(r);  // one line each, newline included
    return out;
}

Result<std::vector<InterfaceRecord>> journal_records(std::string_view text,
                                                     const std::string& source) {
    const auto eol = text.find('\n');
    if (eol == std::string_view::npos) return corrupt(source, "no header line");
    auto head = parse_versioned(text.substr(0, eol), source);
    if (!head) return std::unexpected(std::move(head.error()));
    const auto count = head->find("records");
    if (count == head->end() || !count->is_number_unsigned())
        return corrupt(source, "records: expected an unsigned integer");
    std::vector<InterfaceRecord> out;
    text.remove_prefix(eol + 1);
    std::size_t line = 2;
    while (!text.empty()) {
        const auto end = text.find('\n');
        if (end == std::string_view::npos) return corrupt(source, "the last line is cut off");
        auto r =
            interface_record_from_json(text.substr(0, end), source + ":" + std::to_string(line));
        if (!r) return std::unexpected(std::move(r.error()));
        out.push_back(std::move(*r));
        text.remove_prefix(end + 1);
        ++line;
    }
    if (out.size() != count->get<uint64_t>())
        return corrupt(source, std::to_string(out.size()) + " records, the header says " +
                                   std::to_string(count->get<uint64_t>()));
    return out;
}

Journal::Journal(Journal&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}

Journal& Journal::operator=(Journal&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(o.fd_, -1);
        path_ = std::move(o.path_);
    }
    return *this;
}

Journal::~Journal() {
    if (fd_ >= 0) ::close(fd_);
}

void Journal::finish() {
    if (fd_ < 0) return;
    // Not synced: if a system crash brings the file back, replay finds the
    // outcome in the interface files (same transaction) and skips them.
    ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
}

// ---- store

StateStore::StateStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

Result<std::optional<InterfaceRecord>> StateStore::load_interface(std::string_view name) const {
    if (auto ok = check_name(name); !ok) return std::unexpected(std::move(ok.error()));
    return load_interface_file(dir_ / "interfaces" / (std::string(name) + ".json"), name);
}

Result<std::vector<std::optional<InterfaceRecord>>> StateStore::load_interfaces(
    std::span<const std::string> names) const {
    std::vector<std::optional<InterfaceRecord>> out(names.size());
    // Many names: one directory listing says which have a file, instead of
    // an open() per name that mostly fails (a first apply to 512 interfaces).
    std::optional<std::unordered_set<std::string>> present;
    if (names.size() >= kListingThreshold) {
        present.emplace();
        const fs::path dir = dir_ / "interfaces";
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            std::string file = it->path().filename().string();
            // Temporary files end in .XXXXXX; ".x.json" is the record of ".x".
            if (!file.ends_with(".json")) continue;
            file.resize(file.size() - 5);
            present->insert(std::move(file));
        }
        // Unreadable directory: fall back to one open per name, which
        // reports the problem with the file's path.
        if (ec && ec != std::errc::no_such_file_or_directory) present.reset();
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (present && !present->contains(names[i])) {
            if (auto ok = check_name(names[i]); !ok) return std::unexpected(std::move(ok.error()));
            continue;
        }
        auto r = load_interface(names[i]);
        if (!r) return std::unexpected(std::move(r.error()));
        out[i] = std::move(*r);
    }
    return out;
}

bool StateStore::has_interface(std::string_view name) const {
    if (!valid_ifname(name)) return false;
    const fs::path path = dir_ / "interfaces" / (std::string(name) + ".json");
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

Result<void> StateStore::save_interface(const InterfaceRecord& r) {
    if (auto ok = check_name(r.name); !ok) return ok;
    const fs::path dir = dir_ / "interfaces";
    const fs::path path = dir / (r.name + ".json");
    auto text = encode_for_saving(r, path);
    if (!text) return std::unexpected(std::move(text.error()));
    if (auto ok = ensure_dir(dir_); !ok) return ok;
    if (auto ok = ensure_dir(dir); !ok) return ok;
    return write_atomically(path, *text);
}

Result<void> StateStore::save_interfaces(std::span<const InterfaceRecord> records) {
    if (records.empty()) return {};
    if (records.size() == 1) return save_interface(records.front());
    const fs::path dir = dir_ / "interfaces";
    if (auto ok = ensure_dir(dir_); !ok) return ok;
    if (auto ok = ensure_dir(dir); !ok) return ok;
    for (const auto& r : records) {
        if (auto ok = check_name(r.name); !ok) return ok;
        const fs::path path = dir / (r.name + ".json");
        auto text = encode_for_saving(r, path);
        if (!text) return std::unexpected(std::move(text.error()));
        if (auto ok = write_and_rename(path, *text); !ok) return ok;
    }
    // One directory sync makes every rename above durable.
    return sync_dir(dir, dir);
}

Result<void> StateStore::remove_interface(std::string_view name) {
    if (auto ok = check_name(name); !ok) return ok;
    const fs::path dir = dir_ / "interfaces";
    const fs::path path = dir / (std::string(name) + ".json");
    if (::unlink(path.c_str()) != 0) {
        // Already gone is what the caller wanted.
        if (errno == ENOENT) return {};
        return sys_error(errno, path, "cannot remove");
    }
    return sync_dir(dir, path);
}

bool same_device(const InterfaceRecord& r, const DeviceRef& d) {
    if (r.ifindex != d.ifindex) return false;
    return r.mac == d.mac || (r.perm_mac && d.perm_mac && *r.perm_mac == *d.perm_mac);
}

std::vector<std::vector<InterfaceRecord>> StateStore::earlier_records(
    std::span<const DeviceRef> devices, std::span<const std::string> skip) const {
    std::vector<std::vector<InterfaceRecord>> out(devices.size());
    std::unordered_map<int, std::vector<std::size_t>> by_ifindex;
    for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i].ifindex > 0) by_ifindex[devices[i].ifindex].push_back(i);
    if (by_ifindex.empty()) return out;
    const std::unordered_set<std::string_view> skipped(skip.begin(), skip.end());
    const fs::path dir = dir_ / "interfaces";
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string file = it->path().filename().string();
        if (!file.ends_with(".json")) continue;
        file.resize(file.size() - 5);
        if (skipped.contains(file) || !valid_ifname(file)) continue;
        // Someone else's record, or unreadable: not this lookup's to report
        // (list() and that interface's own rollback do).
        auto r = load_interface_file(it->path(), file);
        if (!r || !*r) continue;
        auto found = by_ifindex.find((*r)->ifindex);
        if (found == by_ifindex.end()) continue;
        for (std::size_t i : found->second)
            if (same_device(**r, devices[i])) out[i].push_back(**r);
    }
    // Oldest first: its originals are the earliest.
    for (auto& v : out)
        std::ranges::sort(v, {}, &InterfaceRecord::updated_at);
    return out;
}

Result<void> StateStore::rename_interface(std::string_view from, std::string_view to) {
    if (auto ok = check_name(from); !ok) return ok;
    if (auto ok = check_name(to); !ok) return ok;
    if (from == to) return {};
    auto rec = load_interface(from);
    if (!rec) return std::unexpected(std::move(rec.error()));
    if (!*rec) return {};
    auto displaced = load_interface(to);  // another device's record, put back if this fails
    if (!displaced) return std::unexpected(std::move(displaced.error()));
    auto sys = load_system();
    if (!sys) return std::unexpected(std::move(sys.error()));

    InterfaceRecord moved = std::move(**rec);
    moved.name = std::string(to);
    SystemRecord owners = *sys;
    bool owns = false;
    for (auto& e : owners.entries)
        for (auto& o : e.owners)
            if (o == from) {
                o = std::string(to);
                owns = true;
            }
    // Puts back what was there; a step of that which fails too is said in
    // the error returned, so that nothing is dropped silently.
    const auto undone = [&](Error e, bool system) {
        std::vector<std::string> left;
        if (system)
            if (auto ok = save_system(*sys); !ok) left.push_back(ok.error().str());
        auto back = *displaced ? save_interface(**displaced) : remove_interface(to);
        if (!back) left.push_back(back.error().str());
        if (!left.empty()) e.message += "; undoing the move failed too: " + join(left, "; ");
        return std::unexpected(std::move(e));
    };
    if (auto ok = save_interface(moved); !ok) return ok;
    if (owns)
        if (auto ok = save_system(owners); !ok) return undone(std::move(ok.error()), false);
    const fs::path old_path = dir_ / "interfaces" / (std::string(from) + ".json");
    if (::unlink(old_path.c_str()) != 0 && errno != ENOENT) {
        const int err = errno;
        return undone(
            sys_error(err, old_path, "cannot remove (moving the record to " + std::string(to) + ")")
                .error(),
            owns);
    }
    return sync_dir(dir_ / "interfaces", old_path);
}

std::vector<InterfaceRecord> StateStore::list(std::vector<Error>* errors) const {
    std::vector<InterfaceRecord> out;
    const auto report = [&](Error e) {
        if (errors) errors->push_back(std::move(e));
    };
    const fs::path dir = dir_ / "interfaces";
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string file = it->path().filename().string();
        if (!file.ends_with(".json")) continue;
        names.push_back(file.substr(0, file.size() - 5));
    }
    if (ec && ec != std::errc::no_such_file_or_directory)
        report(sys_error(ec.value(), dir, "cannot list the state directory").error());
    // Directory order is arbitrary; callers (and crash recovery logs) get a stable one.
    std::ranges::sort(names);
    for (const auto& name : names) {
        const fs::path path = dir / (name + ".json");
        if (!valid_ifname(name)) {
            report(Error{Errc::Io, 0, path.string(), "not named after an interface", {}});
            continue;
        }
        auto r = load_interface_file(path, name);
        if (!r)
            report(std::move(r.error()));
        else if (*r)  // removed since the directory was read
            out.push_back(std::move(**r));
    }
    return out;
}

Result<SystemRecord> StateStore::load_system() const {
    const fs::path path = dir_ / "system.json";
    auto text = read_file(path);
    if (!text) return std::unexpected(std::move(text.error()));
    if (!*text) return SystemRecord{};
    return system_record_from_json(**text, path.string());
}

Result<void> StateStore::save_system(const SystemRecord& r) {
    const fs::path path = dir_ / "system.json";
    auto text = encode_for_saving(r, path);
    if (!text) return std::unexpected(std::move(text.error()));
    if (auto ok = ensure_dir(dir_); !ok) return ok;
    return write_atomically(path, *text);
}

Result<StateLock> StateStore::lock(std::string_view name) {
    if (auto ok = check_name(name); !ok) return std::unexpected(std::move(ok.error()));
    const fs::path dir = dir_ / "locks";
    // Lock files stay behind: unlinking one while another process waits to
    // open it would let two transactions hold "the" lock on different inodes.
    const fs::path path = dir / (std::string(name) + ".lock");
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT) {
        // The directories are created on first use (two mkdir calls per
        // lock were a tenth of a 512-interface apply).
        if (auto ok = ensure_dir(dir_); !ok) return std::unexpected(std::move(ok.error()));
        if (auto ok = ensure_dir(dir); !ok) return std::unexpected(std::move(ok.error()));
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    }
    if (fd < 0) return sys_error(errno, path, "cannot open the lock file");
    StateLock held(fd);
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK)
            return std::unexpected(Error{Errc::Busy,
                                         errno,
                                         path.string(),
                                         "another transaction is running on " + std::string(name),
                                         {}});
        return sys_error(errno, path, "cannot lock");
    }
    return held;
}

Result<Journal> StateStore::begin_journal(const std::string& transaction,
                                          std::span<const InterfaceRecord> records) {
    const fs::path dir = dir_ / "journal";
    if (transaction.empty() || transaction.front() == '.' ||
        transaction.find('/') != std::string::npos)
        return fail(Errc::InvalidArgument, "", "invalid transaction id " + quote(transaction));
    // The text of journal_text(), each record encoded (and checked) once.
    std::string text = journal_header(transaction, records.size());
    for (const auto& r : records) {
        if (auto ok = check_name(r.name); !ok) return std::unexpected(std::move(ok.error()));
        auto line = encode_for_saving(r, dir / (r.name + ".json"));
        if (!line) return std::unexpected(std::move(line.error()));
        text += *line;
    }
    if (auto ok = ensure_dir(dir_); !ok) return std::unexpected(std::move(ok.error()));
    if (auto ok = ensure_dir(dir); !ok) return std::unexpected(std::move(ok.error()));
    const fs::path path = dir / (transaction + ".json");
    // Written under a temporary name and renamed when complete, so that
    // replay never sees half a journal; locked from the start.
    int fd = -1;
    if (auto ok = write_and_rename(path, text, &fd); !ok)
        return std::unexpected(std::move(ok.error()));
    Journal journal(fd, path);
    if (auto ok = sync_dir(dir, path); !ok) {
        journal.finish();
        return std::unexpected(std::move(ok.error()));
    }
    return journal;
}

Result<void> StateStore::replay_journals(std::span<const std::string> locked) {
    const fs::path dir = dir_ / "journal";
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        files.push_back(it->path().filename().string());
    if (ec && ec != std::errc::no_such_file_or_directory)
        return sys_error(ec.value(), dir, "cannot list the journals");
    std::ranges::sort(files);
    for (const auto& file : files) {
        const fs::path path = dir / file;
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT) continue;  // its transaction ended meanwhile
            return sys_error(errno, path, "cannot open the journal");
        }
        Journal held(fd, path);
        const bool partial = file.starts_with('.');
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK) return sys_error(errno, path, "cannot lock the journal");
            // Its transaction runs, or another process replays it. Only the
            // latter can hold one of our interfaces: wait for it then.
            if (partial || locked.empty()) continue;
            auto text = read_file(path);
            if (!text || !*text) continue;
            auto records = journal_records(**text, path.string());
            if (!records) continue;  // being written: not ours to wait for
            const bool ours = std::ranges::any_of(*records, [&](const InterfaceRecord& r) {
                return std::ranges::find(locked, r.name) != locked.end();
            });
            if (!ours) continue;
            while (::flock(fd, LOCK_EX) != 0)
                if (errno != EINTR) return sys_error(errno, path, "cannot lock the journal");
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0) return sys_error(errno, path, "cannot read the journal");
        if (st.st_nlink == 0) continue;  // replayed by another process meanwhile
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
        for (const auto& r : *records) {
            auto now = load_interface(r.name);
            if (!now) return std::unexpected(std::move(now.error()));
            if (*now && (*now)->transaction == r.transaction) continue;  // it ended
            if (auto ok = save_interface(r); !ok) return ok;
        }
        held.finish();
    }
    return {};
}

}  // namespace nictune
