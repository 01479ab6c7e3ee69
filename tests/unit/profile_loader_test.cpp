#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "profile/loader.hpp"
#include "profile/toml.hpp"

namespace nictune::profile {
namespace {
namespace fs = std::filesystem;

// The error a document produces, as "file:line:column: message".
std::string error_of(const std::string& text) {
    auto r = parse(text, "p.toml");
    if (r) return "(no error)";
    EXPECT_EQ(r.error().code, Errc::InvalidProfile);
    return r.error().str();
}

TEST(ProfileParser, ReadsEverySection) {
    auto p = parse(R"(
[profile]
description = "test"
priority = 5
[match]
drivers = ["ixgbe"]
pci_ids = "8086:10FB"
interfaces = ["p4p*"]
[driver]
min_version = "5.3.6"
bad_versions = ["4.0.1-k"]
[link]
mtu = 9014
[coalesce]
adaptive_rx = true
rx_usecs = 50
[rings]
rx = "max"
tx = 1024
[channels]
combined = 4
[features]
gro = false
rx-lro = true
[pause]
rx = false
[sysctl]
"net.core.rmem_max" = 16777216
net.ipv4.tcp_rmem = [4096, 87380, 16777216]
net.ipv4.tcp_timestamps = "0"
[tuned]
profile = "latency-performance"
)",
                   "p.toml");
    ASSERT_TRUE(p) << p.error().str();
    EXPECT_EQ(p->description, "test");
    EXPECT_EQ(p->priority, 5U);
    EXPECT_EQ(p->match.drivers, std::vector<std::string>{"ixgbe"});
    EXPECT_EQ(p->match.pci_ids, std::vector<std::string>{"8086:10fb"});
    EXPECT_EQ(p->driver.min_version, "5.3.6");
    ASSERT_TRUE(p->setting(Key::LinkMtu));
    EXPECT_EQ(p->setting(Key::LinkMtu)->value, 9014U);
    EXPECT_EQ(p->setting(Key::LinkMtu)->loc.str(), "p.toml:13:7");
    EXPECT_EQ(p->setting(Key::CoalAdaptiveRx)->value, 1U);
    EXPECT_TRUE(p->setting(Key::RingsRx)->is_max);
    EXPECT_EQ(p->setting(Key::RingsTx)->value, 1024U);
    EXPECT_EQ(p->setting(Key::ChanCombined)->value, 4U);
    EXPECT_EQ(p->setting(Key::PauseRx)->value, 0U);
    ASSERT_EQ(p->features.size(), 2U);
    EXPECT_EQ(p->features[0].name, "gro");
    EXPECT_FALSE(p->features[0].on);
    ASSERT_EQ(p->sysctl.size(), 3U);
    EXPECT_EQ(p->sysctl[0].name, "net.core.rmem_max");
    EXPECT_EQ(p->sysctl[0].value, "16777216");
    EXPECT_EQ(p->sysctl[1].name, "net.ipv4.tcp_rmem");
    EXPECT_EQ(p->sysctl[1].value, "4096 87380 16777216");
    EXPECT_EQ(p->tuned_profile, "latency-performance");
}

TEST(ProfileParser, SyntaxErrorsNameLineAndColumn) {
    EXPECT_EQ(error_of("[link]\nmtu = = 9000\n").substr(0, 11), "p.toml:2:7:");
}

TEST(ProfileParser, RejectsUnknownSectionWithSuggestion) {
    EXPECT_EQ(error_of("[coalescing]\nrx_usecs = 1\n"),
              "p.toml:1:2: unknown section [coalescing]; did you mean 'coalesce'?");
}

TEST(ProfileParser, RejectsUnknownKeyWithSuggestion) {
    EXPECT_EQ(error_of("[coalesce]\nrx_usec = 1\n"),
              "p.toml:2:1: unknown key 'rx_usec' in [coalesce]; did you mean 'rx_usecs'?");
}

TEST(ProfileParser, RejectsReadOnlyKeys) {
    EXPECT_EQ(
        error_of("[rings]\nrx_max = 4096\n"),
        "p.toml:2:1: rings.rx_max is read-only: the device reports it, a profile cannot set it");
}

TEST(ProfileParser, RejectsWrongTypes) {
    EXPECT_EQ(error_of("[link]\nmtu = \"9000\"\n"),
              "p.toml:2:7: link.mtu: expected a number, got the string '9000'");
    EXPECT_EQ(error_of("[coalesce]\nadaptive_rx = 1\n"),
              "p.toml:2:15: coalesce.adaptive_rx: expected true or false, got an integer");
    EXPECT_EQ(error_of("[coalesce]\nrx_usecs = 1.5\n"),
              "p.toml:2:12: coalesce.rx_usecs: expected a number, got a float");
    EXPECT_EQ(error_of("link = 5\n"),
              "p.toml:1:1: 'link' must be a section ([link]), not an integer");
}

TEST(ProfileParser, RejectsNegativeAndHugeNumbers) {
    EXPECT_EQ(error_of("[coalesce]\nrx_usecs = -5\n"),
              "p.toml:2:12: coalesce.rx_usecs: -5 is out of range 0..4294967295 us");
    EXPECT_EQ(error_of("[link]\nmtu = 70000\n"),
              "p.toml:2:7: link.mtu: 70000 is out of range 68..65535 bytes");
    EXPECT_EQ(error_of("[rings]\nrx = 9999999999999\n"),
              "p.toml:2:6: rings.rx: 9999999999999 is out of range 0..4294967295 descriptors");
}

TEST(ProfileParser, AcceptsMaxOnlyWhereTheDeviceHasAMaximum) {
    EXPECT_EQ(error_of("[coalesce]\nrx_usecs = \"max\"\n"),
              "p.toml:2:12: coalesce.rx_usecs: expected a number, got the string 'max'");
    EXPECT_EQ(
        error_of("[channels]\ncombined = \"most\"\n"),
        "p.toml:2:12: channels.combined: expected a number or \"max\", got the string 'most'");
}

TEST(ProfileParser, RejectsUnknownFeatureNames) {
    EXPECT_EQ(error_of("[features]\nrx-grow = true\n"),
              "p.toml:2:1: unknown feature 'rx-grow'; did you mean 'rx-gro'?");
}

TEST(ProfileParser, AcceptsFeatureNamesTheRunningKernelKnows) {
    FeatureNames runtime = {"rx-future-offload"};
    ParseOptions opts;
    opts.runtime_features = &runtime;
    EXPECT_TRUE(parse("[features]\nrx-future-offload = true\n", "p.toml", opts));
    EXPECT_FALSE(parse("[features]\nrx-future-offload = true\n", "p.toml"));
}

TEST(ProfileParser, RejectsSysctlsOutsideTheAllowlist) {
    EXPECT_EQ(error_of("[sysctl]\n\"kernel.core_pattern\" = \"|/bin/sh\"\n"),
              "p.toml:2:1: sysctl 'kernel.core_pattern' is not on nictune's allowlist (net.core.*, "
              "net.ipv4.tcp_*, net.ipv4.udp_*, ...)");
}

// A floor ({ at_least = ... }), written with a quoted key or TOML's own
// dotted keys: integers only, no other key, on the allowlist.
TEST(ProfileParser, ReadsSysctlFloorsAndRejectsWhatIsNoFloor) {
    auto p = parse(
        "[sysctl]\n\"net.core.rmem_max\" = { at_least = 16777216 }\n"
        "net.ipv4.tcp_rmem.at_least = [4096, 87380, 16777216]\n\"net.core.busy_poll\" = 50\n",
        "p.toml");
    ASSERT_TRUE(p) << p.error().str();
    ASSERT_EQ(p->sysctl.size(), 3U);
    // Sorted by name.
    EXPECT_EQ(p->sysctl[0].name, "net.core.busy_poll");
    EXPECT_FALSE(p->sysctl[0].at_least);
    EXPECT_EQ(p->sysctl[1].name, "net.core.rmem_max");
    EXPECT_TRUE(p->sysctl[1].at_least);
    EXPECT_EQ(p->sysctl[1].value, "16777216");
    EXPECT_EQ(p->sysctl[2].name, "net.ipv4.tcp_rmem");
    EXPECT_TRUE(p->sysctl[2].at_least);
    EXPECT_EQ(p->sysctl[2].value, "4096 87380 16777216");

    EXPECT_EQ(error_of("[sysctl]\n\"net.core.rmem_max\" = { at_least = 1, most = 2 }\n"),
              "p.toml:2:39: sysctl.net.core.rmem_max: a value table takes only at_least, got "
              "'most'");
    EXPECT_EQ(error_of("[sysctl]\n\"net.core.rmem_max\" = { at_least = \"16M\" }\n"),
              "p.toml:2:36: sysctl.net.core.rmem_max.at_least: expected an integer or an array of "
              "integers, got a string");
    EXPECT_EQ(error_of("[sysctl]\n\"net.core.rmem_max\" = { at_least = -1 }\n"),
              "p.toml:2:36: sysctl.net.core.rmem_max.at_least: a floor is not negative, got -1");
    EXPECT_EQ(
        error_of("[sysctl]\n\"net.ipv4.tcp_rmem\" = { at_least = [4096, \"x\"] }\n"),
        "p.toml:2:43: sysctl.net.ipv4.tcp_rmem.at_least: arrays may hold only integers, got a "
        "string");
    EXPECT_EQ(error_of("[sysctl]\n\"kernel.pid_max\" = { at_least = 1 }\n"),
              "p.toml:2:1: sysctl 'kernel.pid_max' is not on nictune's allowlist (net.core.*, "
              "net.ipv4.tcp_*, net.ipv4.udp_*, ...)");
}

TEST(ProfileParser, RejectsMalformedMatchValues) {
    EXPECT_EQ(error_of("[match]\npci_ids = [\"8086-10fb\"]\n"),
              "p.toml:2:11: match.pci_ids: '8086-10fb' is not a PCI id of the form \"8086:10fb\"");
    EXPECT_EQ(error_of("[match]\ndrivers = [1]\n"),
              "p.toml:2:12: match.drivers: expected strings in the array, got an integer");
    // Interface globs: the element that no name can match is named.
    EXPECT_EQ(error_of("[match]\ninterfaces = [\"p4p1\", \"a/b\"]\n"),
              "p.toml:2:23: match.interfaces: 'a/b' is not an interface name or glob (1 to 127 "
              "bytes, no '/' or whitespace)");
    EXPECT_TRUE(error_of("[match]\ninterfaces = \"p\\\\x4g\"\n")
                    .starts_with("p.toml:2:14: match.interfaces: "))
        << error_of("[match]\ninterfaces = \"p\\\\x4g\"\n");
    EXPECT_EQ(error_of("[match]\ninterfaces = [\"p4p*\", \"\\\\xffq\"]\n[link]\nmtu = 9000\n"),
              "(no error)");
}

// toml++ 3.3.0 ran into undefined behaviour on these (profile/toml.hpp):
// each is a clean error at its line and column.
TEST(ProfileParser, NonAsciiOutsideStringsIsAnErrorAtItsPlace) {
    EXPECT_TRUE(error_of("[link]\nmtu = 9000\xc2\xa7\n").starts_with("p.toml:2:"))
        << error_of("[link]\nmtu = 9000\xc2\xa7\n");
    EXPECT_TRUE(error_of("[link]\nmtu\xef\xbb\x9f = 9000\n").starts_with("p.toml:2:"));
    EXPECT_TRUE(error_of("[link]\nmtu = 9000\xe3\x80\x81\n").starts_with("p.toml:2:"));
    // The whitespace toml++ names in its errors, and what is not whitespace.
    using toml::impl::is_non_ascii_horizontal_whitespace;
    for (char32_t c : {U'\u00A0', U'\u1680', U'\u2000', U'\u200B', U'\u202F', U'\u3000', U'\uFEFF'})
        EXPECT_TRUE(is_non_ascii_horizontal_whitespace(c)) << static_cast<unsigned>(c);
    for (char32_t c : {U'\u00A1', U'\u00A7', U'\u2010', U'\u3001', U'\uFCFF', U'\uFEDF', U'\uFF00'})
        EXPECT_FALSE(is_non_ascii_horizontal_whitespace(c)) << static_cast<unsigned>(c);
}

TEST(ProfileParser, RejectsNulBytesAndGarbage) {
    std::string garbage("[link]\nmtu = 1500\n\0\x01\x02", 21);
    EXPECT_EQ(error_of(garbage), "p.toml:3:1: file contains a NUL byte: not a text profile");
    EXPECT_NE(error_of("\xff\xfe\x80garbage"), "(no error)");
}

// The sections with a table of keys (issue 16 §5): the same texts as when
// each branched on key strings, and every key of the table documented.
TEST(ProfileParser, KeyedSectionsNameTheKeyAndThePlace) {
    EXPECT_EQ(error_of("[profile]\npriority = 2000\n"),
              "p.toml:2:12: profile.priority: 2000 is out of range 0..1000");
    EXPECT_EQ(error_of("[profile]\ndescriptio = \"x\"\n"),
              "p.toml:2:1: unknown key 'descriptio' in [profile]; did you mean 'description'?");
    EXPECT_EQ(error_of("[tuned]\nprofile = 5\n"),
              "p.toml:2:11: tuned.profile: expected a string, got an integer");
    EXPECT_EQ(error_of("[driver]\nbad_versions = [1]\n"),
              "p.toml:2:17: driver.bad_versions: expected strings in the array, got an integer");
    EXPECT_EQ(error_of("[xps]\ncpus = \"0-1\"\npolicy = \"off\"\n"),
              "p.toml:3:1: xps: give cpus or policy, not both");
    EXPECT_EQ(error_of("[irq]\ncpus = \"0\"\npolicy = \"all\"\n"),
              "p.toml:3:1: irq: give policy or cpus, not both");
    EXPECT_EQ(error_of("[rss]\nqueue = 4\n"),
              "p.toml:2:1: unknown key 'queue' in [rss]; did you mean 'queues'?");
    EXPECT_EQ(error_of("[rss]\nhash = 1\n"),
              "p.toml:2:8: rss.hash: expected a table ([rss.hash] tcp4 = \"sdfn\"), got an "
              "integer");
}

TEST(ProfileParser, EveryKeyOfASectionTableIsASchemaKeyAndTheOtherWayRound) {
    std::size_t keyed = 0;
    for (const auto& m : meta_keys()) {
        if (m.name.starts_with('<')) continue;  // open sections: names, not keys
        const auto keys = section_keys(m.section);
        // "hash.<flow>" is the key "hash", a table of flows.
        const auto name = m.name.substr(0, m.name.find('.'));
        EXPECT_NE(std::ranges::find(keys, name), keys.end())
            << section_info(m.section).name << "." << m.name << " has no parser";
        ++keyed;
    }
    std::size_t parsers = 0;
    for (const auto& sec : sections()) {
        for (auto k : section_keys(sec.id)) {
            ++parsers;
            EXPECT_TRUE(find_meta_key(sec.id, k) ||
                        find_meta_key(sec.id, std::string(k) + ".<flow>"))
                << sec.name << "." << k << " is parsed but not in the schema";
        }
    }
    EXPECT_EQ(keyed, parsers);
    EXPECT_TRUE(section_keys(Section::Link).empty()) << "device keys are the schema's";
}

// What an error is about is a field as well (the JSON error's "setting"):
// the key whose value is wrong, none for a key that does not exist.
TEST(ProfileParser, AnErrorAboutAValueNamesItsSetting) {
    auto setting_of = [](const std::string& text) {
        auto r = parse(text, "p.toml");
        return r ? std::string("(no error)") : r.error().setting;
    };
    EXPECT_EQ(setting_of("[link]\nmtu = 70000\n"), "link.mtu");
    EXPECT_EQ(setting_of("[rings]\nrx_max = 4096\n"), "rings.rx_max");
    EXPECT_EQ(setting_of("[features]\ngro = 1\n"), "features.gro");
    EXPECT_EQ(setting_of("[private_flags]\nlegacy-rx = \"y\"\n"), "private_flags.legacy-rx");
    EXPECT_EQ(setting_of("[sysctl]\n\"net.core.somaxconn\" = [1, \"a\"]\n"),
              "sysctl.net.core.somaxconn");
    EXPECT_EQ(setting_of("[irq]\npolicy = \"near\"\n"), "irq.policy");
    EXPECT_EQ(setting_of("[profile]\npriority = 2000\n"), "profile.priority");
    EXPECT_EQ(setting_of("[link]\nmtuu = 9000\n"), "");
    EXPECT_EQ(setting_of("[features]\nturbo = true\n"), "");
    EXPECT_EQ(setting_of("[rss]\nqueue = 4\n"), "");
    auto r = parse("[link]\nmtu = 70000\n", "p.toml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().interface, "");
    EXPECT_EQ(r.error().context, "p.toml:2:7") << "the position stays the context";
}

TEST(ProfileParser, RejectsAProfileThatSetsNothing) {
    EXPECT_EQ(
        error_of(""),
        "p.toml:1:1: the profile sets nothing (no settings, includes or driver requirements)");
    EXPECT_EQ(
        error_of("[profile]\ndescription = \"x\"\n"),
        "p.toml:1:1: the profile sets nothing (no settings, includes or driver requirements)");
}

TEST(ProfileParser, SurvivesDeepNesting) {
    std::string deep = "[sysctl]\nnet.";
    for (int i = 0; i < 200; ++i)
        deep += "a.";
    deep += "b = 1\n";
    EXPECT_NE(error_of(deep), "(no error)");
    std::string arrays = "[link]\nmtu = ";
    for (int i = 0; i < 5000; ++i)
        arrays += "[";
    EXPECT_NE(error_of(arrays), "(no error)");
}

TEST(ProfileName, AcceptsPlainNamesOnly) {
    EXPECT_TRUE(validate_name("x520-lowlatency"));
    EXPECT_TRUE(validate_name("jumbo_9014.v2"));
    EXPECT_FALSE(validate_name(""));
    EXPECT_FALSE(validate_name("../etc/passwd"));
    EXPECT_FALSE(validate_name("a/b"));
    EXPECT_FALSE(validate_name(".hidden"));
    EXPECT_FALSE(validate_name("-rf"));
    EXPECT_FALSE(validate_name(std::string("a\0b", 3)));
    EXPECT_FALSE(validate_name(std::string(300, 'a')));
    EXPECT_EQ(validate_name("a/b").error().code, Errc::InvalidArgument);
}

class ProfileStoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-store-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        fs::create_directories(root_ / "admin");
        fs::create_directories(root_ / "shipped");
        fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read |
                                   fs::perms::group_exec | fs::perms::others_read |
                                   fs::perms::others_exec);
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const std::string& rel, const std::string& text) {
        std::ofstream(root_ / rel) << text;
        fs::permissions(root_ / rel, fs::perms::owner_read | fs::perms::owner_write |
                                         fs::perms::group_read | fs::perms::others_read);
    }
    Store store(bool root_owned = false) {
        StoreOptions o;
        o.search_path = {root_ / "admin", root_ / "shipped"};
        o.require_root_owned = root_owned;
        return Store(o);
    }
    fs::path root_;
};

TEST_F(ProfileStoreTest, AdminProfilesShadowShippedOnes) {
    write("shipped/x.toml", "[link]\nmtu = 1500\n");
    write("admin/x.toml", "[link]\nmtu = 9000\n");
    auto p = store().load("x");
    ASSERT_TRUE(p) << p.error().str();
    EXPECT_EQ(p->setting(Key::LinkMtu)->value, 9000U);
    auto list = store().list();
    ASSERT_EQ(list.size(), 1U);
    EXPECT_EQ(list[0].path, root_ / "admin/x.toml");
    ASSERT_EQ(list[0].shadows.size(), 1U);
    EXPECT_EQ(list[0].shadows[0], root_ / "shipped/x.toml");
}

TEST_F(ProfileStoreTest, IncludesAreMergedAndOverridden) {
    write("shipped/base.toml",
          "[link]\nmtu = 9014\n[coalesce]\nrx_usecs = 10\n[features]\ngro = true\n");
    write("shipped/child.toml",
          "[profile]\ninclude = \"base\"\n[coalesce]\nrx_usecs = 1\n[features]\ngro = false\n");
    auto p = store().load("child");
    ASSERT_TRUE(p) << p.error().str();
    EXPECT_EQ(p->setting(Key::LinkMtu)->value, 9014U);
    EXPECT_EQ(p->setting(Key::CoalRxUsecs)->value, 1U);
    ASSERT_EQ(p->features.size(), 1U);
    EXPECT_FALSE(p->features[0].on);
    EXPECT_EQ(p->name, "child");
}

TEST_F(ProfileStoreTest, RejectsIncludeCycles) {
    write("shipped/a.toml", "[profile]\ninclude = \"b\"\n[link]\nmtu = 1500\n");
    write("shipped/b.toml", "[profile]\ninclude = [\"a\"]\n[link]\nmtu = 1500\n");
    auto p = store().load("a");
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code, Errc::InvalidProfile);
    EXPECT_EQ(p.error().str(),
              (root_ / "shipped/b.toml").string() + ":2:11: include cycle: a -> b -> a");
}

TEST_F(ProfileStoreTest, MissingIncludeNamesTheIncludingFile) {
    write("shipped/a.toml", "[profile]\ninclude = \"nope\"\n[link]\nmtu = 1500\n");
    auto p = store().load("a");
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().str().find((root_ / "shipped/a.toml").string() +
                                   ":2:11: include 'nope': no profile named"),
              std::string::npos)
        << p.error().str();
}

TEST_F(ProfileStoreTest, UnknownProfileIsAUserError) {
    auto p = store().load("nope");
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code, Errc::NoSuchProfile);
    EXPECT_TRUE(p.error().is_user_error());
}

TEST_F(ProfileStoreTest, RefusesFilesOthersCanWriteWhenRunningAsRoot) {
    write("shipped/open.toml", "[link]\nmtu = 1500\n");
    fs::permissions(root_ / "shipped/open.toml", fs::perms::others_write, fs::perm_options::add);
    auto p = store(true).load("open");
    ASSERT_FALSE(p);
    const auto msg = p.error().str();
    EXPECT_NE(msg.find("refusing to load"), std::string::npos) << msg;
    if (geteuid() == 0) {
        EXPECT_NE(msg.find("writable by everyone"), std::string::npos) << msg;
    }
}

TEST_F(ProfileStoreTest, RefusesDirectoriesOthersCanWrite) {
    write("shipped/x.toml", "[link]\nmtu = 1500\n");
    fs::permissions(root_ / "shipped", fs::perms::group_write, fs::perm_options::add);
    auto p = store(true).load("x");
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().str().find("refusing to load"), std::string::npos) << p.error().str();
}

TEST_F(ProfileStoreTest, RefusesHugeFiles) {
    // 10 MB, ten times the limit: refused by its size, before it is read.
    write("shipped/big.toml", "[link]\nmtu = 1500\n# " + std::string(10'000'000, 'x') + "\n");
    auto p = store().load("big");
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().str().find("the limit is 1048576"), std::string::npos) << p.error().str();
}

TEST_F(ProfileStoreTest, ReportsSymlinkLoopsAndUnreadableFiles) {
    fs::create_symlink(root_ / "shipped/loop.toml", root_ / "shipped/loop.toml");
    auto p = store().load("loop");
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().str(), (root_ / "shipped/loop.toml").string() + ": symbolic link loop");
    write("shipped/dir.toml", "");
    fs::remove(root_ / "shipped/dir.toml");
    fs::create_directory(root_ / "shipped/dir.toml");
    auto d = store().load("dir");
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().str(), (root_ / "shipped/dir.toml").string() + ": not a regular file");
}

}  // namespace
}  // namespace nictune::profile

namespace nictune::profile {
namespace {

TEST(ProfileParser, RejectsAnAliasThatContradictsAKernelName) {
    EXPECT_EQ(
        error_of("[features]\ngro = false\nrx-gro = true\n"),
        "p.toml:3:1: features.rx-gro = true contradicts features.gro = false (both cover rx-gro)");
    EXPECT_TRUE(parse("[features]\ngro = true\nrx-gro = true\n", "p.toml"));
}

}  // namespace
}  // namespace nictune::profile
