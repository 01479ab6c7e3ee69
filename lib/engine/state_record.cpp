#include "engine/state_record.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <utility>

#include "model/value_json.hpp"
#include "util/enum_names.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

// ordered_json keeps the fields in the order written, so a state file reads
// top-down like the struct when an operator opens it.
using Json = nlohmann::ordered_json;

// Bumped when a field changes meaning or a new one is needed for a correct
// rollback; an older nictune must then refuse the file rather than guess.
constexpr uint64_t kVersion = 1;

std::unexpected<Error> corrupt(const std::string& source, std::string_view detail) {
    return fail(Errc::Io, source, "truncated or corrupt state file: " + std::string(detail));
}

// ---- encoding

// Each value as {"key":...,"value":...}, appended in one piece (records are
// compact): an apply of 512 interfaces writes 18,000 of them, and the
// writer's call per key, value and bracket was half the records' cost.
void write_values(JsonWriter& w, const char* name, const std::vector<SavedValue>& values) {
    w.key(name);
    w.begin_array();
    for (const auto& v : values) {
        std::string& out = w.raw_value();
        out += "{\"key\":";
        bool valid = append_json_string(out, v.key);
        out += ",\"value\":";
        valid &= append_json_value(out, v.value);
        out += '}';
        if (!valid) w.note_replaced();
    }
    w.end_array();
}

// Written in one pass: a transaction over hundreds of interfaces saves a
// record each, twice, and building a JSON tree for each cost more than the
// netlink requests.
// False when one of its strings was not valid UTF-8 (written with U+FFFD).
bool append_interface_text(std::string& out, const InterfaceRecord& r) {
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
    return !w.replaced_invalid_utf8();
}

std::string interface_text(const InterfaceRecord& r) {
    std::string out;
    out.reserve(1536);                    // nine saved values and their targets: about 1,100 bytes
    (void)append_interface_text(out, r);  // what cannot be saved still prints
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

}  // namespace

// ---- records

const char* tx_status_name(TxStatus s) {
    static constexpr EnumNames<TxStatus> kNames{"applying", "applied", "rolled_back", "failed"};
    return kNames[s];
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

void InterfaceRecord::add_originals(std::vector<SavedValue> values) {
    constexpr std::size_t kLinear = 32;
    if (originals.empty() && values.size() <= kLinear) {
        // A first record takes the vector itself, keeping the first value
        // of each key.
        originals = std::move(values);
        std::size_t kept = 0;
        for (std::size_t i = 0; i < originals.size(); ++i) {
            const auto end = originals.begin() + static_cast<std::ptrdiff_t>(kept);
            if (std::none_of(originals.begin(), end,
                             [&](const SavedValue& o) { return o.key == originals[i].key; })) {
                if (kept != i) originals[kept] = std::move(originals[i]);
                ++kept;
            }
        }
        originals.resize(kept);
        return;
    }
    // Views of the keys in place: `originals` is reserved first, so that
    // no push_back moves them (a short key lives inside its string).
    originals.reserve(originals.size() + values.size());
    // A few keys (a profile's MTU, channels and features: about ten) are
    // found faster by looking than by hashing, which also allocates a node
    // per key.
    if (originals.size() + values.size() <= kLinear) {
        for (auto& v : values)
            if (std::none_of(originals.begin(), originals.end(),
                             [&](const SavedValue& o) { return o.key == v.key; }))
                originals.push_back(std::move(v));
        return;
    }
    std::unordered_set<std::string_view> saved;
    saved.reserve(originals.size());
    for (const auto& o : originals)
        saved.insert(o.key);
    for (auto& v : values) {
        if (saved.contains(v.key)) continue;
        originals.push_back(std::move(v));
        saved.insert(originals.back().key);
    }
}

SystemEntry* SystemRecord::find(std::string_view key) {
    const auto it =
        std::ranges::find_if(entries, [&](const SystemEntry& e) { return e.key == key; });
    return it == entries.end() ? nullptr : &*it;
}

bool same_device(const InterfaceRecord& r, const DeviceRef& d) {
    if (r.ifindex != d.ifindex) return false;
    return r.mac == d.mac || (r.perm_mac && d.perm_mac && *r.perm_mac == *d.perm_mac);
}

Result<void> check_record_name(std::string_view name) {
    if (valid_ifname(name)) return {};
    return fail(Errc::InvalidArgument, "", "invalid interface name " + quote_name(name));
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

namespace {

std::unexpected<Error> not_utf8(std::string source) {
    return fail(Errc::InvalidArgument, std::move(source),
                "cannot save a string that is not valid UTF-8");
}

}  // namespace

Result<std::string> text_for_saving(const InterfaceRecord& r, const std::string& source) {
    std::string out;
    out.reserve(1536);
    if (!append_interface_text(out, r)) return not_utf8(source);
    return out;
}

Result<void> append_for_saving(std::string& out, const InterfaceRecord& r,
                               const std::filesystem::path& dir) {
    if (auto ok = check_record_name(r.name); !ok) return ok;
    // The file's name only for the error: building it for each of hundreds
    // of records showed in the profile.
    // Checked as it is written, and taken back when a string was not valid
    // UTF-8 (a separate pass over every string showed in the profile).
    const std::size_t mark = out.size();
    if (!append_interface_text(out, r)) {
        out.resize(mark);
        return not_utf8((dir / (r.name + ".json")).string());
    }
    return {};
}

bool append_restamped(std::string& out, std::string_view line, const InterfaceRecord& r) {
    // The head up to the name is fixed; the name says whose line it is.
    std::string head = "{\"version\":" + std::to_string(kVersion) + ",\"name\":";
    (void)append_json_string(head, r.name);
    head += ',';
    if (!line.starts_with(head) || !line.ends_with("}\n")) return false;
    // No string of the record holds an unescaped quote, so these keys are
    // found only where they are keys: "status" once, before the saved
    // values, and "updated_at" last.
    constexpr std::string_view kStatus = ",\"status\":\"";
    constexpr std::string_view kUpdated = ",\"updated_at\":";
    const auto status = line.find(kStatus, head.size());
    if (status == std::string_view::npos) return false;
    const auto value = status + kStatus.size();
    const auto status_end = line.find('"', value);
    const auto updated = line.rfind(kUpdated);
    if (status_end == std::string_view::npos || updated == std::string_view::npos ||
        updated < status_end)
        return false;
    const auto number = updated + kUpdated.size();
    const auto close = line.size() - 2;  // the closing brace
    if (number >= close || line.find_first_not_of("-0123456789", number) != close) return false;
    out.append(line.substr(0, value)).append(tx_status_name(r.status));
    out.append(line.substr(status_end, number - status_end));
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, r.updated_at).ptr;
    out.append(digits, end).append("}\n");
    return true;
}

Result<std::string> text_for_saving(const SystemRecord& r, const std::string& source) {
    for (const auto& e : r.entries) {
        bool ok = valid_utf8(e.key) && scalar_utf8(e.original) &&
                  std::all_of(e.owners.begin(), e.owners.end(),
                              [](const std::string& o) { return valid_utf8(o); });
        if (!ok)
            return fail(Errc::InvalidArgument, source,
                        "cannot save a string that is not valid UTF-8");
    }
    return system_text(r);
}

// ---- journal

namespace {

// The journal's first line; the records follow, one line each.
std::string journal_header(const std::string& transaction, std::size_t records) {
    std::string out;
    out.reserve(64 + records * 1536);
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
    // About a kilobyte a record (nine saved values and their targets): one
    // allocation instead of a doubling, copy and fresh pages for each.
    out.reserve(out.size() + records.size() * 1024);
    for (const auto& r : records)
        out += interface_text(r);  // one line each, newline included
    return out;
}

Result<std::string> journal_text_for_saving(const std::string& transaction,
                                            std::span<const InterfaceRecord> records,
                                            const std::filesystem::path& dir) {
    // journal_text(), each record encoded (and checked) once, in place.
    std::string out = journal_header(transaction, records.size());
    out.reserve(out.size() + records.size() * 1024);  // as journal_text()
    for (const auto& r : records)
        if (auto ok = append_for_saving(out, r, dir); !ok)
            return std::unexpected(std::move(ok.error()));
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

}  // namespace nictune
