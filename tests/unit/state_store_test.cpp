// The state store: JSON records, atomic writes, corrupt files, locks. Every
// test works in its own mkdtemp directory.
#include "engine/state_store.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "engine/state_record.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

namespace fs = std::filesystem;

class TempDir {
  public:
    TempDir() {
        char tmpl[] = "/tmp/nictune-state-XXXXXX";
        const char* dir = ::mkdtemp(tmpl);
        EXPECT_NE(dir, nullptr) << std::strerror(errno);
        if (dir) path_ = dir;
    }
    ~TempDir() {
        if (path_.empty()) return;
        // A test may have left a directory read-only; remove_all needs write access.
        std::error_code ec;
        for (fs::recursive_directory_iterator it(path_, ec), end; !ec && it != end;
             it.increment(ec))
            if (it->is_directory(ec)) fs::permissions(it->path(), fs::perms::owner_all, ec);
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

void write_text(const fs::path& p, std::string_view text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << p;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Sorted file names, so that a leftover temporary file shows up in a failure.
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path().filename().string());
    std::ranges::sort(out);
    return out;
}

unsigned mode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p << ": " << std::strerror(errno);
    return st.st_mode & 07777;
}

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

InterfaceRecord sample_interface(std::string name = "p4p1") {
    InterfaceRecord r;
    r.name = std::move(name);
    r.ifindex = 7;
    r.mac = "3c:fd:fe:a1:b2:c3";
    r.perm_mac = "3c:fd:fe:a1:b2:c0";
    r.bus_info = "0000:3b:00.0";
    r.profile = "x520-lowlatency";
    r.transaction = "20240501T101500-3f2a";
    r.status = TxStatus::Applied;
    r.originals = {
        {"link.mtu", uint64_t{1500}},        {"rings.rx", std::numeric_limits<uint64_t>::max()},
        {"features.rx-gro", true},           {"coalesce.adaptive-rx", false},
        {"pause.autoneg", std::monostate{}}, {"link.duplex", std::string("full")},
    };
    r.targets = {
        {"link.mtu", uint64_t{9000}},
        {"features.rx-gro", false},
        {"link.duplex", std::string("half")},
        {"pause.autoneg", std::monostate{}},
    };
    r.updated_at = 1714558500;
    return r;
}

InterfaceRecord bare_interface(std::string name) {
    InterfaceRecord r;
    r.name = std::move(name);
    return r;
}

// The record, nullopt for "no record"; a load error fails the test.
std::optional<InterfaceRecord> loaded(const StateStore& store, std::string_view name) {
    auto r = store.load_interface(name);
    if (!r) {
        ADD_FAILURE() << r.error().str();
        return std::nullopt;
    }
    return std::move(*r);
}

SystemRecord sample_system() {
    SystemRecord r;
    r.entries = {
        {"sysctl.net.core.rmem_max", uint64_t{212992}, {"p4p1", "p4p2"}},
        {"sysctl.net.core.busy_poll", uint64_t{0}, {"p4p1"}},
        {"sysctl.net.ipv4.tcp_low_latency", false, {}},
        {"tuned.profile", std::string("balanced"), {"p4p1"}},
        {"sysctl.net.core.netdev_budget", std::monostate{}, {"p4p2"}},
    };
    return r;
}

template <class T>
void expect_corrupt(const Result<T>& r, const std::string& source, std::string_view detail) {
    ASSERT_FALSE(r) << "accepted a bad file; expected an error about " << detail;
    EXPECT_EQ(r.error().code, Errc::Io) << r.error().str();
    EXPECT_EQ(r.error().context, source);
    EXPECT_TRUE(r.error().message.starts_with("truncated or corrupt state file: "))
        << r.error().str();
    EXPECT_TRUE(contains(r.error().message, detail))
        << r.error().str() << "\n  expected to mention: " << detail;
}

// Makes write() fail with EFBIG past `bytes`, which works even for root (who
// ignores read-only directories). SIGXFSZ would kill the process otherwise.
class FileSizeLimit {
  public:
    explicit FileSizeLimit(rlim_t bytes) {
        previous_handler_ = std::signal(SIGXFSZ, SIG_IGN);
        EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &saved_), 0);
        rlimit small = saved_;
        small.rlim_cur = bytes;
        EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0) << std::strerror(errno);
    }
    ~FileSizeLimit() {
        ::setrlimit(RLIMIT_FSIZE, &saved_);
        std::signal(SIGXFSZ, previous_handler_);
    }
    FileSizeLimit(const FileSizeLimit&) = delete;
    FileSizeLimit& operator=(const FileSizeLimit&) = delete;

  private:
    rlimit saved_{};
    void (*previous_handler_)(int) = nullptr;
};

// ---- records and their JSON

TEST(StateRecordJson, RoundTripsAnInterfaceRecordWithEveryScalarType) {
    for (auto r : {sample_interface(), bare_interface("eth0")}) {
        const auto back = interface_record_from_json(to_json_text(r), "test");
        ASSERT_TRUE(back) << back.error().str();
        EXPECT_EQ(*back, r) << to_json_text(r);
    }
}

TEST(StateRecordJson, RoundTripsASystemRecordWithEveryScalarType) {
    for (const auto& r : {sample_system(), SystemRecord{}}) {
        const auto back = system_record_from_json(to_json_text(r), "test");
        ASSERT_TRUE(back) << back.error().str();
        EXPECT_EQ(*back, r) << to_json_text(r);
    }
}

TEST(StateRecordJson, WritesScalarsAsNativeJsonTypes) {
    const auto j = nlohmann::json::parse(to_json_text(sample_interface()));
    EXPECT_EQ(j.at("version"), 1);
    EXPECT_TRUE(j.at("version").is_number_unsigned());
    EXPECT_EQ(j.at("status"), "applied");
    const auto& o = j.at("originals");
    ASSERT_EQ(o.size(), 6u);
    EXPECT_TRUE(o[0].at("value").is_number_unsigned());
    EXPECT_EQ(o[0].at("value"), 1500u);
    EXPECT_EQ(o[1].at("value").get<uint64_t>(), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(o[2].at("value"), true);
    EXPECT_EQ(o[3].at("value"), false);
    EXPECT_TRUE(o[4].at("value").is_null());
    EXPECT_EQ(o[5].at("value"), "full");
    EXPECT_EQ(o[5].at("key"), "link.duplex");

    const auto s = nlohmann::json::parse(to_json_text(sample_system()));
    EXPECT_EQ(s.at("version"), 1);
    EXPECT_EQ(s.at("entries")[0].at("original"), 212992u);
    EXPECT_EQ(s.at("entries")[0].at("owners"), nlohmann::json({"p4p1", "p4p2"}));
    EXPECT_EQ(s.at("entries")[3].at("original"), "balanced");
}

TEST(StateRecordJson, RejectsEveryTruncationOfAValidFile) {
    const std::string text = to_json_text(sample_interface());
    // Cutting after the closing brace leaves valid JSON; every earlier cut must fail.
    const std::size_t last_brace = text.rfind('}');
    for (std::size_t n = 0; n < last_brace + 1; ++n) {
        SCOPED_TRACE("first " + std::to_string(n) + " bytes");
        const auto r = interface_record_from_json(std::string_view(text).substr(0, n), "f.json");
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, Errc::Io);
        EXPECT_EQ(r.error().context, "f.json");
        EXPECT_TRUE(r.error().message.starts_with("truncated or corrupt state file: "))
            << r.error().message;
    }
    const std::string sys = to_json_text(sample_system());
    expect_corrupt(system_record_from_json(sys.substr(0, sys.size() / 2), "s.json"), "s.json",
                   "parse error at line");
}

TEST(StateRecordJson, RejectsEmptyAndGarbageText) {
    expect_corrupt(interface_record_from_json("", "f.json"), "f.json", "the file is empty");
    expect_corrupt(interface_record_from_json(" \n", "f.json"), "f.json", "the file is empty");
    expect_corrupt(interface_record_from_json("\x7f"
                                              "ELF\x02\x01",
                                              "f.json"),
                   "f.json", "parse error");
    expect_corrupt(interface_record_from_json("{\"version\": 1} trailing", "f.json"), "f.json",
                   "parse error");
    expect_corrupt(interface_record_from_json("[1, 2]", "f.json"), "f.json",
                   "expected a JSON object, found an array");
    expect_corrupt(system_record_from_json("null", "s.json"), "s.json",
                   "expected a JSON object, found null");
}

TEST(StateRecordJson, RejectsAnUnknownVersionWithoutGuessing) {
    auto j = nlohmann::json::parse(to_json_text(sample_interface()));
    j["version"] = 2;
    const auto r = interface_record_from_json(j.dump(), "f.json");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::Io);
    EXPECT_EQ(r.error().context, "f.json");
    EXPECT_EQ(r.error().message, "unsupported state file version 2 (this nictune reads version 1)");

    const auto s = system_record_from_json(R"({"version": 0, "entries": []})", "s.json");
    ASSERT_FALSE(s);
    EXPECT_TRUE(contains(s.error().message, "unsupported state file version 0")) << s.error().str();
}

TEST(StateRecordJson, RejectsFieldsOfTheWrongType) {
    struct Case {
        const char* what;
        std::function<void(nlohmann::json&)> mutate;
        const char* detail;
    };
    const Case cases[] = {
        {"version as text", [](auto& j) { j["version"] = "1"; },
         "version: expected an unsigned integer, found a string"},
        {"no version", [](auto& j) { j.erase("version"); }, "version: missing field"},
        {"ifindex as text", [](auto& j) { j["ifindex"] = "7"; },
         "ifindex: expected an integer, found a string"},
        {"ifindex too big", [](auto& j) { j["ifindex"] = uint64_t{1} << 40; },
         "ifindex: integer out of range"},
        {"fractional time", [](auto& j) { j["updated_at"] = 1.5; },
         "updated_at: expected an integer, found a floating-point number"},
        {"name as number", [](auto& j) { j["name"] = 4; },
         "name: expected a string, found an unsigned integer"},
        {"name with a slash", [](auto& j) { j["name"] = "a/b"; },
         "name: 'a/b' is not an interface name"},
        {"perm_mac as bool", [](auto& j) { j["perm_mac"] = true; },
         "perm_mac: expected a string or null, found a boolean"},
        {"unknown status", [](auto& j) { j["status"] = "done"; },
         "status: unknown transaction status 'done'"},
        {"negative value", [](auto& j) { j["originals"][0]["value"] = -3; },
         "originals[0].value: expected null, a boolean, an unsigned integer or a string, found a "
         "negative integer"},
        {"fractional value", [](auto& j) { j["targets"][1]["value"] = 0.5; },
         "targets[1].value: expected null, a boolean, an unsigned integer or a string, found a "
         "floating-point number"},
        {"object value", [](auto& j) { j["originals"][2]["value"] = nlohmann::json::object(); },
         "originals[2].value: expected null, a boolean, an unsigned integer or a string, found an "
         "object"},
        {"originals as object", [](auto& j) { j["originals"] = nlohmann::json::object(); },
         "originals: expected an array of objects, found an object"},
        {"target as number", [](auto& j) { j["targets"][3] = 1; },
         "targets[3]: expected an object, found an unsigned integer"},
        {"value without key", [](auto& j) { j["targets"][2].erase("key"); },
         "targets[2].key: missing field"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        auto j = nlohmann::json::parse(to_json_text(sample_interface()));
        c.mutate(j);
        expect_corrupt(interface_record_from_json(j.dump(), "f.json"), "f.json", c.detail);
    }

    const Case system_cases[] = {
        {"no entries", [](auto& j) { j.erase("entries"); }, "entries: missing field"},
        {"owner as number", [](auto& j) { j["entries"][0]["owners"][1] = 5; },
         "entries[0].owners[1]: expected a string, found an unsigned integer"},
        {"owners as text", [](auto& j) { j["entries"][1]["owners"] = "p4p1"; },
         "entries[1].owners: expected an array of strings, found a string"},
        {"negative original", [](auto& j) { j["entries"][0]["original"] = -1; },
         "entries[0].original: expected null, a boolean, an unsigned integer or a string"},
        {"no original", [](auto& j) { j["entries"][4].erase("original"); },
         "entries[4].original: missing field"},
    };
    for (const auto& c : system_cases) {
        SCOPED_TRACE(c.what);
        auto j = nlohmann::json::parse(to_json_text(sample_system()));
        c.mutate(j);
        expect_corrupt(system_record_from_json(j.dump(), "s.json"), "s.json", c.detail);
    }
}

TEST(StateRecordJson, RejectsEveryMissingRequiredField) {
    for (const char* key : {"name", "ifindex", "mac", "profile", "transaction", "status",
                            "originals", "targets", "updated_at"}) {
        SCOPED_TRACE(key);
        auto j = nlohmann::json::parse(to_json_text(sample_interface()));
        ASSERT_EQ(j.erase(key), 1u);
        expect_corrupt(interface_record_from_json(j.dump(), "f.json"), "f.json",
                       std::string(key) + ": missing field");
    }
}

TEST(StateRecordJson, ReadsAbsentOptionalFieldsAsNone) {
    auto j = nlohmann::json::parse(to_json_text(sample_interface()));
    j.erase("perm_mac");
    j["bus_info"] = nullptr;
    const auto r = interface_record_from_json(j.dump(), "f.json");
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(r->perm_mac, std::nullopt);
    EXPECT_EQ(r->bus_info, std::nullopt);
}

TEST(StateRecordJson, IgnoresUnknownFieldsOfTheSameVersion) {
    auto j = nlohmann::json::parse(to_json_text(sample_interface()));
    j["comment"] = "added by a newer nictune";
    j["originals"][0]["source"] = "netlink";
    const auto r = interface_record_from_json(j.dump(), "f.json");
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(*r, sample_interface());
}

TEST(StateRecordJson, NamesEveryTransactionStatus) {
    const std::pair<TxStatus, std::string_view> names[] = {{TxStatus::Applying, "applying"},
                                                           {TxStatus::Applied, "applied"},
                                                           {TxStatus::RolledBack, "rolled_back"},
                                                           {TxStatus::Failed, "failed"}};
    for (const auto& [status, name] : names) {
        EXPECT_EQ(tx_status_name(status), name);
        EXPECT_EQ(tx_status_from(name), status);
    }
    EXPECT_EQ(tx_status_from("Applied"), std::nullopt);
    EXPECT_EQ(tx_status_from(""), std::nullopt);
}

// The first original of a key stays: an earlier one is never overwritten,
// and of a key given twice the first counts, in the order given. Keys short
// enough to live inside their strings and longer ones, and enough of them
// that the vector grows many times over.
TEST(StateRecordJson, AddsOnlyTheOriginalsOfKeysNotSavedYetInOrder) {
    InterfaceRecord r;
    r.originals = {{"irq.5.cpus", Scalar(std::string("7"))},
                   {"sysctl.net.core.rmem_max.of.some.length", Scalar(uint64_t{1})}};
    std::vector<SavedValue> add;
    std::vector<SavedValue> want = r.originals;
    for (unsigned i = 0; i < 600; ++i) {
        const std::string key = i % 2 ? "irq." + std::to_string(i) + ".cpus"
                                      : "queues.rx-" + std::to_string(i) + ".rps_cpus.longer";
        add.push_back({key, Scalar(std::to_string(i))});
        if (i != 5) want.push_back(add.back());  // irq.5.cpus was saved before
        if (i % 7 == 0) add.push_back({key, Scalar(std::string("second"))});
    }
    add.push_back({"irq.5.cpus", Scalar(std::string("0"))});
    add.insert(add.begin() + 100, {"sysctl.net.core.rmem_max.of.some.length", Scalar(uint64_t{2})});
    r.add_originals(add);
    EXPECT_EQ(r.originals, want);
    r.add_originals(
        {{"irq.1.cpus", Scalar(std::string("x"))}, {"link.mtu", Scalar(uint64_t{9000})}});
    EXPECT_EQ(r.originals.size(), want.size() + 1);
    EXPECT_EQ(r.originals.back(), (SavedValue{"link.mtu", Scalar(uint64_t{9000})}));
    ASSERT_NE(r.original("irq.1.cpus"), nullptr);
    EXPECT_EQ(r.original("irq.1.cpus")->value, Scalar(std::string("1")));
}

// A record of a few keys (the common case, searched without a hash): the
// first original of a key wins, whether saved before or earlier in the same
// call, and the new ones keep their order.
TEST(StateRecordJson, AddsTheFirstOriginalOfEachKeyToASmallRecord) {
    InterfaceRecord r;
    r.originals = {{"link.mtu", Scalar(uint64_t{1500})}};
    r.add_originals({{"channels.rx", Scalar(uint64_t{1})},
                     {"link.mtu", Scalar(uint64_t{9000})},
                     {"features.rx-gro", Scalar(false)},
                     {"channels.rx", Scalar(uint64_t{4})},
                     {"features.tx-tcp-segmentation", Scalar(true)}});
    const std::vector<SavedValue> want = {{"link.mtu", Scalar(uint64_t{1500})},
                                          {"channels.rx", Scalar(uint64_t{1})},
                                          {"features.rx-gro", Scalar(false)},
                                          {"features.tx-tcp-segmentation", Scalar(true)}};
    EXPECT_EQ(r.originals, want);
    r.add_originals({{"features.rx-gro", Scalar(true)}});
    EXPECT_EQ(r.originals, want) << "an original is never overwritten";
}

TEST(StateRecordJson, AnEmptyRecordKeepsTheFirstOriginalOfEachKey) {
    InterfaceRecord r;
    r.add_originals({{"channels.rx", Scalar(uint64_t{1})},
                     {"link.mtu", Scalar(uint64_t{1500})},
                     {"channels.rx", Scalar(uint64_t{4})},
                     {"features.rx-gro", Scalar(false)},
                     {"link.mtu", Scalar(uint64_t{9000})},
                     {"features.tx-tcp-segmentation", Scalar(true)}});
    const std::vector<SavedValue> want = {{"channels.rx", Scalar(uint64_t{1})},
                                          {"link.mtu", Scalar(uint64_t{1500})},
                                          {"features.rx-gro", Scalar(false)},
                                          {"features.tx-tcp-segmentation", Scalar(true)}};
    EXPECT_EQ(r.originals, want);
    r.add_originals({});
    EXPECT_EQ(r.originals, want);
}

TEST(StateRecordJson, FindsOriginalsAndSystemEntriesByKey) {
    const auto r = sample_interface();
    ASSERT_NE(r.original("link.duplex"), nullptr);
    EXPECT_EQ(r.original("link.duplex")->value, Scalar(std::string("full")));
    EXPECT_EQ(r.original("link.speed"), nullptr);

    auto s = sample_system();
    SystemEntry* e = s.find("tuned.profile");
    ASSERT_NE(e, nullptr);
    e->owners.push_back("p4p2");
    EXPECT_EQ(s.entries[3].owners, (std::vector<std::string>{"p4p1", "p4p2"}));
    EXPECT_EQ(s.find("sysctl.net.core.wmem_max"), nullptr);
}

// ---- files

TEST(StateStore, RoundTripsAnInterfaceRecord) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto r = sample_interface();
    ASSERT_TRUE(store.save_interface(r));
    const auto back = store.load_interface("p4p1");
    ASSERT_TRUE(back) << back.error().str();
    ASSERT_TRUE(*back);
    EXPECT_EQ(**back, r);
}

TEST(StateStore, RoundTripsASystemRecord) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_system(sample_system()));
    const auto back = store.load_system();
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(*back, sample_system());
}

TEST(StateStore, HasNoRecordsBeforeTheFirstSave) {
    TempDir tmp;
    // The state directory itself does not exist yet: nothing has been tuned.
    StateStore store(tmp.path() / "state");
    const auto r = store.load_interface("p4p1");
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(*r, std::nullopt);
    const auto s = store.load_system();
    ASSERT_TRUE(s) << s.error().str();
    EXPECT_EQ(*s, SystemRecord{});
    std::vector<Error> errors;
    EXPECT_TRUE(store.list(&errors).empty());
    EXPECT_TRUE(errors.empty());
    EXPECT_FALSE(fs::exists(tmp.path() / "state")) << "reading must not create the directory";
}

// Many names at once (one listing of interfaces/ instead of an open() per
// name): the same answer as one load_interface per name, a corrupt file
// reported by its path, a bad name refused even when it has no file.
TEST(StateStore, LoadsManyRecordsAsOneByOneWould) {
    TempDir tmp;
    StateStore store(tmp.path());
    std::vector<std::string> names;
    for (int i = 0; i < static_cast<int>(StateStore::kListingThreshold) + 4; ++i)
        names.push_back("vf" + std::to_string(i));
    const auto none = store.load_interfaces(names);
    ASSERT_TRUE(none) << none.error().str();
    EXPECT_EQ(none->size(), names.size());
    for (const auto& r : *none)
        EXPECT_EQ(r, std::nullopt);
    EXPECT_FALSE(fs::exists(tmp.path() / "interfaces")) << "reading must not create it";

    for (const char* n : {"vf0", "vf7", "vf19"})
        ASSERT_TRUE(store.save_interface(sample_interface(n)));
    const auto some = store.load_interfaces(names);
    ASSERT_TRUE(some) << some.error().str();
    for (std::size_t i = 0; i < names.size(); ++i)
        EXPECT_EQ((*some)[i], loaded(store, names[i])) << names[i];
    EXPECT_EQ((*some)[7], sample_interface("vf7"));

    auto bad = names;
    bad.push_back("../etc");
    EXPECT_FALSE(store.load_interfaces(bad));

    const fs::path vf7 = tmp.path() / "interfaces" / "vf7.json";
    write_text(vf7, "{");
    expect_corrupt(store.load_interfaces(names), vf7.string(), "parse error");
}

// Given the MAC address each name's device has now, a record written for
// another address (a link replaced under the name) is left unread, as if
// there were none: its text after the address is not even parsed. A record
// of the same address is read and checked as before, and so is a line whose
// start is not of the written shape.
TEST(StateStore, ARecordOfAnotherMacAddressIsNotRead) {
    TempDir tmp;
    StateStore store(tmp.path());
    const std::vector<std::string> names{"p4p1", "p4p2", "p4p3"};
    ASSERT_TRUE(store.save_interfaces(std::vector<InterfaceRecord>{
        sample_interface("p4p1"), sample_interface("p4p2"), sample_interface("p4p3")}));
    const std::string same = sample_interface().mac;
    const std::vector<std::string_view> macs{same, "02:00:00:00:00:01", same};
    const auto got = store.load_interfaces(names, macs);
    ASSERT_TRUE(got) << got.error().str();
    EXPECT_EQ((*got)[0], sample_interface("p4p1"));
    EXPECT_EQ((*got)[1], std::nullopt);
    EXPECT_EQ((*got)[2], sample_interface("p4p3"));
    // Without the addresses, every record is read.
    const auto all = store.load_interfaces(names);
    ASSERT_TRUE(all) << all.error().str();
    EXPECT_EQ((*all)[1], sample_interface("p4p2"));

    // Damage after the address: unread for another address, an error for
    // the device's own.
    const fs::path p4p2 = tmp.path() / "interfaces" / "p4p2.json";
    std::string text = to_json_text(sample_interface("p4p2"));
    text.resize(text.find("\"profile\""));
    text += "\"profile\":";
    write_text(p4p2, text);
    const std::vector<std::string> one{"p4p2"};
    const std::vector<std::string_view> other{"02:00:00:00:00:01"};
    const auto skipped = store.load_interfaces(one, other);
    ASSERT_TRUE(skipped) << skipped.error().str();
    EXPECT_EQ((*skipped)[0], std::nullopt);
    const std::vector<std::string_view> own{same};
    expect_corrupt(store.load_interfaces(one, own), p4p2.string(), "parse error");
    // A start of another shape is parsed whole, whatever the address.
    write_text(p4p2, "{\"name\":\"p4p2\",\"version\":1,\"mac\":\"02:00:00:00:00:01\"");
    expect_corrupt(store.load_interfaces(one, other), p4p2.string(), "parse error");

    // One address per name, or none.
    const std::vector<std::string_view> short_macs{same};
    EXPECT_FALSE(store.load_interfaces(names, short_macs));
}

TEST(StateStore, CreatesPrivateDirectoriesAndFiles) {
    TempDir tmp;
    const fs::path dir = tmp.path() / "state";
    StateStore store(dir);
    ASSERT_TRUE(store.save_interface(sample_interface()));
    ASSERT_TRUE(store.save_system(sample_system()));
    const auto lock = store.lock("p4p1");
    ASSERT_TRUE(lock) << lock.error().str();
    EXPECT_EQ(mode_of(dir), 0700u);
    EXPECT_EQ(mode_of(dir / "interfaces"), 0700u);
    EXPECT_EQ(mode_of(dir / "locks"), 0700u);
    EXPECT_EQ(mode_of(dir / "interfaces" / "p4p1.json"), 0600u);
    EXPECT_EQ(mode_of(dir / "system.json"), 0600u);
    EXPECT_EQ(mode_of(dir / "locks" / "p4p1.lock"), 0600u);
}

TEST(StateStore, ReplacesTheOldFileAndLeavesNoTemporaryFiles) {
    TempDir tmp;
    StateStore store(tmp.path());
    auto r = sample_interface();
    ASSERT_TRUE(store.save_interface(r));
    r.status = TxStatus::RolledBack;
    r.targets.clear();
    ASSERT_TRUE(store.save_interface(r));
    ASSERT_TRUE(store.save_system(sample_system()));
    ASSERT_TRUE(store.save_system(SystemRecord{}));
    EXPECT_EQ(entries(tmp.path()), (std::vector<std::string>{"interfaces", "system.json"}));
    EXPECT_EQ(entries(tmp.path() / "interfaces"), std::vector<std::string>{"p4p1.json"});
    EXPECT_EQ(read_text(tmp.path() / "interfaces" / "p4p1.json"), to_json_text(r));
    EXPECT_EQ(store.load_system(), SystemRecord{});
}

TEST(StateStore, ReportsATruncatedFileByItsPath) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_interface(sample_interface()));
    ASSERT_TRUE(store.save_system(sample_system()));
    for (const fs::path& p :
         {tmp.path() / "interfaces" / "p4p1.json", tmp.path() / "system.json"}) {
        const std::string text = read_text(p);
        write_text(p, text.substr(0, text.size() / 2));
    }
    expect_corrupt(store.load_interface("p4p1"), (tmp.path() / "interfaces" / "p4p1.json").string(),
                   "parse error at line");
    expect_corrupt(store.load_system(), (tmp.path() / "system.json").string(),
                   "parse error at line");
}

TEST(StateStore, ReportsEmptyGarbageAndWrongTypeFilesByTheirPath) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_interface(sample_interface()));
    const fs::path p = tmp.path() / "interfaces" / "p4p1.json";
    const fs::path s = tmp.path() / "system.json";

    write_text(p, "");
    expect_corrupt(store.load_interface("p4p1"), p.string(), "the file is empty");
    write_text(p, "p4p1 mtu 9000\n");
    expect_corrupt(store.load_interface("p4p1"), p.string(), "parse error");
    write_text(s, R"({"version": 1, "entries": {}})");
    expect_corrupt(store.load_system(), s.string(), "entries: expected an array of objects");

    write_text(s, R"({"version": 7, "entries": []})");
    const auto v = store.load_system();
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().context, s.string());
    EXPECT_TRUE(contains(v.error().message, "unsupported state file version 7")) << v.error().str();
}

TEST(StateStore, RejectsARecordFiledUnderAnotherInterfacesName) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_interface(sample_interface("eth1")));
    fs::rename(tmp.path() / "interfaces" / "eth1.json", tmp.path() / "interfaces" / "p4p1.json");
    const auto r = store.load_interface("p4p1");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().context, (tmp.path() / "interfaces" / "p4p1.json").string());
    EXPECT_EQ(r.error().message, "state file holds the record of 'eth1', not of 'p4p1'");
}

// Runs `body` in a child process whose effective capabilities lack the
// ones that bypass file permissions (root keeps uid 0 but obeys the mode
// bits, as an unprivileged process would). Returns what body returned ("" =
// every check held), or why the child could not run it.
std::string without_dac_override(const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe(fds) != 0) return std::string("pipe: ") + std::strerror(errno);
    const pid_t pid = ::fork();
    if (pid < 0) return std::string("fork: ") + std::strerror(errno);
    if (pid == 0) {
        ::close(fds[0]);
        std::string out;
        __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2]{};
        if (::syscall(SYS_capget, &hdr, data) != 0) {
            out = std::string("capget: ") + std::strerror(errno);
        } else {
            for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER})
                data[cap / 32].effective &= ~(1U << (cap % 32));
            if (::syscall(SYS_capset, &hdr, data) != 0)
                out = std::string("capset: ") + std::strerror(errno);
            else
                out = body();
        }
        (void)!::write(fds[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string got;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        got.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the child died: " + got;
    return got;
}

TEST(StateStore, RefusesToWriteIntoAReadOnlyDirectoryAndKeepsTheOldFile) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto old = sample_interface();
    ASSERT_TRUE(store.save_interface(old));
    const fs::path dir = tmp.path() / "interfaces";
    ASSERT_EQ(::chmod(dir.c_str(), 0500), 0) << std::strerror(errno);

    // As root (CI), the save runs without the capabilities that ignore the
    // mode bits; as another user it runs as it is.
    const auto attempt = [&]() -> std::string {
        // AT_EACCESS: the effective capabilities (access() uses the permitted ones for root).
        if (::faccessat(AT_FDCWD, dir.c_str(), W_OK, AT_EACCESS) == 0)
            return "the directory is still writable";
        auto changed = old;
        changed.status = TxStatus::Failed;
        const auto r = store.save_interface(changed);
        if (r) return "the save succeeded";
        std::string why;
        if (r.error().sys_errno != EACCES)
            why += "errno " + std::to_string(r.error().sys_errno) + ", not EACCES; ";
        if (r.error().code != Errc::PermissionDenied) why += "not PermissionDenied; ";
        if (r.error().context != (dir / "p4p1.json").string())
            why += "context " + r.error().context + "; ";
        return why;
    };
    EXPECT_EQ(::geteuid() == 0 ? without_dac_override(attempt) : attempt(), "");
    EXPECT_EQ(entries(dir), std::vector<std::string>{"p4p1.json"});
    EXPECT_EQ(loaded(store, "p4p1"), old);
}

TEST(StateStore, KeepsTheOldFileWhenAWriteFails) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto old = sample_interface();
    ASSERT_TRUE(store.save_interface(old));
    ASSERT_TRUE(store.save_system(sample_system()));

    auto changed = old;
    changed.status = TxStatus::Failed;
    Result<void> r, s;
    {
        const FileSizeLimit limit(64);
        r = store.save_interface(changed);
        s = store.save_system(SystemRecord{{{"tuned.profile", std::string("throughput"), {}}}});
    }
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EFBIG);
    EXPECT_EQ(r.error().code, Errc::Io);
    EXPECT_EQ(r.error().context, (tmp.path() / "interfaces" / "p4p1.json").string());
    EXPECT_TRUE(contains(r.error().message, "cannot write")) << r.error().str();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().sys_errno, EFBIG);
    EXPECT_EQ(s.error().context, (tmp.path() / "system.json").string());

    EXPECT_EQ(entries(tmp.path() / "interfaces"), std::vector<std::string>{"p4p1.json"});
    EXPECT_EQ(entries(tmp.path()), (std::vector<std::string>{"interfaces", "system.json"}));
    EXPECT_EQ(loaded(store, "p4p1"), old);
    EXPECT_EQ(store.load_system(), sample_system());
}

TEST(StateStore, RemovesTheTemporaryFileWhenTheRenameFails) {
    TempDir tmp;
    StateStore store(tmp.path());
    // rename() cannot put a file over a directory.
    fs::create_directories(tmp.path() / "interfaces" / "p4p1.json");
    const auto r = store.save_interface(sample_interface());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EISDIR);
    EXPECT_EQ(r.error().context, (tmp.path() / "interfaces" / "p4p1.json").string());
    EXPECT_EQ(entries(tmp.path() / "interfaces"), std::vector<std::string>{"p4p1.json"});
}

TEST(StateStore, ReportsAnInterfacesPathThatIsNotADirectory) {
    TempDir tmp;
    StateStore store(tmp.path());
    write_text(tmp.path() / "interfaces", "not a directory\n");

    const auto saved = store.save_interface(sample_interface());
    ASSERT_FALSE(saved);
    EXPECT_EQ(saved.error().sys_errno, ENOTDIR);
    EXPECT_EQ(saved.error().context, (tmp.path() / "interfaces" / "p4p1.json").string());
    // Not "no record": the state cannot be read, and rollback must not assume there is none.
    const auto load = store.load_interface("p4p1");
    ASSERT_FALSE(load);
    EXPECT_EQ(load.error().sys_errno, ENOTDIR);
    std::vector<Error> errors;
    EXPECT_TRUE(store.list(&errors).empty());
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].sys_errno, ENOTDIR);
    EXPECT_EQ(read_text(tmp.path() / "interfaces"), "not a directory\n");
}

TEST(StateStore, RefusesToSaveTextThatIsNotUtf8) {
    TempDir tmp;
    StateStore store(tmp.path());
    auto r = sample_interface();
    r.profile = "bad\xff";
    const auto saved = store.save_interface(r);
    ASSERT_FALSE(saved);
    EXPECT_EQ(saved.error().code, Errc::InvalidArgument);
    EXPECT_TRUE(entries(tmp.path()).empty());
}

// Every string of a record is checked as it is written: one that is not
// UTF-8 in any place refuses the record (alone, in a batch, in the journal)
// and writes nothing; UTF-8 beyond ASCII is saved and read back byte for
// byte.
TEST(StateStore, EachStringOfARecordMustBeUtf8AndNonAsciiReadsBackAsWritten) {
    using Bad = std::function<void(InterfaceRecord&)>;
    const std::vector<std::pair<const char*, Bad>> places{
        {"mac", [](InterfaceRecord& r) { r.mac = "3c:fd\xc3"; }},
        {"perm_mac", [](InterfaceRecord& r) { r.perm_mac = "\xff"; }},
        {"bus_info", [](InterfaceRecord& r) { r.bus_info = "0000:\xed\xa0\x80"; }},
        {"profile", [](InterfaceRecord& r) { r.profile = "x520\x80"; }},
        {"transaction", [](InterfaceRecord& r) { r.transaction = "t\xfe"; }},
        {"an original's key", [](InterfaceRecord& r) { r.originals[0].key = "link.\xff"; }},
        {"a target's value", [](InterfaceRecord& r) { r.targets[2].value = std::string("h\xc0"); }},
    };
    for (const auto& [place, spoil] : places) {
        TempDir tmp;
        StateStore store(tmp.path());
        auto bad = sample_interface("p4p2");
        spoil(bad);
        const auto one = store.save_interface(bad);
        ASSERT_FALSE(one) << place;
        EXPECT_EQ(one.error().code, Errc::InvalidArgument) << place;
        const std::vector<InterfaceRecord> batch{sample_interface("p4p1"), bad};
        const auto many = store.save_interfaces(batch);
        ASSERT_FALSE(many) << place;
        EXPECT_EQ(many.error().context, (tmp.path() / "interfaces" / "p4p2.json").string())
            << place;
        EXPECT_FALSE(journal_text_for_saving("t1", batch, tmp.path() / "interfaces")) << place;
        EXPECT_FALSE(store.has_interface("p4p1")) << place;
        EXPECT_FALSE(store.has_interface("p4p2")) << place;
    }
    TempDir tmp;
    StateStore store(tmp.path());
    auto good = sample_interface("p4p1");
    good.profile = "r\xc3\xa9seau-\xe2\x82\xac";
    good.targets[2].value = std::string("\xf0\x9f\x94\x8c");
    ASSERT_TRUE(store.save_interfaces(std::vector<InterfaceRecord>{good}));
    const auto back = store.load_interface("p4p1");
    ASSERT_TRUE(back && *back) << (back ? "no record" : back.error().str());
    EXPECT_EQ((*back)->profile, good.profile);
    EXPECT_EQ((*back)->targets[2].value, good.targets[2].value);
}

// A batch (one file for many records) and the journal refuse the whole
// batch for one record that is not UTF-8, name that record's file, and
// write nothing.
TEST(StateStore, ABatchWithARecordThatIsNotUtf8NamesItsFileAndWritesNothing) {
    TempDir tmp;
    StateStore store(tmp.path());
    auto bad = sample_interface("p4p2");
    bad.mac = "aa:\xff";
    const std::vector<InterfaceRecord> batch{sample_interface("p4p1"), bad,
                                             sample_interface("p4p3")};
    const auto saved = store.save_interfaces(batch);
    ASSERT_FALSE(saved);
    EXPECT_EQ(saved.error().code, Errc::InvalidArgument);
    EXPECT_EQ(saved.error().context, (tmp.path() / "interfaces" / "p4p2.json").string());
    EXPECT_TRUE(contains(saved.error().message, "not valid UTF-8")) << saved.error().str();
    EXPECT_FALSE(store.has_interface("p4p1"));
    EXPECT_FALSE(store.has_interface("p4p3"));

    const auto journal = journal_text_for_saving("t1", batch, tmp.path() / "interfaces");
    ASSERT_FALSE(journal);
    EXPECT_EQ(journal.error().context, (tmp.path() / "interfaces" / "p4p2.json").string());
    const std::vector<InterfaceRecord> good{sample_interface("p4p1"), sample_interface("p4p3")};
    const auto text = journal_text_for_saving("t1", good, tmp.path() / "interfaces");
    ASSERT_TRUE(text) << text.error().str();
    EXPECT_EQ(*text, journal_text("t1", good));
}

TEST(StateStore, RejectsInvalidInterfaceNames) {
    TempDir tmp;
    StateStore store(tmp.path() / "state");
    for (const char* name : {"", ".", "..", "a/b", "../../etc/x", "1234567890123456"}) {
        SCOPED_TRACE(std::string("name ") + quote(name));
        const auto load = store.load_interface(name);
        ASSERT_FALSE(load);
        EXPECT_EQ(load.error().code, Errc::InvalidArgument);
        const auto save = store.save_interface(bare_interface(name));
        ASSERT_FALSE(save);
        EXPECT_EQ(save.error().code, Errc::InvalidArgument);
        EXPECT_TRUE(contains(save.error().message, "invalid interface name")) << save.error().str();
        const auto remove = store.remove_interface(name);
        ASSERT_FALSE(remove);
        EXPECT_EQ(remove.error().code, Errc::InvalidArgument);
        const auto lock = store.lock(name);
        ASSERT_FALSE(lock);
        EXPECT_EQ(lock.error().code, Errc::InvalidArgument);
    }
    EXPECT_TRUE(entries(tmp.path()).empty());
}

TEST(StateStore, RemovesAnInterfaceRecord) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_interface(sample_interface()));
    ASSERT_TRUE(store.remove_interface("p4p1"));
    EXPECT_EQ(loaded(store, "p4p1"), std::nullopt);
    EXPECT_TRUE(store.remove_interface("p4p1")) << "removing what is gone is not an error";
}

TEST(StateStore, ListsEveryRecordAndReportsCorruptFiles) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_interface(sample_interface("p4p2")));
    ASSERT_TRUE(store.save_interface(sample_interface("p4p1")));
    const fs::path dir = tmp.path() / "interfaces";
    write_text(dir / "eth3.json", to_json_text(sample_interface("eth3")).substr(0, 40));
    write_text(dir / "eth4.json", to_json_text(sample_interface("p4p1")));
    write_text(dir / "a:b.json", to_json_text(sample_interface()));
    // A crashed writer's temporary file and an operator's notes are not records.
    write_text(dir / ".p4p1.json.Xy12Zq", "{\"ver");
    write_text(dir / "README", "hands off\n");

    std::vector<Error> errors;
    const auto records = store.list(&errors);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0], sample_interface("p4p1"));
    EXPECT_EQ(records[1], sample_interface("p4p2"));

    ASSERT_EQ(errors.size(), 3u);
    EXPECT_EQ(errors[0].context, (dir / "a:b.json").string());
    EXPECT_EQ(errors[0].message, "not named after an interface");
    EXPECT_EQ(errors[1].context, (dir / "eth3.json").string());
    EXPECT_TRUE(errors[1].message.starts_with("truncated or corrupt state file"))
        << errors[1].str();
    EXPECT_EQ(errors[2].context, (dir / "eth4.json").string());
    EXPECT_TRUE(contains(errors[2].message, "not of 'eth4'")) << errors[2].str();

    EXPECT_EQ(store.list().size(), 2u) << "errors are optional to collect";
}

// ---- names and devices

// Any name the kernel takes is a record, filed under the name's text form
// (util/strings.hpp): bytes that are not UTF-8, a backslash, a UTF-8
// letter, 15 bytes, a leading dot (".x.json" is not a temporary file).
TEST(StateStore, FilesAnyNameTheKernelTakesUnderItsTextForm) {
    TempDir tmp;
    StateStore store(tmp.path());
    const std::vector<std::string> names = {"\\xff\\xfeq", "a\\x5cb", "é0", ".x",
                                            "\\x01" + std::string(14, 'z')};
    for (const auto& name : names) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(store.save_interface(sample_interface(name)));
        EXPECT_TRUE(fs::exists(tmp.path() / "interfaces" / (name + ".json")));
        EXPECT_EQ(loaded(store, name), sample_interface(name));
        EXPECT_TRUE(store.has_interface(name));
    }
    std::vector<Error> errors;
    auto all = store.list(&errors);
    EXPECT_TRUE(errors.empty()) << errors.front().str();
    std::vector<std::string> listed;
    for (const auto& r : all)
        listed.push_back(r.name);
    auto want = names;
    std::ranges::sort(want);
    EXPECT_EQ(listed, want);
    // The bytes themselves are not a name's text: refused, never mangled.
    for (const char* raw : {"\xff\xfeq", "a\\b", "\x01x"}) {
        const auto saved = store.save_interface(sample_interface(raw));
        ASSERT_FALSE(saved) << raw;
        EXPECT_EQ(saved.error().code, Errc::InvalidArgument);
    }
}

DeviceRef device_of(const InterfaceRecord& r, std::string name) {
    return DeviceRef{std::move(name), r.ifindex, r.mac, r.perm_mac};
}

// A device renamed while nobody followed it (nictuned stopped, a --direct
// apply, then `ip link set eth3 name lan0`) still has its record under its
// old name: found by its ifindex and MAC.
TEST(StateStore, FindsTheRecordsADeviceHasUnderEarlierNames) {
    TempDir tmp;
    StateStore store(tmp.path());
    auto eth3 = sample_interface("eth3");
    eth3.updated_at = 200;
    auto older = sample_interface("eth2");
    older.updated_at = 100;
    ASSERT_TRUE(store.save_interface(eth3));
    ASSERT_TRUE(store.save_interface(older));
    ASSERT_TRUE(store.save_interface(sample_interface("lan0")));  // its own, skipped below
    const std::vector<DeviceRef> devices = {device_of(eth3, "lan0")};
    const std::vector<std::string> own = {"lan0"};
    auto found = store.earlier_records(devices, own);
    ASSERT_EQ(found.size(), 1U);
    ASSERT_EQ(found[0].size(), 2U);
    EXPECT_EQ(found[0][0], older) << "oldest first";
    EXPECT_EQ(found[0][1], eth3);
}

TEST(StateStore, TakesNoOtherDevicesRecordForARenamedOne) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto eth3 = sample_interface("eth3");
    ASSERT_TRUE(store.save_interface(eth3));
    // A corrupt record of someone else is not this lookup's to report.
    write_text(tmp.path() / "interfaces" / "eth4.json", "{");
    // Same ifindex (reused), another card; and the same card's MAC on another ifindex.
    const std::vector<DeviceRef> others = {
        DeviceRef{"lan0", eth3.ifindex, "02:00:00:00:00:99", std::nullopt},
        DeviceRef{"lan1", eth3.ifindex + 1, eth3.mac, eth3.perm_mac}};
    const auto found = store.earlier_records(others, {});
    ASSERT_EQ(found.size(), 2U);
    EXPECT_TRUE(found[0].empty());
    EXPECT_TRUE(found[1].empty());
    // A permanent MAC is the card's, whatever its current address.
    const std::vector<DeviceRef> same = {
        DeviceRef{"lan0", eth3.ifindex, "02:00:00:00:00:99", eth3.perm_mac}};
    EXPECT_EQ(store.earlier_records(same, {})[0].size(), 1U);
}

// The lookup reads each record's ifindex from its line and parses only the
// records of the devices asked about (a rollback among 512 records parsed
// all of them); a record written in another shape is still parsed whole.
TEST(StateStore, FindsEarlierRecordsAmongABatchsLinesByTheirIfindex) {
    TempDir tmp;
    StateStore store(tmp.path());
    std::vector<InterfaceRecord> batch;
    for (int i = 0; i < 40; ++i) {
        auto r = sample_interface("veth" + std::to_string(i));
        r.ifindex = 1000 + i * 37;  // 1000 .. 2443, four digits where the odd one has two
        r.mac = "02:00:00:00:00:" + std::to_string(10 + i);  // 10 .. 49
        batch.push_back(std::move(r));
    }
    ASSERT_TRUE(store.save_interfaces(batch));
    // A record whose fields come in another order: no ifindex to read from
    // its line before it is parsed.
    auto odd = sample_interface("eth9");
    odd.ifindex = 12;
    std::string text = to_json_text(odd);
    const std::string head = "{\"version\":1,\"name\":\"eth9\",";
    ASSERT_TRUE(text.starts_with(head)) << text;
    text = "{\"name\":\"eth9\",\"version\":1," + text.substr(head.size());
    write_text(tmp.path() / "interfaces" / "eth9.json", text);

    const std::vector<DeviceRef> devices = {
        device_of(batch[0], "lan0"), device_of(batch[17], "lan1"), device_of(batch[39], "lan2"),
        device_of(odd, "lan3"), DeviceRef{"lan4", 1001, batch[0].mac, std::nullopt}};
    const auto found = store.earlier_records(devices, {});
    ASSERT_EQ(found.size(), devices.size());
    for (std::size_t k = 0; k < 3; ++k) {
        const InterfaceRecord& want = batch[std::array<std::size_t, 3>{0, 17, 39}[k]];
        ASSERT_EQ(found[k].size(), 1U) << want.name;
        EXPECT_EQ(found[k][0], want);
    }
    ASSERT_EQ(found[3].size(), 1U) << "a record of another shape is parsed";
    EXPECT_EQ(found[3][0], odd);
    EXPECT_TRUE(found[4].empty()) << "no record has ifindex 1001";
}

TEST(StateStore, MovesARecordWithItsSystemOwners) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto eth3 = sample_interface("eth3");
    ASSERT_TRUE(store.save_interface(eth3));
    ASSERT_TRUE(store.save_system(
        SystemRecord{{{"sysctl.net.core.rmem_max", uint64_t{212992}, {"eth3", "p4p2"}}}}));
    ASSERT_TRUE(store.rename_interface("eth3", "lan0"));
    auto want = eth3;
    want.name = "lan0";
    EXPECT_EQ(loaded(store, "lan0"), want);
    EXPECT_FALSE(store.has_interface("eth3"));
    EXPECT_EQ(store.load_system()->entries.front().owners,
              (std::vector<std::string>{"lan0", "p4p2"}));
    EXPECT_TRUE(store.rename_interface("eth3", "lan1")) << "nothing to move is not an error";
}

// A rename moves the record and the system record's owners, or nothing.
TEST(StateStore, RenameIsAllOrNothing) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto eth3 = sample_interface("eth3");
    ASSERT_TRUE(store.save_interface(eth3));
    // A system record far larger than the interface record, so that a file
    // size limit between the two fails only its write.
    SystemRecord sys;
    for (int i = 0; i < 60; ++i)
        sys.entries.push_back(
            SystemEntry{"sysctl.net.core.some_long_setting_name_" + std::to_string(i),
                        uint64_t{212992},
                        {"eth3", "p4p2"}});
    ASSERT_TRUE(store.save_system(sys));
    ASSERT_LT(to_json_text(eth3).size() + 100, 4000U);
    ASSERT_GT(to_json_text(sys).size(), 4000U);
    Result<void> moved;
    {
        const FileSizeLimit limit(4000);
        moved = store.rename_interface("eth3", "lan0");
    }
    ASSERT_FALSE(moved);
    EXPECT_EQ(moved.error().sys_errno, EFBIG);
    EXPECT_EQ(loaded(store, "eth3"), eth3);
    EXPECT_FALSE(store.has_interface("lan0"));
    EXPECT_EQ(store.load_system(), sys);
}

// The end of a transaction restamps the journal's lines: the same bytes as
// encoding the record again with its new status and time, whatever its
// strings hold (here the keys' own text, escaped).
TEST(StateRecordJson, ARestampedLineIsTheLineOfTheRestampedRecord) {
    InterfaceRecord r = sample_interface("q\\xffx");
    r.profile = R"(a,"status":"x",)";
    r.status = TxStatus::Applying;
    r.originals.push_back({"sysctl.x", std::string(R"(,"updated_at":5})")});
    std::string line;
    ASSERT_TRUE(append_for_saving(line, r, "/tmp"));
    for (const TxStatus s : {TxStatus::Applied, TxStatus::Failed, TxStatus::RolledBack}) {
        for (const int64_t t : {int64_t{0}, int64_t{-1}, int64_t{1714558501}, INT64_MAX}) {
            InterfaceRecord now = r;
            now.status = s;
            now.updated_at = t;
            std::string want, got = "prefix\n";
            ASSERT_TRUE(append_for_saving(want, now, "/tmp"));
            ASSERT_TRUE(append_restamped(got, line, now)) << tx_status_name(s) << " " << t;
            EXPECT_EQ(got, "prefix\n" + want);
        }
    }
    // Another record's line, or not a whole line, is refused and adds nothing.
    std::string out = "x";
    EXPECT_FALSE(append_restamped(out, line, sample_interface("p4p2")));
    EXPECT_FALSE(append_restamped(out, line.substr(0, line.size() - 1), r));
    EXPECT_FALSE(append_restamped(out, line.substr(0, line.find("\"status\"")) + "}\n", r));
    EXPECT_EQ(out, "x");
}

// Given the journal's lines, a batch is saved from them; lines that are not
// exactly the records' (another count, another name) are not used.
TEST(StateStore, ABatchFromTheJournalsLinesIsTheBatchEncoded) {
    std::vector<InterfaceRecord> recs{sample_interface("p4p1"), sample_interface("p4p2")};
    std::string lines;
    for (auto& r : recs) {
        r.status = TxStatus::Applying;
        ASSERT_TRUE(append_for_saving(lines, r, "/tmp"));
        r.status = TxStatus::Applied;
        r.updated_at += 3;
    }
    std::string other;
    ASSERT_TRUE(append_for_saving(other, sample_interface("p4p9"), "/tmp"));
    const std::string wrong[] = {lines.substr(0, lines.find('\n') + 1), lines + other,
                                 other + lines.substr(lines.find('\n') + 1)};
    TempDir encoded;
    ASSERT_TRUE(StateStore(encoded.path()).save_interfaces(recs));
    const std::string want = read_text(encoded.path() / "interfaces" / "p4p1.json");
    for (const std::string& written : {lines, wrong[0], wrong[1], wrong[2]}) {
        TempDir tmp;
        StateStore store(tmp.path());
        ASSERT_TRUE(store.save_interfaces(recs, written));
        EXPECT_EQ(read_text(tmp.path() / "interfaces" / "p4p2.json"), want);
        for (const auto& r : recs)
            EXPECT_EQ(loaded(store, r.name), r) << r.name;
    }
}

// A batch is one file, one record per line, under every interface's name:
// one inode to write and sync, which goes with its last name.
TEST(StateStore, ABatchIsOneFileLinkedUnderEachName) {
    TempDir tmp;
    StateStore store(tmp.path());
    std::vector<InterfaceRecord> recs{sample_interface("p4p1"), sample_interface("p4p2"),
                                      sample_interface("q\\xffx")};
    recs[1].ifindex = 8;
    ASSERT_TRUE(store.save_interfaces(recs));
    const fs::path dir = tmp.path() / "interfaces";
    struct stat a {
    }, b{}, c{};
    ASSERT_EQ(::stat((dir / "p4p1.json").c_str(), &a), 0);
    ASSERT_EQ(::stat((dir / "p4p2.json").c_str(), &b), 0);
    ASSERT_EQ(::stat((dir / "q\\xffx.json").c_str(), &c), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
    EXPECT_EQ(a.st_ino, c.st_ino);
    EXPECT_EQ(a.st_nlink, 3U);
    const std::string text = read_text(dir / "p4p1.json");
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
    for (const auto& r : recs)
        EXPECT_EQ(loaded(store, r.name), r) << r.name;

    // One of them saved alone gets a file of its own; the others keep theirs.
    recs[0].status = TxStatus::Failed;
    ASSERT_TRUE(store.save_interface(recs[0]));
    EXPECT_EQ(read_text(dir / "p4p1.json"), to_json_text(recs[0]));
    for (const auto& r : recs)
        EXPECT_EQ(loaded(store, r.name), r) << r.name;
    ASSERT_EQ(::stat((dir / "p4p2.json").c_str(), &b), 0);
    EXPECT_EQ(b.st_nlink, 2U);

    // Read together (one read of the shared file) and listed.
    const std::vector<std::string> names{"q\\xffx", "p4p2", "p4p1", "p9p9"};
    auto all = store.load_interfaces(names);
    ASSERT_TRUE(all) << all.error().str();
    EXPECT_EQ((*all)[0], recs[2]);
    EXPECT_EQ((*all)[1], recs[1]);
    EXPECT_EQ((*all)[2], recs[0]);
    EXPECT_FALSE((*all)[3]);
    EXPECT_EQ(store.list().size(), 3U);
    for (const auto& r : store.remove_interfaces(names))
        EXPECT_TRUE(r);
    EXPECT_TRUE(entries(dir).empty());
}

// A record's line is parsed alone: another line's damage is that one's
// error, named with its line; a file without the record is an error too.
TEST(StateStore, AFileOfSeveralRecordsIsReadByTheLineOfTheName) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_interfaces(
        std::vector<InterfaceRecord>{sample_interface("p4p1"), sample_interface("p4p2")}));
    const fs::path dir = tmp.path() / "interfaces";
    std::string text = read_text(dir / "p4p1.json");
    const auto second = text.find("\n{") + 1;
    const std::string damaged = text.substr(0, second) +
                                text.substr(second, text.find("\"mac\"", second) - second) +
                                "\"mac\": }\n";
    fs::remove(dir / "p4p2.json");
    fs::remove(dir / "p4p1.json");
    std::ofstream(dir / "p4p1.json") << damaged;
    fs::create_hard_link(dir / "p4p1.json", dir / "p4p2.json");
    EXPECT_EQ(loaded(store, "p4p1"), sample_interface("p4p1"));
    auto bad = store.load_interface("p4p2");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().context.rfind((dir / "p4p2.json").string() + ":2", 0), 0U)
        << bad.error().str();
    fs::create_hard_link(dir / "p4p1.json", dir / "eth0.json");
    auto none = store.load_interface("eth0");
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().str().find("no record of 'eth0'"), std::string::npos)
        << none.error().str();
}

TEST(StateStore, SavesManyRecordsInSyncedBatchesAndLeavesNoTemporaryFiles) {
    TempDir tmp;
    StateStore store(tmp.path());
    std::vector<InterfaceRecord> recs;
    for (std::size_t i = 0; i < 519; ++i)
        recs.push_back(sample_interface("p" + std::to_string(i)));
    ASSERT_TRUE(store.save_interfaces(recs));
    EXPECT_EQ(entries(tmp.path() / "interfaces").size(), recs.size());
    for (const auto& r : recs)
        EXPECT_EQ(loaded(store, r.name), r);
    // Replaced as a batch again: each file is the new one.
    for (auto& r : recs)
        r.status = TxStatus::Failed;
    ASSERT_TRUE(store.save_interfaces(recs));
    for (const auto& r : recs)
        EXPECT_EQ(loaded(store, r.name), r);
    for (const auto& f : entries(tmp.path() / "interfaces"))
        EXPECT_FALSE(f.starts_with('.')) << f;
    for (const auto& f : entries(tmp.path() / "interfaces"))
        EXPECT_EQ(mode_of(tmp.path() / "interfaces" / f), 0600U) << f;
}

TEST(StateStore, ABatchThatFailsKeepsTheOldFilesAndNoTemporaryOnes) {
    TempDir tmp;
    StateStore store(tmp.path());
    std::vector<InterfaceRecord> recs{sample_interface("p4p1"), sample_interface("p4p2")};
    ASSERT_TRUE(store.save_interfaces(recs));
    auto changed = recs;
    for (auto& r : changed)
        r.status = TxStatus::Failed;
    Result<void> r;
    {
        const FileSizeLimit limit(64);
        r = store.save_interfaces(changed);
    }
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().sys_errno, EFBIG);
    EXPECT_EQ(r.error().context, (tmp.path() / "interfaces" / "p4p1.json").string());
    EXPECT_EQ(entries(tmp.path() / "interfaces"),
              (std::vector<std::string>{"p4p1.json", "p4p2.json"}));
    EXPECT_EQ(loaded(store, "p4p1"), recs[0]);
    EXPECT_EQ(loaded(store, "p4p2"), recs[1]);
}

TEST(StateStore, RemovesSeveralRecordsWithAResultEach) {
    TempDir tmp;
    StateStore store(tmp.path());
    ASSERT_TRUE(store.save_interfaces(
        std::vector<InterfaceRecord>{sample_interface("p4p1"), sample_interface("p4p2")}));
    const std::vector<std::string> names{"p4p1", "bad/name", "p4p2", "never-saved"};
    const auto r = store.remove_interfaces(names);
    ASSERT_EQ(r.size(), names.size());
    EXPECT_TRUE(r[0]);
    ASSERT_FALSE(r[1]);
    EXPECT_EQ(r[1].error().code, Errc::InvalidArgument);
    EXPECT_TRUE(r[2]);
    EXPECT_TRUE(r[3]) << "no record is what the caller wanted";
    EXPECT_TRUE(entries(tmp.path() / "interfaces").empty());
    // No directory at all: nothing to remove either.
    TempDir empty;
    StateStore none(empty.path());
    EXPECT_TRUE(none.remove_interface("p4p1"));
}

// ---- locks

// ---- the transaction journal

TEST(StateJournal, HoldsOneRecordPerLineAndReadsThemBack) {
    const std::vector<InterfaceRecord> recs{sample_interface("p4p1"), sample_interface("p4p2")};
    const std::string text = journal_text("tx1", recs);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
    auto back = journal_records(text, "j");
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(*back, recs);
}

TEST(StateJournal, RejectsEveryTruncation) {
    const std::vector<InterfaceRecord> recs{sample_interface("p4p1"), sample_interface("p4p2")};
    const std::string text = journal_text("tx1", recs);
    for (std::size_t n = 0; n < text.size(); ++n)
        EXPECT_FALSE(journal_records(std::string_view(text).substr(0, n), "j")) << n;
}

TEST(StateJournal, IsOneFileWhileTheTransactionRunsAndGoneAfter) {
    TempDir tmp;
    StateStore store(tmp.path());
    const std::vector<InterfaceRecord> recs{sample_interface("p4p1"), sample_interface("p4p2")};
    auto j = store.begin_journal("tx1", recs);
    ASSERT_TRUE(j) << j.error().str();
    EXPECT_EQ(j->path(), tmp.path() / "journal" / "tx1.json");
    EXPECT_EQ(entries(tmp.path() / "journal"), std::vector<std::string>{"tx1.json"});
    EXPECT_EQ(mode_of(tmp.path() / "journal" / "tx1.json"), 0600U);
    EXPECT_FALSE(fs::exists(tmp.path() / "interfaces")) << "interface files come at the end";
    j->finish();
    EXPECT_TRUE(entries(tmp.path() / "journal").empty());
}

// p4p1's record as transaction tx1 saves it in its journal.
InterfaceRecord applying_in_tx1() {
    auto rec = sample_interface("p4p1");
    rec.status = TxStatus::Applying;
    rec.transaction = "tx1";
    return rec;
}

TEST(StateJournal, ReplayWritesTheRecordsOfATransactionThatDied) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto rec = applying_in_tx1();
    {
        auto j = store.begin_journal("tx1", std::vector<InterfaceRecord>{rec});
        ASSERT_TRUE(j) << j.error().str();
    }  // dropped without finish(): the process died
    ASSERT_EQ(entries(tmp.path() / "journal").size(), 1U);
    auto ok = store.replay_journals();
    ASSERT_TRUE(ok) << ok.error().str();
    EXPECT_EQ(loaded(store, "p4p1"), rec);
    EXPECT_TRUE(entries(tmp.path() / "journal").empty());
}

// The process died while it wrote the records of a transaction that had
// made its changes: the records it wrote hold the outcome; the others come
// from the journal (applying: recovery restores them), whether the file was
// missing or held an earlier transaction's record.
TEST(StateJournal, ReplayCompletesATransactionThatDiedWhileWritingItsRecords) {
    TempDir tmp;
    StateStore store(tmp.path());
    auto older = sample_interface("p4p3");
    older.transaction = "tx0";
    ASSERT_TRUE(store.save_interface(older));
    std::vector<InterfaceRecord> journaled;
    for (const char* name : {"p4p1", "p4p2", "p4p3"}) {
        auto r = applying_in_tx1();
        r.name = name;
        journaled.push_back(r);
    }
    auto written = journaled[0];
    written.status = TxStatus::Applied;
    {
        auto j = store.begin_journal("tx1", journaled);
        ASSERT_TRUE(j) << j.error().str();
        ASSERT_TRUE(store.save_interface(written));
    }  // died before p4p2's and p4p3's
    auto ok = store.replay_journals();
    ASSERT_TRUE(ok) << ok.error().str();
    EXPECT_EQ(loaded(store, "p4p1"), written);
    EXPECT_EQ(loaded(store, "p4p2"), journaled[1]);
    EXPECT_EQ(loaded(store, "p4p3"), journaled[2]);
    EXPECT_TRUE(entries(tmp.path() / "journal").empty());
}

TEST(StateJournal, ReplayKeepsTheOutcomeOfATransactionThatEnded) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto rec = applying_in_tx1();
    auto done = rec;
    done.status = TxStatus::Applied;
    {
        auto j = store.begin_journal("tx1", std::vector<InterfaceRecord>{rec});
        ASSERT_TRUE(j);
        ASSERT_TRUE(store.save_interface(done));
    }  // the journal's removal was lost (a system crash)
    ASSERT_TRUE(store.replay_journals());
    EXPECT_EQ(loaded(store, "p4p1"), done);
    EXPECT_TRUE(entries(tmp.path() / "journal").empty());
}

TEST(StateJournal, ReplayLeavesTheJournalOfARunningTransaction) {
    TempDir tmp;
    StateStore store(tmp.path());
    auto j = store.begin_journal("tx1", std::vector<InterfaceRecord>{sample_interface("p4p1")});
    ASSERT_TRUE(j);
    // Another open file description, as another process would have.
    StateStore other(tmp.path());
    ASSERT_TRUE(other.replay_journals(std::vector<std::string>{"p9p9"}));
    EXPECT_EQ(loaded(other, "p4p1"), std::nullopt);
    EXPECT_EQ(entries(tmp.path() / "journal"), std::vector<std::string>{"tx1.json"});
}

TEST(StateJournal, ReplayRemovesAJournalWhoseWriterDiedBeforeItWasComplete) {
    TempDir tmp;
    fs::create_directories(tmp.path() / "journal");
    write_text(tmp.path() / "journal" / ".tx1.Ab12Cd", "{\"version\":1,\"transac");
    StateStore store(tmp.path());
    ASSERT_TRUE(store.replay_journals());
    EXPECT_TRUE(entries(tmp.path() / "journal").empty());
    EXPECT_FALSE(fs::exists(tmp.path() / "interfaces"));
}

TEST(StateJournal, ReplayReportsACorruptJournalByItsPathAndKeepsIt) {
    TempDir tmp;
    fs::create_directories(tmp.path() / "journal");
    const fs::path bad = tmp.path() / "journal" / "tx1.json";
    write_text(bad, "{\"version\":1,\"transaction\":\"tx1\",\"records\":2}\n{\"x\n");
    StateStore store(tmp.path());
    auto r = store.replay_journals();
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().context, bad.string())) << r.error().str();
    EXPECT_TRUE(fs::exists(bad)) << "an operator may need it";
}

TEST(StateLock, SecondLockOnAnInterfaceIsBusyUntilTheFirstIsReleased) {
    TempDir tmp;
    StateStore store(tmp.path());
    {
        auto first = store.lock("p4p1");
        ASSERT_TRUE(first) << first.error().str();
        const auto second = store.lock("p4p1");
        ASSERT_FALSE(second);
        EXPECT_EQ(second.error().code, Errc::Busy);
        EXPECT_EQ(second.error().message, "another transaction is running on p4p1");
        EXPECT_EQ(second.error().context, (tmp.path() / "locks" / "p4p1.lock").string());
    }
    const auto again = store.lock("p4p1");
    EXPECT_TRUE(again) << again.error().str();
}

TEST(StateLock, LocksOnDifferentInterfacesAreIndependent) {
    TempDir tmp;
    StateStore store(tmp.path());
    const auto a = store.lock("p4p1");
    const auto b = store.lock("p4p2");
    EXPECT_TRUE(a) << a.error().str();
    EXPECT_TRUE(b) << b.error().str();
}

TEST(StateLock, MoveAssignmentReleasesTheLockItReplaces) {
    TempDir tmp;
    StateStore store(tmp.path());
    auto a = store.lock("p4p1");
    auto b = store.lock("p4p2");
    ASSERT_TRUE(a);
    ASSERT_TRUE(b);
    *a = std::move(*b);
    EXPECT_TRUE(store.lock("p4p1")) << "the replaced lock must be released";
    EXPECT_FALSE(store.lock("p4p2")) << "the moved lock must still be held";
    StateLock moved_again(std::move(*a));
    EXPECT_FALSE(store.lock("p4p2"));
    moved_again = StateLock();
    EXPECT_TRUE(store.lock("p4p2"));
}

}  // namespace
}  // namespace nictune
