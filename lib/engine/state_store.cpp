#include "engine/state_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "util/file.hpp"
#include "util/json_writer.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

namespace fs = std::filesystem;

// The directory `dir` inside the state directory (its parent), created on
// first use; errors name `file`, the file the caller meant to write.
Result<Directory> open_dir(const fs::path& dir, const fs::path& file) {
    auto d = Directory::open_made(dir);
    if (!d) d.error().context = file.string();
    return d;
}

// The name a record's line is written for, as written (JSON-escaped, without
// the quotes): interface_text() starts every record with its version and
// name. Empty when the line does not start that way.
std::string_view written_name(std::string_view line) {
    constexpr std::string_view kStart = "{\"version\":";
    constexpr std::string_view kName = ",\"name\":\"";
    if (!line.starts_with(kStart)) return {};
    const auto at = line.find(kName, kStart.size());
    if (at == std::string_view::npos || at > kStart.size() + 20) return {};
    const auto from = at + kName.size();
    for (auto i = from; i < line.size(); ++i) {
        if (line[i] == '\\') {
            ++i;
            continue;
        }
        if (line[i] == '"') return line.substr(from, i - from);
    }
    return {};
}

// A record line's ifindex, read without parsing the line, and the text
// after it: interface_text() writes the ifindex right after the name.
// nullopt when the line is not of that shape (the parser then reads it).
struct WrittenIfindex {
    int ifindex = 0;
    std::string_view rest;  // from the ',' or '}' after the number
};
std::optional<WrittenIfindex> written_ifindex_and_rest(std::string_view line) {
    constexpr std::string_view kIfindex = "\",\"ifindex\":";
    const std::string_view name = written_name(line);
    if (name.empty()) return std::nullopt;
    std::string_view rest =
        line.substr(static_cast<std::size_t>(name.data() - line.data()) + name.size());
    if (!rest.starts_with(kIfindex)) return std::nullopt;
    rest.remove_prefix(kIfindex.size());
    int value = 0;
    const char* last = rest.data() + rest.size();
    const auto [end, ec] = std::from_chars(rest.data(), last, value);
    if (ec != std::errc() || end == rest.data() || end == last || (*end != ',' && *end != '}'))
        return std::nullopt;
    return WrittenIfindex{value, rest.substr(static_cast<std::size_t>(end - rest.data()))};
}

std::optional<int> written_ifindex(std::string_view line) {
    const auto w = written_ifindex_and_rest(line);
    return w ? std::optional<int>(w->ifindex) : std::nullopt;
}

// The MAC address a record's line is written for, as written (JSON-escaped),
// read without parsing the line: interface_text() writes it right after the
// ifindex. nullopt when the line is not of that shape or the value holds an
// escape (no address does).
std::optional<std::string_view> written_mac(std::string_view line) {
    constexpr std::string_view kMac = ",\"mac\":\"";
    const auto w = written_ifindex_and_rest(line);
    if (!w || !w->rest.starts_with(kMac)) return std::nullopt;
    const std::string_view value = w->rest.substr(kMac.size());
    const auto end = value.find_first_of("\"\\");
    if (end == std::string_view::npos || value[end] != '"') return std::nullopt;
    return value.substr(0, end);
}

// Reads record files. save_interfaces() writes the records of a batch into
// one file, one record per line, and links it under each interface's name;
// a file of one record is one line (and so were every earlier version's). A
// reader of many names reads each file once, telling them apart by inode,
// and finds a record's line by the name it starts with, parsing that line
// alone.
class RecordFiles {
  public:
    // `mac`: when given, a record written for another MAC address is not
    // parsed (nullopt, as if there were none).
    Result<std::optional<InterfaceRecord>> load(const fs::path& path, std::string_view name,
                                                std::optional<std::string_view> mac = {}) {
        auto text = find(path, name);
        if (!text) return std::unexpected(std::move(text.error()));
        if (!*text) return std::nullopt;
        if (mac) {
            const auto written = written_mac((*text)->text);
            if (written && *written != *mac) return std::nullopt;
        }
        return parse(**text, path, name);
    }

    // The record's text of `name` in the file at `path` (nullopt: no file),
    // which parse() reads. Files are read once each.
    struct Text {
        std::string_view text;
        std::size_t line = 0;  // its line in a file of several, else 0
        // The ifindex it was written for (written_ifindex).
        [[nodiscard]] std::optional<int> ifindex() const { return written_ifindex(text); }
    };
    Result<std::optional<Text>> find(const fs::path& path, std::string_view name) {
        const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) {
            if (errno == ENOENT) return std::nullopt;
            return file_error(errno, path, "cannot open");
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) return file_error(errno, path, "cannot read");
        auto [it, fresh] = files_.try_emplace({st.st_dev, st.st_ino});
        File& f = it->second;
        if (fresh) {
            auto text = read_all(fd.get(), path);
            if (!text) {
                files_.erase(it);
                return std::unexpected(std::move(text.error()));
            }
            f.text = std::move(*text);
            index(f);
        }
        if (f.lines.empty()) return Text{f.text, 0};
        std::string key;
        append_json_string(key, name);
        const auto line = f.lines.find(std::string_view(key).substr(1, key.size() - 2));
        if (line == f.lines.end())
            return fail(Errc::Io, path.string(),
                        "state file holds no record of " + quote_name(name) + " among its " +
                            std::to_string(f.lines.size()));
        return Text{line->second.text, line->second.number};
    }

    static Result<std::optional<InterfaceRecord>> parse(const Text& t, const fs::path& path,
                                                        std::string_view name) {
        if (t.line == 0) return check_name(interface_record_from_json(t.text, path), path, name);
        return check_name(
            interface_record_from_json(t.text, path.string() + ":" + std::to_string(t.line)), path,
            name);
    }

  private:
    struct Line {
        std::string_view text;
        std::size_t number = 0;  // from 1
    };
    struct File {
        std::string text;
        // A file of several records: each line by the name it is written
        // for. Empty for a file of one record (or text of another shape,
        // which the parser then reports).
        std::unordered_map<std::string_view, Line> lines;
    };

    static void index(File& f) {
        const std::string_view text = f.text;
        const auto first_end = text.find('\n');
        if (first_end == std::string_view::npos || first_end + 1 >= text.size()) return;
        std::size_t number = 0;
        for (std::size_t pos = 0; pos < text.size();) {
            auto end = text.find('\n', pos);
            if (end == std::string_view::npos) end = text.size();
            const std::string_view line = text.substr(pos, end - pos);
            ++number;
            pos = end + 1;
            if (line.empty()) continue;
            const auto name = written_name(line);
            if (name.empty()) {
                // Not records of this shape: parsed whole, as one.
                f.lines.clear();
                return;
            }
            f.lines.emplace(name, Line{line, number});
        }
    }

    // Acting on another interface's originals would "restore" the wrong card.
    static Result<std::optional<InterfaceRecord>> check_name(Result<InterfaceRecord> r,
                                                             const fs::path& path,
                                                             std::string_view name) {
        if (!r) return std::unexpected(std::move(r.error()));
        if (r->name != name)
            return fail(Errc::Io, path.string(),
                        "state file holds the record of " + quote_name(r->name) + ", not of " +
                            quote_name(name));
        return std::move(*r);
    }

    std::map<std::pair<dev_t, ino_t>, File> files_;
};

// The names the records in `dir` are filed under, in directory order.
// Temporary files end in .XXXXXX; ".x.json" is the record of ".x".
std::vector<std::string> record_names(const fs::path& dir, std::error_code& ec) {
    std::vector<std::string> out;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string file = it->path().filename().string();
        if (!file.ends_with(".json")) continue;
        file.resize(file.size() - 5);
        out.push_back(std::move(file));
    }
    return out;
}

}  // namespace

StateStore::StateStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

Result<std::optional<InterfaceRecord>> StateStore::load_interface(std::string_view name) const {
    if (auto ok = check_record_name(name); !ok) return std::unexpected(std::move(ok.error()));
    return RecordFiles().load(dir_ / "interfaces" / (std::string(name) + ".json"), name);
}

Result<std::vector<std::optional<InterfaceRecord>>> StateStore::load_interfaces(
    std::span<const std::string> names, std::span<const std::string_view> macs) const {
    if (!macs.empty() && macs.size() != names.size())
        return fail(Errc::Internal, "", "load_interfaces: one MAC address per name, or none");
    std::vector<std::optional<InterfaceRecord>> out(names.size());
    // Many names: one directory listing says which have a file, instead of
    // an open() per name that mostly fails (a first apply to 512 interfaces).
    std::optional<std::unordered_set<std::string>> present;
    if (names.size() >= kListingThreshold) {
        std::error_code ec;
        auto listed = record_names(dir_ / "interfaces", ec);
        present.emplace(std::make_move_iterator(listed.begin()),
                        std::make_move_iterator(listed.end()));
        // Unreadable directory: fall back to one open per name, which
        // reports the problem with the file's path.
        if (ec && ec != std::errc::no_such_file_or_directory) present.reset();
    }
    RecordFiles files;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (auto ok = check_record_name(names[i]); !ok)
            return std::unexpected(std::move(ok.error()));
        if (present && !present->contains(names[i])) continue;
        auto r = files.load(dir_ / "interfaces" / (names[i] + ".json"), names[i],
                            macs.empty() ? std::nullopt : std::optional(macs[i]));
        if (!r) return std::unexpected(std::move(r.error()));
        out[i] = std::move(*r);
    }
    return out;
}

std::vector<Result<std::optional<InterfaceRecord>>> StateStore::load_each(
    std::span<const std::string> names) const {
    std::vector<Result<std::optional<InterfaceRecord>>> out;
    out.reserve(names.size());
    RecordFiles files;
    for (const auto& name : names) {
        if (auto ok = check_record_name(name); !ok) {
            out.emplace_back(std::unexpected(std::move(ok.error())));
            continue;
        }
        out.push_back(files.load(dir_ / "interfaces" / (name + ".json"), name));
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
    if (auto ok = check_record_name(r.name); !ok) return ok;
    const fs::path dir = dir_ / "interfaces";
    const fs::path path = dir / (r.name + ".json");
    auto text = text_for_saving(r, path.string());
    if (!text) return std::unexpected(std::move(text.error()));
    // The directories exist on every write but the first.
    auto written = write_file_atomically(path, *text);
    if (written || written.error().sys_errno != ENOENT) return written;
    if (auto ok = make_directory(dir_); !ok) return ok;
    if (auto ok = make_directory(dir); !ok) return ok;
    return write_file_atomically(path, *text);
}

namespace {

// The records' lines from `written` (the journal's), restamped; false when
// it does not hold exactly their lines, in order.
bool restamp_all(std::string& text, std::span<const InterfaceRecord> records,
                 std::string_view written) {
    for (const auto& r : records) {
        const auto eol = written.find('\n');
        if (eol == std::string_view::npos || !check_record_name(r.name) ||
            !append_restamped(text, written.substr(0, eol + 1), r))
            return false;
        written.remove_prefix(eol + 1);
    }
    return written.empty();
}

}  // namespace

Result<void> StateStore::save_interfaces(std::span<const InterfaceRecord> records,
                                         std::string_view written) {
    if (records.empty()) return {};
    if (records.size() == 1) return save_interface(records.front());
    const fs::path dir = dir_ / "interfaces";
    const std::string first = records.front().name + ".json";
    std::string text;
    text.reserve(written.empty() ? records.size() * 1536 : written.size() + records.size() * 8);
    // Restamped when the journal's lines are given (an encoding of each
    // record was most of this function's time), encoded otherwise.
    if (written.empty() || !restamp_all(text, records, written)) {
        text.clear();
        for (const auto& r : records)
            if (auto ok = append_for_saving(text, r, dir); !ok) return ok;
    }
    auto d = open_dir(dir, dir / first);
    if (!d) return std::unexpected(std::move(d.error()));
    // Written and synced under a temporary name, never committed: the links
    // are the file's names, and the temporary one goes when `all` does.
    auto all = AtomicFile::create(*d, first);
    if (!all) return std::unexpected(std::move(all.error()));
    if (auto ok = all->write(text); !ok) return ok;
    if (auto ok = all->sync(); !ok) return ok;
    for (const auto& r : records)
        if (auto ok = all->link_as(r.name + ".json"); !ok) return ok;
    // One directory sync makes every link above durable.
    return d->sync(dir);
}

Result<void> StateStore::remove_interface(std::string_view name) {
    const std::string one[] = {std::string(name)};
    return std::move(remove_interfaces(one).front());
}

std::vector<Result<void>> StateStore::remove_interfaces(std::span<const std::string> names) {
    std::vector<Result<void>> out;
    out.reserve(names.size());
    for (const auto& n : names)
        out.push_back(check_record_name(n));
    const fs::path dir = dir_ / "interfaces";
    auto d = Directory::open(dir);
    if (!d) {
        // No directory, no records: what the caller wanted.
        if (d.error().sys_errno != ENOENT)
            for (auto& r : out)
                if (r) r = std::unexpected(d.error());
        return out;
    }
    std::vector<std::size_t> removed;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (!out[i]) continue;
        auto gone = d->remove(names[i] + ".json");
        if (!gone)
            out[i] = std::unexpected(std::move(gone.error()));
        else if (*gone)
            removed.push_back(i);
    }
    // A record that was already gone needs no sync.
    if (removed.empty()) return out;
    const auto synced =
        d->sync(removed.size() == 1 ? dir / (names[removed.front()] + ".json") : dir);
    if (!synced)
        for (std::size_t i : removed)
            out[i] = std::unexpected(synced.error());
    return out;
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
    RecordFiles files;
    for (const auto& file : record_names(dir, ec)) {
        if (skipped.contains(file) || !valid_ifname(file)) continue;
        // Someone else's record, or unreadable: not this lookup's to report
        // (list() and that interface's own rollback do).
        const fs::path path = dir / (file + ".json");
        auto text = files.find(path, file);
        if (!text || !*text) continue;
        // Only a record of one of these ifindexes can be the device's: the
        // others are not parsed (a rollback of one interface among 512 with
        // a record each parsed all 512, as did each of recovery's rollbacks).
        if (auto idx = (*text)->ifindex(); idx && !by_ifindex.contains(*idx)) continue;
        auto r = RecordFiles::parse(**text, path, file);
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
    if (auto ok = check_record_name(from); !ok) return ok;
    if (auto ok = check_record_name(to); !ok) return ok;
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
        return undone(file_error(err, old_path,
                                 "cannot remove (moving the record to " + std::string(to) + ")")
                          .error(),
                      owns);
    }
    return sync_directory(dir_ / "interfaces", old_path);
}

std::vector<InterfaceRecord> StateStore::list(std::vector<Error>* errors) const {
    std::vector<InterfaceRecord> out;
    const auto report = [&](Error e) {
        if (errors) errors->push_back(std::move(e));
    };
    const fs::path dir = dir_ / "interfaces";
    std::error_code ec;
    std::vector<std::string> names = record_names(dir, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
        report(file_error(ec.value(), dir, "cannot list the state directory").error());
    // Directory order is arbitrary; callers (and crash recovery logs) get a stable one.
    std::ranges::sort(names);
    RecordFiles files;
    for (const auto& name : names) {
        const fs::path path = dir / (name + ".json");
        if (!valid_ifname(name)) {
            report(Error{Errc::Io, 0, path.string(), "not named after an interface", {}});
            continue;
        }
        auto r = files.load(path, name);
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
    auto text = text_for_saving(r, path.string());
    if (!text) return std::unexpected(std::move(text.error()));
    auto written = write_file_atomically(path, *text);
    if (written || written.error().sys_errno != ENOENT) return written;
    if (auto ok = make_directory(dir_); !ok) return ok;
    return write_file_atomically(path, *text);
}

namespace {

// flock() on NAME.lock in the open locks directory `dir`.
Result<StateLock> lock_in(const Directory& dir, std::string_view name) {
    // Lock files stay behind: unlinking one while another process waits to
    // open it would let two transactions hold "the" lock on different inodes.
    const std::string file = std::string(name) + ".lock";
    UniqueFd fd(::openat(dir.fd(), file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd) return file_error(errno, dir.path() / file, "cannot open the lock file");
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK)
            return std::unexpected(Error{Errc::Busy,
                                         errno,
                                         (dir.path() / file).string(),
                                         "another transaction is running on " + std::string(name),
                                         {}});
        return file_error(errno, dir.path() / file, "cannot lock");
    }
    return StateLock(std::move(fd));
}

}  // namespace

Result<StateLock> StateStore::lock(std::string_view name) {
    return std::move(lock_each(std::span(&name, 1)).front());
}

std::vector<Result<StateLock>> StateStore::lock_each(std::span<const std::string_view> names) {
    std::vector<Result<StateLock>> out;
    out.reserve(names.size());
    // The directories are created on first use (for a valid name only), and
    // the locks directory is opened once for all the names: a path walk per
    // lock was a tenth of an MTU-only apply of 256 interfaces.
    const fs::path dir = dir_ / "locks";
    std::optional<Result<Directory>> d;
    for (const auto& name : names) {
        if (auto ok = check_record_name(name); !ok) {
            out.emplace_back(std::unexpected(std::move(ok.error())));
            continue;
        }
        if (!d) d = Directory::open_made(dir);
        if (*d)
            out.push_back(lock_in(**d, name));
        else if ((*d).error().context == dir.string())
            // As the lock file's own open would have failed (not a
            // directory, no permission): the error names the lock file.
            out.emplace_back(file_error((*d).error().sys_errno, dir / (std::string(name) + ".lock"),
                                        "cannot open the lock file"));
        else
            out.emplace_back(std::unexpected((*d).error()));
    }
    return out;
}

Result<Journal> StateStore::begin_journal(const std::string& transaction,
                                          std::span<const InterfaceRecord> records) {
    return write_journal(dir_ / "journal", transaction, records);
}

Result<void> StateStore::replay_journals(std::span<const std::string> locked) {
    return replay_dead_journals(
        dir_ / "journal", locked, [&](const std::vector<InterfaceRecord>& records) {
            // What the journal holds goes in, unless the interface's file
            // already holds the outcome of its transaction.
            std::vector<InterfaceRecord> unfinished;
            for (const auto& r : records) {
                auto now = load_interface(r.name);
                if (!now) return Result<void>(std::unexpected(std::move(now.error())));
                if (*now && (*now)->transaction == r.transaction) continue;  // it ended
                unfinished.push_back(r);
            }
            return save_interfaces(unfinished);
        });
}

}  // namespace nictune
