#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "watch/config.hpp"

namespace nictune {
namespace {
namespace fs = std::filesystem;

// The error a document produces, as "file:line:column: message".
std::string error_of(const std::string& text) {
    auto r = parse_config(text, "n.toml");
    if (r) return "(no error)";
    EXPECT_EQ(r.error().code, Errc::InvalidProfile);
    return r.error().str();
}

Identity nic(std::string name, std::string mac = "02:00:00:00:00:01") {
    Identity id;
    id.name = std::move(name);
    id.mac = std::move(mac);
    return id;
}

Binding binding(std::string profile) {
    Binding b;
    b.profile = std::move(profile);
    return b;
}

TEST(DaemonConfigParser, ReadsAFullConfig) {
    auto cfg = parse_config(R"(# nictuned
[daemon]
profiles_dirs = ["/srv/nictune/profiles", "/opt/profiles"]
state_dir = "/run/nictune"

[[bind]]
profile = "x520-lowlatency"
enforce = true
interface = "p4p*"
driver = "ixgbe"

[[bind]]
profile = "storage"
mac = "90:E2:BA:00:00:01"
pci = "0000:03:00.0"
)",
                            "n.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    EXPECT_EQ(cfg->file, "n.toml");
    EXPECT_EQ(cfg->profiles_dirs,
              (std::vector<std::string>{"/srv/nictune/profiles", "/opt/profiles"}));
    EXPECT_EQ(cfg->state_dir, "/run/nictune");
    ASSERT_EQ(cfg->bindings.size(), 2U);

    const auto& a = cfg->bindings[0];
    EXPECT_EQ(a.profile, "x520-lowlatency");
    EXPECT_TRUE(a.enforce);
    EXPECT_EQ(a.interface, "p4p*");
    EXPECT_EQ(a.driver, "ixgbe");
    EXPECT_FALSE(a.mac);
    EXPECT_FALSE(a.pci);
    EXPECT_EQ(a.loc.str(), "n.toml:6:1");
    EXPECT_EQ(a.profile_loc.str(), "n.toml:7:11");

    const auto& b = cfg->bindings[1];
    EXPECT_EQ(b.profile, "storage");
    EXPECT_FALSE(b.enforce);
    EXPECT_EQ(b.mac, "90:e2:ba:00:00:01");
    EXPECT_EQ(b.pci, "0000:03:00.0");
    EXPECT_FALSE(b.interface);
    EXPECT_FALSE(b.driver);
    EXPECT_EQ(b.loc.str(), "n.toml:12:1");
    EXPECT_EQ(b.profile_loc.str(), "n.toml:13:11");
}

TEST(DaemonConfigParser, AcceptsAnEmptyFileAsNoBindings) {
    for (const char* text : {"", "\n\n", "# nothing configured yet\n", "[daemon]\n"}) {
        auto cfg = parse_config(text, "n.toml");
        ASSERT_TRUE(cfg) << cfg.error().str();
        EXPECT_TRUE(cfg->bindings.empty());
        EXPECT_TRUE(cfg->profiles_dirs.empty());
        EXPECT_FALSE(cfg->state_dir);
    }
}

TEST(DaemonConfigParser, AcceptsASingleProfilesDirAsAString) {
    auto cfg = parse_config("[daemon]\nprofiles_dirs = \"/srv/p\"\n", "n.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    EXPECT_EQ(cfg->profiles_dirs, std::vector<std::string>{"/srv/p"});
}

TEST(DaemonConfigParser, AcceptsBindingsWrittenAsAnInlineArray) {
    auto cfg = parse_config(
        "bind = [ { profile = \"a\", driver = \"ixgbe\" }, { profile = \"b\", pci = "
        "\"0000:AF:00.1\" } ]\n",
        "n.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    ASSERT_EQ(cfg->bindings.size(), 2U);
    EXPECT_EQ(cfg->bindings[0].loc.str(), "n.toml:1:10");
    EXPECT_EQ(cfg->bindings[1].pci, "0000:af:00.1");
}

TEST(DaemonConfigParser, ReportsTomlSyntaxErrorsWithLineAndColumn) {
    const auto unterminated = error_of("[daemon]\nstate_dir = \"/run\n");
    EXPECT_TRUE(unterminated.starts_with("n.toml:2:")) << unterminated;
    const auto duplicate = error_of("[[bind]]\nprofile = \"a\"\nprofile = \"b\"\n");
    EXPECT_TRUE(duplicate.starts_with("n.toml:3:")) << duplicate;
}

TEST(DaemonConfigParser, RejectsNulBytesAndBinaryGarbage) {
    EXPECT_EQ(error_of(std::string("[daemon]\nst\0ate_dir = 1\n", 24)),
              "n.toml:2:3: file contains a NUL byte: not a text configuration file");
    EXPECT_EQ(error_of("\xff\xfe\x01\x02"), "n.toml:1:1: Encountered invalid utf-8 sequence");
    EXPECT_NE(error_of("\x7f"
                       "ELF\x02\x01"),
              "(no error)");
}

TEST(DaemonConfigParser, RejectsUnknownSectionsAndKeysWithASuggestion) {
    EXPECT_EQ(error_of("[deamon]\n"),
              "n.toml:1:2: unknown section [deamon]; did you mean 'daemon'?");
    EXPECT_EQ(error_of("[[binds]]\nprofile = \"x\"\n"),
              "n.toml:1:3: unknown section [[binds]]; did you mean 'bind'?");
    EXPECT_EQ(error_of("profile = \"x\"\n"), "n.toml:1:1: unknown key 'profile'");
    EXPECT_EQ(error_of("[daemon]\nprofile_dirs = \"/x\"\n"),
              "n.toml:2:1: unknown key 'profile_dirs' in [daemon]; did you mean 'profiles_dirs'?");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\n  interfaces = \"eth0\"\n"),
              "n.toml:3:3: unknown key 'interfaces' in [[bind]]; did you mean 'interface'?");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ncolor = \"red\"\n"),
              "n.toml:3:1: unknown key 'color' in [[bind]]");
}

TEST(DaemonConfigParser, RejectsWrongTypesAtTheValue) {
    EXPECT_EQ(error_of("daemon = 1\n"),
              "n.toml:1:10: 'daemon' must be a section ([daemon]), not an integer");
    EXPECT_EQ(error_of("[daemon]\nstate_dir = 5\n"),
              "n.toml:2:13: daemon.state_dir: expected a string, got an integer");
    EXPECT_EQ(error_of("[daemon]\nprofiles_dirs = true\n"),
              "n.toml:2:17: daemon.profiles_dirs: expected a string or an array of strings, got a "
              "boolean");
    EXPECT_EQ(error_of("[daemon]\nprofiles_dirs = [\"/a\", 2]\n"),
              "n.toml:2:24: daemon.profiles_dirs: expected strings in the array, got an integer");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\nenforce = \"yes\"\n"),
              "n.toml:3:11: bind.enforce: expected true or false, got a string");
    EXPECT_EQ(error_of("[[bind]]\nprofile = 7\n"),
              "n.toml:2:11: bind.profile: expected a string, got an integer");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ninterface = [\"a\", \"b\"]\n"),
              "n.toml:3:13: bind.interface: expected a string, got an array");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\nmac.addr = \"x\"\n"),
              "n.toml:3:1: bind.mac: expected a string, got a table");
    EXPECT_EQ(error_of("bind = \"x\"\n"),
              "n.toml:1:8: 'bind' must be an array of tables ([[bind]]), not a string");
    EXPECT_EQ(error_of("bind = [1]\n"),
              "n.toml:1:9: bind: expected tables in the array, got an "
              "integer");
}

TEST(DaemonConfigParser, RejectsBindWrittenAsASingleTable) {
    EXPECT_EQ(error_of("\n[bind]\nprofile = \"x\"\ndriver = \"ixgbe\"\n"),
              "n.toml:2:1: bindings are written [[bind]] (one array entry per binding), not "
              "[bind]");
}

TEST(DaemonConfigParser, RejectsABindingWithoutAProfile) {
    EXPECT_EQ(error_of("[[bind]]\ndriver = \"ixgbe\"\n"), "n.toml:1:1: [[bind]] has no profile");
}

TEST(DaemonConfigParser, RejectsABindingWithNothingToMatchOn) {
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"a\"\ndriver = \"e1000e\"\n\n[[bind]]\nprofile = "
                       "\"b\"\nenforce = true\n"),
              "n.toml:5:1: [[bind]] for profile 'b' needs at least one of interface, mac, pci or "
              "driver to match");
}

TEST(DaemonConfigParser, RejectsProfileNamesThatAreNotPlainNames) {
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"../etc/shadow\"\ndriver = \"x\"\n"),
              "n.toml:2:11: profile name '../etc/shadow' looks like a path; profiles are chosen "
              "by plain name");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"\"\ndriver = \"x\"\n"),
              "n.toml:2:11: empty profile name");
}

TEST(DaemonConfigParser, RejectsMalformedMatchValues) {
    const std::string long_name(128, 'a');
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ninterface = \"" + long_name + "\"\n"),
              "n.toml:3:13: bind.interface: '" + long_name +
                  "' is not an interface name or glob (1 to 127 bytes, no '/' or whitespace)");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ninterface = \"\"\n"),
              "n.toml:3:13: bind.interface: '' is not an interface name or glob (1 to 127 bytes, "
              "no '/' or whitespace)");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ninterface = \"a b\"\n"),
              "n.toml:3:13: bind.interface: must be written 'a\\x20b' in nictune's text form "
              "(bytes that are not printable UTF-8, whitespace and the backslash are written "
              "\\xhh)");
    // A backslash starts an escape: a glob's own backslash quoting does not exist here.
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ninterface = 'eth\\*'\n"),
              "n.toml:3:13: bind.interface: 'eth\\*' is not in nictune's text form of a name "
              "(a byte is written \\x and two lower-case hex digits, a backslash \\x5c)");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\nmac = \"90-e2-ba-00-00-01\"\n"),
              "n.toml:3:7: bind.mac: '90-e2-ba-00-00-01' is not a MAC address (expected six hex "
              "pairs like 90:e2:ba:00:00:01)");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\nmac = \"90:e2:ba:00:00:0g\"\n").substr(0, 34),
              "n.toml:3:7: bind.mac: '90:e2:ba:00");
    EXPECT_NE(error_of("[[bind]]\nprofile = \"x\"\nmac = \"90:e2:ba:00:00\"\n"), "(no error)");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\npci = \"03:00.0\"\n"),
              "n.toml:3:7: bind.pci: '03:00.0' is not a PCI address (expected "
              "domain:bus:device.function like 0000:03:00.0); did you mean '0000:03:00.0'?");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\npci = \"0000:03:20.0\"\n"),
              "n.toml:3:7: bind.pci: '0000:03:20.0' is not a PCI address (expected "
              "domain:bus:device.function like 0000:03:00.0)");
    EXPECT_NE(error_of("[[bind]]\nprofile = \"x\"\npci = \"0000:03:00.8\"\n"), "(no error)");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ndriver = \"\"\n"),
              "n.toml:3:10: bind.driver: must not be empty");
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\ndriver = \"../ixgbe\"\n"),
              "n.toml:3:10: bind.driver: '../ixgbe' is not a driver name (contains '/')");
}

TEST(DaemonConfigParser, RejectsRelativeDirectories) {
    EXPECT_EQ(error_of("[daemon]\nstate_dir = \"run/nictune\"\n"),
              "n.toml:2:13: daemon.state_dir: 'run/nictune' is not an absolute path");
    EXPECT_EQ(error_of("[daemon]\nprofiles_dirs = [\"/ok\", \"profiles\"]\n"),
              "n.toml:2:25: daemon.profiles_dirs: 'profiles' is not an absolute path");
    EXPECT_EQ(error_of("[daemon]\nprofiles_dirs = \"\"\n"),
              "n.toml:2:17: daemon.profiles_dirs: '' is not an absolute path");
}

TEST(DaemonConfigParser, ReportsTheFirstProblemInFileOrder) {
    // toml++ iterates keys sorted; the error must still be the first one written.
    EXPECT_EQ(error_of("[[bind]]\nprofile = \"x\"\nzzz = 1\naaa = 2\n"),
              "n.toml:3:1: unknown key 'zzz' in [[bind]]");
    EXPECT_EQ(error_of("zzz = 1\n[aaa]\n"), "n.toml:1:1: unknown key 'zzz'");
}

TEST(BindingMatch, MatchesInterfaceNamesAndGlobs) {
    auto b = binding("x");
    b.interface = "p4p*";
    EXPECT_TRUE(b.matches(nic("p4p1")));
    EXPECT_TRUE(b.matches(nic("p4p")));
    EXPECT_FALSE(b.matches(nic("p5p1")));
    b.interface = "eth0";
    EXPECT_TRUE(b.matches(nic("eth0")));
    EXPECT_FALSE(b.matches(nic("eth01")));
}

// Names and globs are in nictune's text form; the glob matches the real
// bytes of the name and of each alternative name.
TEST(DaemonConfigParser, ReadsInterfaceGlobsInTextForm) {
    auto cfg = parse_config(
        "[[bind]]\nprofile = \"x\"\ninterface = '\\xff\\xfe*'\n"
        "[[bind]]\nprofile = \"y\"\ninterface = \"a\\\\x5cb\"\n"
        "[[bind]]\nprofile = \"z\"\ninterface = \"enp3s0f0-with-a-long-alternative-name\"\n",
        "n.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    ASSERT_EQ(cfg->bindings.size(), 3U);
    EXPECT_EQ(cfg->bindings[0].interface, "\\xff\\xfe*");
    EXPECT_EQ(cfg->bindings[1].interface, "a\\x5cb");
    EXPECT_TRUE(cfg->bindings[0].matches(nic("\\xff\\xfeq")));
    EXPECT_FALSE(cfg->bindings[0].matches(nic("\\xffq")));
    EXPECT_TRUE(cfg->bindings[1].matches(nic("a\\x5cb")));
    auto id = nic("eth0");
    id.altnames = {"enp3s0f0-with-a-long-alternative-name"};
    EXPECT_EQ(cfg->binding_for(id), &cfg->bindings[2]);
}

TEST(BindingMatch, MatchesAnAlternativeName) {
    auto b = binding("x");
    b.interface = "uplink*";
    auto id = nic("eth0");
    EXPECT_FALSE(b.matches(id));
    id.altnames = {"enp0s1", "uplink0"};
    EXPECT_TRUE(b.matches(id));
}

// nictuned and nictunectl --direct take their state directory from here.
TEST(StateDirFor, TheCommandLineThenTheConfigurationThenTheDefault) {
    DaemonConfig with;
    with.state_dir = "/srv/nictune-state";
    const Result<DaemonConfig> cfg = with;
    const Result<DaemonConfig> none = DaemonConfig{};
    const Result<DaemonConfig> broken = fail(Errc::InvalidProfile, "n.toml:1:1", "bad");
    EXPECT_EQ(state_dir_for(fs::path("/tmp/x"), cfg), "/tmp/x");
    EXPECT_EQ(state_dir_for(std::nullopt, cfg), "/srv/nictune-state");
    EXPECT_EQ(state_dir_for(std::nullopt, none), "/run/nictune");
    EXPECT_EQ(state_dir_for(std::nullopt, broken), "/run/nictune");
}

TEST(BindingMatch, MatchesTheCurrentOrThePermanentMac) {
    auto b = binding("x");
    b.mac = "90:e2:ba:00:00:01";
    EXPECT_TRUE(b.matches(nic("a", "90:e2:ba:00:00:01")));
    EXPECT_TRUE(b.matches(nic("a", "90:E2:BA:00:00:01")));

    auto bonded = nic("a", "02:00:00:00:00:99");  // e.g. a bond slave with the bond's MAC
    EXPECT_FALSE(b.matches(bonded));
    bonded.perm_mac = "90:e2:ba:00:00:01";
    EXPECT_TRUE(b.matches(bonded));
    bonded.perm_mac = "90:e2:ba:00:00:02";
    EXPECT_FALSE(b.matches(bonded));
    EXPECT_FALSE(b.matches(nic("lo", "")));
}

TEST(BindingMatch, MatchesThePciSlotOrTheBusInfo) {
    auto b = binding("x");
    b.pci = "0000:03:00.0";
    auto id = nic("a");
    EXPECT_FALSE(b.matches(id));
    id.pci_slot = "0000:03:00.0";
    EXPECT_TRUE(b.matches(id));
    id.pci_slot.reset();
    id.bus_info = "0000:03:00.0";
    EXPECT_TRUE(b.matches(id));
    id.bus_info = "0000:03:00.1";
    EXPECT_FALSE(b.matches(id));
    id.pci_slot = "0000:03:00.0";
    EXPECT_TRUE(b.matches(id));
}

TEST(BindingMatch, MatchesTheDriverExactly) {
    auto b = binding("x");
    b.driver = "ixgbe";
    auto id = nic("a");
    EXPECT_FALSE(b.matches(id));
    id.driver = "ixgbe";
    EXPECT_TRUE(b.matches(id));
    id.driver = "ixgbevf";
    EXPECT_FALSE(b.matches(id));
    id.driver = "IXGBE";
    EXPECT_FALSE(b.matches(id));
}

TEST(BindingMatch, RequiresEveryGivenKeyToMatch) {
    auto b = binding("x");
    b.interface = "p4p*";
    b.driver = "ixgbe";
    b.mac = "90:e2:ba:00:00:01";
    b.pci = "0000:03:00.0";
    auto id = nic("p4p1", "90:e2:ba:00:00:01");
    id.driver = "ixgbe";
    id.pci_slot = "0000:03:00.0";
    EXPECT_TRUE(b.matches(id));

    auto wrong_name = id;
    wrong_name.name = "eth0";
    EXPECT_FALSE(b.matches(wrong_name));
    auto wrong_driver = id;
    wrong_driver.driver = "i40e";
    EXPECT_FALSE(b.matches(wrong_driver));
    auto wrong_mac = id;
    wrong_mac.mac = "90:e2:ba:00:00:02";
    EXPECT_FALSE(b.matches(wrong_mac));
    auto wrong_pci = id;
    wrong_pci.pci_slot = "0000:04:00.0";
    EXPECT_FALSE(b.matches(wrong_pci));
}

TEST(BindingMatch, ABindingWithoutMatchKeysMatchesNothing) {
    EXPECT_FALSE(binding("x").matches(nic("eth0")));
}

TEST(BindingDescribe, ListsTheMatchKeysTheProfileAndEnforce) {
    auto b = binding("x520-lowlatency");
    b.interface = "p4p*";
    b.driver = "ixgbe";
    b.enforce = true;
    EXPECT_EQ(b.describe(), "interface p4p* driver ixgbe -> x520-lowlatency (enforce)");
    auto c = binding("storage");
    c.mac = "90:e2:ba:00:00:01";
    c.pci = "0000:03:00.0";
    EXPECT_EQ(c.describe(), "mac 90:e2:ba:00:00:01 pci 0000:03:00.0 -> storage");
}

TEST(DaemonConfigBindingFor, PicksTheFirstMatchingBindingInFileOrder) {
    auto cfg = parse_config(R"(
[[bind]]
profile = "specific"
interface = "p4p2"

[[bind]]
profile = "by-driver"
driver = "ixgbe"

[[bind]]
profile = "catch-all"
interface = "*"
)",
                            "n.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    auto id = nic("p4p2");
    id.driver = "ixgbe";
    ASSERT_NE(cfg->binding_for(id), nullptr);
    EXPECT_EQ(cfg->binding_for(id)->profile, "specific");
    id.name = "p4p1";
    ASSERT_NE(cfg->binding_for(id), nullptr);
    EXPECT_EQ(cfg->binding_for(id)->profile, "by-driver");
    id.driver = "e1000e";
    ASSERT_NE(cfg->binding_for(id), nullptr);
    EXPECT_EQ(cfg->binding_for(id)->profile, "catch-all");
    EXPECT_EQ(DaemonConfig{}.binding_for(id), nullptr);
}

class DaemonConfigFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nictune-config-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        fs::create_directories(root_ / "profiles");
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
    profile::Store store() const {
        profile::StoreOptions o;
        o.search_path = {root_ / "profiles"};
        o.require_root_owned = false;
        return profile::Store(o);
    }
    DaemonConfig config(const std::string& text) {
        auto cfg = parse_config(text, "n.toml");
        EXPECT_TRUE(cfg) << cfg.error().str();
        return cfg ? *cfg : DaemonConfig{};
    }
    fs::path root_;
};

TEST_F(DaemonConfigFiles, ValidateBindingsAcceptsProfilesThatLoad) {
    write("profiles/good.toml", "[link]\nmtu = 9000\n");
    auto cfg = config("[[bind]]\nprofile = \"good\"\ndriver = \"ixgbe\"\n");
    auto ok = validate_bindings(cfg, store());
    EXPECT_TRUE(ok) << ok.error().str();
    EXPECT_TRUE(validate_bindings(DaemonConfig{}, store()));
}

TEST_F(DaemonConfigFiles, ValidateBindingsPointsAtTheProfileValueOfAMissingProfile) {
    write("profiles/good.toml", "[link]\nmtu = 9000\n");
    auto cfg = config(
        "[[bind]]\nprofile = \"good\"\ndriver = \"ixgbe\"\n\n[[bind]]\n  profile = \"nope\"\n"
        "driver = \"i40e\"\n");
    auto r = validate_bindings(cfg, store());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::NoSuchProfile);
    EXPECT_EQ(r.error().str(), "n.toml:6:13: profile 'nope': no profile named 'nope' in " +
                                   (root_ / "profiles").string());
}

TEST_F(DaemonConfigFiles, ValidateBindingsPointsAtTheProfileValueOfAnInvalidProfile) {
    write("profiles/bad.toml", "[link]\nmtuu = 9000\n");
    auto cfg = config("[[bind]]\nprofile = \"bad\"\ninterface = \"eth*\"\n");
    auto r = validate_bindings(cfg, store());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::InvalidProfile);
    EXPECT_EQ(r.error().str(),
              "n.toml:2:11: profile 'bad': " + (root_ / "profiles/bad.toml").string() +
                  ":2:1: unknown key 'mtuu' in [link]; did you mean 'mtu'?");
}

TEST_F(DaemonConfigFiles, LoadConfigTreatsAMissingFileAsAnEmptyConfig) {
    for (bool root_owned : {false, true}) {
        auto cfg = load_config(root_ / "nictune.toml", root_owned);
        ASSERT_TRUE(cfg) << cfg.error().str();
        EXPECT_EQ(cfg->file, root_ / "nictune.toml");
        EXPECT_TRUE(cfg->bindings.empty());
        EXPECT_TRUE(cfg->profiles_dirs.empty());
    }
    auto in_missing_dir = load_config(root_ / "no/such/dir/nictune.toml", true);
    EXPECT_TRUE(in_missing_dir) << in_missing_dir.error().str();
}

TEST_F(DaemonConfigFiles, LoadConfigReportsADanglingSymlink) {
    fs::create_symlink(root_ / "gone.toml", root_ / "nictune.toml");
    auto cfg = load_config(root_ / "nictune.toml", false);
    ASSERT_FALSE(cfg);
    EXPECT_EQ(cfg.error().str(),
              (root_ / "nictune.toml").string() + ": symbolic link to a missing file");
}

TEST_F(DaemonConfigFiles, LoadConfigReadsAndParsesTheFile) {
    write("nictune.toml", "[[bind]]\nprofile = \"good\"\ndriver = \"ixgbe\"\n");
    auto cfg = load_config(root_ / "nictune.toml", false);
    ASSERT_TRUE(cfg) << cfg.error().str();
    ASSERT_EQ(cfg->bindings.size(), 1U);
    EXPECT_EQ(cfg->bindings[0].profile_loc.str(), (root_ / "nictune.toml").string() + ":2:11");

    write("broken.toml", "[[bind]]\nprofile = \"good\"\n");
    auto broken = load_config(root_ / "broken.toml", false);
    ASSERT_FALSE(broken);
    EXPECT_EQ(broken.error().str(),
              (root_ / "broken.toml").string() +
                  ":1:1: [[bind]] for profile 'good' needs at least one of interface, mac, pci or "
                  "driver to match");
}

TEST_F(DaemonConfigFiles, LoadConfigRefusesAGroupWritableFileWhenRootOwnershipIsRequired) {
    write("nictune.toml", "[[bind]]\nprofile = \"good\"\ndriver = \"ixgbe\"\n");
    fs::permissions(root_ / "nictune.toml", fs::perms::group_write, fs::perm_options::add);
    auto cfg = load_config(root_ / "nictune.toml", true);
    ASSERT_FALSE(cfg);
    EXPECT_EQ(cfg.error().code, Errc::InvalidProfile);
    const auto msg = cfg.error().str();
    EXPECT_TRUE(msg.starts_with((root_ / "nictune.toml").string() + ": refusing to load: the file "
                                                                    "is "))
        << msg;
    if (geteuid() == 0) {
        EXPECT_NE(msg.find("writable by its group"), std::string::npos) << msg;
    }
    // Without the requirement (a non-root daemon in tests) the same file loads.
    EXPECT_TRUE(load_config(root_ / "nictune.toml", false));
}

}  // namespace
}  // namespace nictune

namespace nictune {
namespace {

TEST(DaemonConfigParser, ReadsAPeerCheckOfABinding) {
    auto cfg = parse_config(
        "[[bind]]\nprofile = \"jumbo\"\ninterface = \"p4p*\"\nverify_peer = \"10.0.0.2\"\n"
        "min_gbps = 9\nconfirm_timeout = 120\n",
        "n.toml");
    ASSERT_TRUE(cfg) << cfg.error().str();
    const Binding& b = cfg->bindings.at(0);
    EXPECT_EQ(b.verify_peer, "10.0.0.2");
    EXPECT_EQ(b.min_gbps, 9.0);
    EXPECT_EQ(b.confirm_timeout, 120U);
    EXPECT_NE(b.describe().find("(verify peer 10.0.0.2)"), std::string::npos) << b.describe();

    auto plain = parse_config("[[bind]]\nprofile = \"jumbo\"\ndriver = \"ixgbe\"\n", "n.toml");
    ASSERT_TRUE(plain);
    EXPECT_FALSE(plain->bindings.at(0).verify_peer);
    EXPECT_EQ(plain->bindings.at(0).confirm_timeout, 300U);
}

TEST(DaemonConfigParser, RejectsABadPeerCheckAtTheValue) {
    const std::string head = "[[bind]]\nprofile = \"jumbo\"\ndriver = \"ixgbe\"\n";
    EXPECT_EQ(error_of(head + "verify_peer = \"10.0.0.2;rm\"\n"),
              "n.toml:4:15: bind.verify_peer: '10.0.0.2;rm' is not an address or a host name "
              "(e.g. \"10.0.0.2\", \"fe80::2%p4p1\", \"peer-b\")");
    EXPECT_EQ(error_of(head + "verify_peer = \"b\"\nmin_gbps = 0\n"),
              "n.toml:5:12: bind.min_gbps: must be more than 0 and at most 10000 (Gbit/s)");
    EXPECT_EQ(error_of(head + "verify_peer = \"b\"\nconfirm_timeout = 0\n"),
              "n.toml:5:19: bind.confirm_timeout: must be 1..3600 seconds");
    EXPECT_EQ(error_of(head + "min_gbps = 9\n"),
              "n.toml:4:1: min_gbps and confirm_timeout belong to a peer check: add verify_peer");
}

}  // namespace
}  // namespace nictune

namespace nictune {
namespace {

TEST(DaemonConfigParser, ReadsThePlacementCheckInterval) {
    auto dflt = parse_config("", "n.toml");
    ASSERT_TRUE(dflt) << dflt.error().str();
    EXPECT_EQ(dflt->placement_check_interval, 10U);
    auto set = parse_config("[daemon]\nplacement_check_interval = 60\n", "n.toml");
    ASSERT_TRUE(set) << set.error().str();
    EXPECT_EQ(set->placement_check_interval, 60U);
    EXPECT_EQ(error_of("[daemon]\nplacement_check_interval = 0\n"),
              "n.toml:2:28: daemon.placement_check_interval: must be 1..3600 seconds");
    EXPECT_EQ(error_of("[daemon]\nplacement_check_interval = \"10s\"\n"),
              "n.toml:2:28: daemon.placement_check_interval: expected seconds, got a string");
}

}  // namespace
}  // namespace nictune
