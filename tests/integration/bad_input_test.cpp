// Bad input over D-Bus and on the command line (issue 7). Every call below
// is wrong on purpose: a wrong signature for each method, oversized strings,
// names that are paths, unknown flags, flags of the wrong type, 5,000
// interfaces at once. Each must end in a named error (org.nictune1.Error.*,
// or the bus's own org.freedesktop.DBus.Error.* for what sd-bus refuses before
// nictuned sees it), nictuned must keep running and answer, and nothing may
// change: the namespace's links and the state directory are compared before
// and after every call.
//
// Each case is written once, busctl style (signature, then arguments), and
// sent twice: by busctl, the tool an operator would use (exit status and
// message; busctl does not print error names), and by a raw sd-bus message
// from this process, which shows the error name. busctl cannot carry a
// 1 MB argument (the kernel caps one argv string at 128 KiB,
// MAX_ARG_STRLEN), so those cases go only the second way; busctl gets
// 100 KB versions instead.
//
// NUL cannot be tested: D-Bus strings must not contain U+0000 (and must be
// valid UTF-8). sd-bus measures strings with strlen(), so a client cannot
// even express one, and dbus-daemon drops a connection that sends a
// malformed string before it is routed. InvalidUtf8NeverLeavesTheClient
// shows the client-side refusal.
#include <gtest/gtest.h>
#include <sdbus-c++/sdbus-c++.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "integration/daemon_harness.hpp"

namespace nictune::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::size_t kBusctlArgMax = 100000;  // below MAX_ARG_STRLEN (131072)
const std::string kInvalidArgs = "org.freedesktop.DBus.Error.InvalidArgs";
const std::string kInvalidArgument = "org.nictune1.Error.InvalidArgument";
const std::string kNoSuchInterface = "org.nictune1.Error.NoSuchInterface";
const std::string kNoSuchProfile = "org.nictune1.Error.NoSuchProfile";

// ---- busctl-style arguments as an sd-bus message

// The end of the complete type that starts at sig[pos].
std::size_t type_end(const std::string& sig, std::size_t pos) {
    const char c = sig.at(pos);
    if (c == 'a') return type_end(sig, pos + 1);
    if (c == '(' || c == '{') {
        const char close = c == '(' ? ')' : '}';
        std::size_t p = pos + 1;
        while (sig.at(p) != close)
            p = type_end(sig, p);
        return p + 1;
    }
    return pos + 1;
}

// Appends one value of the complete type `t`, reading busctl's textual form
// (arrays: count then elements; variants: signature then value).
void append(sdbus::Message& m, const std::string& t, const std::vector<std::string>& args,
            std::size_t& i) {
    switch (t.at(0)) {
        case 's':
            m << args.at(i++);
            break;
        case 'o':
            m << sdbus::ObjectPath(args.at(i++));
            break;
        case 'b': {
            const std::string& v = args.at(i++);
            m << (v == "true" || v == "yes" || v == "1");
            break;
        }
        case 'i':
            m << static_cast<int32_t>(std::stol(args.at(i++)));
            break;
        case 'u':
            m << static_cast<uint32_t>(std::stoul(args.at(i++)));
            break;
        case 'x':
            m << static_cast<int64_t>(std::stoll(args.at(i++)));
            break;
        case 't':
            m << static_cast<uint64_t>(std::stoull(args.at(i++)));
            break;
        case 'd':
            m << std::stod(args.at(i++));
            break;
        case 'v': {
            const std::string inner = args.at(i++);
            m.openVariant(inner);
            append(m, inner, args, i);
            m.closeVariant();
            break;
        }
        case 'a': {
            const std::string elem = t.substr(1);
            const auto n = std::stoul(args.at(i++));
            m.openContainer(elem);
            for (unsigned long k = 0; k < n; ++k) {
                if (elem.at(0) == '{') {
                    const std::string kv = elem.substr(1, elem.size() - 2);
                    const std::size_t split = type_end(kv, 0);
                    m.openDictEntry(kv);
                    append(m, kv.substr(0, split), args, i);
                    append(m, kv.substr(split), args, i);
                    m.closeDictEntry();
                } else {
                    append(m, elem, args, i);
                }
            }
            m.closeContainer();
            break;
        }
        case '(': {
            const std::string inner = t.substr(1, t.size() - 2);
            m.openStruct(inner);
            for (std::size_t p = 0; p < inner.size();) {
                const std::size_t e = type_end(inner, p);
                append(m, inner.substr(p, e - p), args, i);
                p = e;
            }
            m.closeStruct();
            break;
        }
        default:
            throw std::invalid_argument("type " + t + " not supported by this test");
    }
}

struct Reply {
    bool ok = false;
    std::string name;     // error name
    std::string message;  // error message
};

// interface.method with `call` = {signature, args...} ({} for no arguments).
Reply sdbus_call(sdbus::IProxy& proxy, const std::string& interface, const std::string& method,
                 const std::vector<std::string>& call) {
    Reply r;
    try {
        auto m = proxy.createMethodCall(interface, method);
        if (!call.empty()) {
            const std::string& sig = call.front();
            std::size_t i = 1;
            for (std::size_t p = 0; p < sig.size();) {
                const std::size_t e = type_end(sig, p);
                append(m, sig.substr(p, e - p), call, i);
                p = e;
            }
        }
        (void)proxy.callMethod(m, 60s);
        r.ok = true;
    } catch (const sdbus::Error& e) {
        r.name = e.getName();
        r.message = e.getMessage();
    }
    return r;
}

struct Case {
    std::string what;
    std::string method;             // of org.nictune1.Manager
    std::vector<std::string> call;  // signature, then arguments (busctl style)
    std::string error;              // expected error name
    std::string message;            // part of the expected message ("" for any)
};

std::vector<std::string> many(const std::string& prefix, int n) {
    std::vector<std::string> v = {std::to_string(n)};
    for (int i = 0; i < n; ++i)
        v.push_back(prefix + std::to_string(i));
    return v;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

class BadInputTest : public ::testing::Test {
  protected:
    void SetUp() override {
        h_ = std::make_unique<DaemonHarness>(
            std::map<std::string, std::string>{{"small", "[link]\nmtu = 1400\n"},
                                               {"jumbo", "[link]\nmtu = 9000\n"}},
            "[[bind]]\nprofile = \"jumbo\"\ninterface = \"bb*\"\n", &skip_);
        if (!skip_.empty()) GTEST_SKIP() << skip_;
        ASSERT_TRUE(h_->ok());
        ASSERT_EQ(h_->ns().exec("ip link add name bi0 type veth peer name bb0").status, 0);
        ASSERT_TRUE(h_->start_daemon());
        conn_ = sdbus::createSessionBusConnectionWithAddress(h_->bus().address());
        proxy_ = sdbus::createProxy(*conn_, "org.nictune1", "/org/nictune1");
    }

    // Everything a wrong call could have changed: links (with their
    // details), bi0's features, and the state directory.
    std::string snapshot() {
        std::string s = h_->ns().exec("ip -d link show; ethtool -k bi0; ethtool -k bb0").out;
        std::error_code ec;
        if (fs::exists(h_->dir() / "state"))
            for (auto it = fs::recursive_directory_iterator(h_->dir() / "state", ec);
                 it != fs::recursive_directory_iterator(); it.increment(ec)) {
                if (ec) break;
                s += it->path().string() + " " +
                     (it->is_regular_file() ? std::to_string(it->file_size()) : "dir") + "\n";
            }
        return s;
    }

    // The lines that differ between two snapshots ("" when equal).
    static std::string changes(const std::string& before, const std::string& after) {
        auto lines = [](const std::string& text) {
            std::multiset<std::string> out;
            std::istringstream in(text);
            for (std::string l; std::getline(in, l);)
                out.insert(l);
            return out;
        };
        const auto a = lines(before);
        const auto b = lines(after);
        std::string d;
        for (auto it = a.begin(); it != a.end(); it = a.upper_bound(*it))
            if (a.count(*it) > b.count(*it)) d += "- " + *it + "\n";
        for (auto it = b.begin(); it != b.end(); it = b.upper_bound(*it))
            if (b.count(*it) > a.count(*it)) d += "+ " + *it + "\n";
        return d;
    }

    bool daemon_answers() { return sdbus_call(*proxy_, "org.nictune1.Manager", "Status", {}).ok; }

    void check(const Case& c, const std::string& before) {
        SCOPED_TRACE(c.what);
        const std::string iface = c.method.find('.') == std::string::npos
                                      ? std::string("org.nictune1.Manager")
                                      : c.method.substr(0, c.method.rfind('.'));
        const std::string member = c.method.substr(c.method.rfind('.') + 1);
        const Reply r = sdbus_call(*proxy_, iface, member, c.call);
        EXPECT_FALSE(r.ok) << "the call succeeded";
        EXPECT_EQ(r.name, c.error) << r.message.substr(0, 300);
        if (!c.message.empty()) {
            EXPECT_NE(r.message.find(c.message), std::string::npos) << r.message.substr(0, 300);
        }
        EXPECT_LE(r.message.size(), 1024U) << "error messages stay readable";

        bool fits = true;
        for (const auto& a : c.call)
            fits &= a.size() <= kBusctlArgMax;
        if (fits) {
            // "--": arguments such as "-rf" are not busctl's options.
            std::vector<std::string> argv = {"busctl",        "--address=" + h_->bus().address(),
                                             "--timeout=60",  "--",
                                             "call",          "org.nictune1",
                                             "/org/nictune1", iface,
                                             member};
            argv.insert(argv.end(), c.call.begin(), c.call.end());
            auto b = run(argv, 60000);
            EXPECT_NE(b.status, 0) << "busctl: " << b.out;
            if (!c.message.empty()) {
                EXPECT_NE(b.err.find(c.message), std::string::npos)
                    << "busctl: " << b.err.substr(0, 300);
            }
            ++busctl_calls_;
        }
        EXPECT_TRUE(h_->daemon().running()) << h_->log();
        EXPECT_TRUE(daemon_answers());
        EXPECT_EQ(changes(before, snapshot()), "") << "a refused call changed something";
    }

    std::string skip_;
    std::unique_ptr<DaemonHarness> h_;
    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<sdbus::IProxy> proxy_;
    int busctl_calls_ = 0;
};

TEST_F(BadInputTest, EveryBadCallGetsANamedErrorAndChangesNothing) {
    const std::string mb(1 << 20, 'x');
    const std::string kb100(kBusctlArgMax, 'y');
    const std::string p300(300, 'p');
    const std::string sixteen = "abcdefghijklmnop";  // IFNAMSIZ (16) counts the NUL
    const std::string sig_error = "Invalid arguments";
    const std::vector<Case> cases = {
        // Wrong signatures: sd-bus checks them against the vtable.
        {"Audit(s)", "Audit", {"s", "bi0"}, kInvalidArgs, sig_error},
        {"Audit(as) too few", "Audit", {"as", "1", "bi0"}, kInvalidArgs, sig_error},
        {"Audit(assa{sv}s) too many",
         "Audit",
         {"assa{sv}s", "1", "bi0", "", "0", "x"},
         kInvalidArgs,
         sig_error},
        {"Audit(asia{sv})", "Audit", {"asia{sv}", "1", "bi0", "7", "0"}, kInvalidArgs, sig_error},
        {"Plan(as)", "Plan", {"as", "1", "bi0"}, kInvalidArgs, sig_error},
        {"Plan(sasa{ss})",
         "Plan",
         {"sasa{ss}", "small", "1", "bi0", "1", "force", "yes"},
         kInvalidArgs,
         sig_error},
        {"Apply()", "Apply", {}, kInvalidArgs, sig_error},
        {"Apply(ssa{sv})", "Apply", {"ssa{sv}", "small", "bi0", "0"}, kInvalidArgs, sig_error},
        {"Apply(sasas)",
         "Apply",
         {"sasas", "small", "1", "bi0", "1", "force"},
         kInvalidArgs,
         sig_error},
        {"Apply(sasa{sb})",
         "Apply",
         {"sasa{sb}", "small", "1", "bi0", "1", "force", "true"},
         kInvalidArgs,
         sig_error},
        {"Rollback(i)", "Rollback", {"i", "5"}, kInvalidArgs, sig_error},
        {"Rollback(as)", "Rollback", {"as", "1", "bi0"}, kInvalidArgs, sig_error},
        {"Rollback()", "Rollback", {}, kInvalidArgs, sig_error},
        {"RollbackInterfaces(s)", "RollbackInterfaces", {"s", "bi0"}, kInvalidArgs, sig_error},
        {"RollbackInterfaces()", "RollbackInterfaces", {}, kInvalidArgs, sig_error},
        {"ListProfiles(s)", "ListProfiles", {"s", "x"}, kInvalidArgs, sig_error},
        {"Status(b)", "Status", {"b", "true"}, kInvalidArgs, sig_error},
        {"Reload(s)", "Reload", {"s", "x"}, kInvalidArgs, sig_error},
        {"unknown method", "Frobnicate", {}, "org.freedesktop.DBus.Error.UnknownMethod", ""},
        {"set the read-only Version",
         "org.freedesktop.DBus.Properties.Set",
         {"ssv", "org.nictune1.Manager", "Version", "s", "9.9"},
         "org.freedesktop.DBus.Error.PropertyReadOnly",
         ""},

        // Audit's health flags (issue 14).
        {"Audit: the sample flag is refused",
         "Audit",
         {"assa{sv}", "1", "bi0", "", "1", "sample", "d", "5"},
         kInvalidArgument,
         "nictunectl audit --sample"},
        {"Audit: rtt_ms of the wrong type",
         "Audit",
         {"assa{sv}", "1", "bi0", "", "1", "rtt_ms", "s", "fast"},
         kInvalidArgument,
         "'rtt_ms' must be a double"},
        {"Audit: rtt_ms out of range",
         "Audit",
         {"assa{sv}", "1", "bi0", "", "1", "rtt_ms", "d", "0"},
         kInvalidArgument,
         "0.001..10000"},
        {"Audit: health not a boolean",
         "Audit",
         {"assa{sv}", "1", "bi0", "", "1", "health", "s", "no"},
         kInvalidArgument,
         "must be a boolean"},

        // Interface names.
        {"Audit: 1 MB interface name",
         "Audit",
         {"assa{sv}", "1", mb, "", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Audit: 100 KB interface name",
         "Audit",
         {"assa{sv}", "1", kb100, "", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Apply: 1 MB interface name",
         "Apply",
         {"sasa{sv}", "small", "1", mb, "0"},
         kInvalidArgument,
         "is not valid"},
        {"Plan: 100 KB interface name",
         "Plan",
         {"sasa{sv}", "small", "1", kb100, "0"},
         kInvalidArgument,
         "is not valid"},
        {"Rollback: 1 MB interface name", "Rollback", {"s", mb}, kInvalidArgument, "is not valid"},
        {"Rollback: 100 KB interface name",
         "Rollback",
         {"s", kb100},
         kInvalidArgument,
         "is not valid"},
        // Longer than a name can be, but an alternative name could be (up
        // to 127 bytes): looked up, and not there.
        {"Apply: 16 characters",
         "Apply",
         {"sasa{sv}", "small", "1", sixteen, "0"},
         kNoSuchInterface,
         sixteen},
        {"Apply: 128 characters",
         "Apply",
         {"sasa{sv}", "small", "1", std::string(128, 'q'), "0"},
         kInvalidArgument,
         "is not valid"},
        {"Apply: a/b",
         "Apply",
         {"sasa{sv}", "small", "1", "a/b", "0"},
         kInvalidArgument,
         "'a/b' is not valid"},
        {"Apply: ..",
         "Apply",
         {"sasa{sv}", "small", "1", "..", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Apply: .",
         "Apply",
         {"sasa{sv}", "small", "1", ".", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Rollback: ../../etc", "Rollback", {"s", "../../etc"}, kInvalidArgument, "is not valid"},
        {"Rollback: empty", "Rollback", {"s", ""}, kInvalidArgument, "is not valid"},
        {"RollbackInterfaces: ../../etc",
         "RollbackInterfaces",
         {"as", "2", "bi0", "../../etc"},
         kInvalidArgument,
         "is not valid"},
        {"Audit: empty name",
         "Audit",
         {"assa{sv}", "1", "", "", "0"},
         kInvalidArgument,
         "is not valid"},
        // Not a name (':'), but the kernel takes it as an alternative name.
        {"Apply: alias bi0:1",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0:1", "0"},
         kNoSuchInterface,
         "bi0:1"},
        // Not nictune's text form of a name.
        {"Apply: a raw backslash",
         "Apply",
         {"sasa{sv}", "small", "1", "b\\i0", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Apply: space",
         "Apply",
         {"sasa{sv}", "small", "1", "b i0", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Apply: newline",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0\n", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Apply: control character",
         "Apply",
         {"sasa{sv}", "small", "1", "\x01x", "0"},
         kInvalidArgument,
         "is not valid"},
        {"Apply: unknown interface (15 characters)",
         "Apply",
         {"sasa{sv}", "small", "1", "abcdefghijklmno", "0"},
         kNoSuchInterface,
         "abcdefghijklmno"},
        {"Audit: one unknown among known",
         "Audit",
         {"assa{sv}", "2", "bi0", "nosuch0", "", "0"},
         kNoSuchInterface,
         "nosuch0"},
        {"Plan: unknown interface",
         "Plan",
         {"sasa{sv}", "small", "1", "nosuch0", "0"},
         kNoSuchInterface,
         "nosuch0"},

        // Profile names.
        {"Apply: 300-character profile",
         "Apply",
         {"sasa{sv}", p300, "1", "bi0", "0"},
         kInvalidArgument,
         "300 characters"},
        {"Audit: 300-character profile",
         "Audit",
         {"assa{sv}", "1", "bi0", p300, "0"},
         kInvalidArgument,
         "300 characters"},
        {"Plan: 1 MB profile",
         "Plan",
         {"sasa{sv}", mb, "1", "bi0", "0"},
         kInvalidArgument,
         "characters; the limit is"},
        {"Apply: 100 KB profile",
         "Apply",
         {"sasa{sv}", kb100, "1", "bi0", "0"},
         kInvalidArgument,
         "characters; the limit is"},
        {"Apply: ../small",
         "Apply",
         {"sasa{sv}", "../small", "1", "bi0", "0"},
         kInvalidArgument,
         "looks like a path"},
        {"Apply: sub/small",
         "Apply",
         {"sasa{sv}", "sub/small", "1", "bi0", "0"},
         kInvalidArgument,
         "looks like a path"},
        {"Apply: ..",
         "Apply",
         {"sasa{sv}", "..", "1", "bi0", "0"},
         kInvalidArgument,
         "looks like a path"},
        {"Apply: /etc/passwd",
         "Apply",
         {"sasa{sv}", "/etc/passwd", "1", "bi0", "0"},
         kInvalidArgument,
         "looks like a path"},
        {"Audit: ../../etc/shadow",
         "Audit",
         {"assa{sv}", "1", "bi0", "../../etc/shadow", "0"},
         kInvalidArgument,
         "looks like a path"},
        {"Apply: empty profile",
         "Apply",
         {"sasa{sv}", "", "1", "bi0", "0"},
         kInvalidArgument,
         "empty profile name"},
        {"Apply: -rf",
         "Apply",
         {"sasa{sv}", "-rf", "1", "bi0", "0"},
         kInvalidArgument,
         "must start with a letter or digit"},
        {"Apply: unknown profile",
         "Apply",
         {"sasa{sv}", "nosuch", "1", "bi0", "0"},
         kNoSuchProfile,
         "no profile named 'nosuch'"},

        // Flags.
        {"Audit: unknown flag",
         "Audit",
         {"assa{sv}", "1", "bi0", "", "1", "bogus", "b", "true"},
         kInvalidArgument,
         "unknown flag 'bogus'"},
        {"Apply: unknown flag dry_run",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0", "1", "dry_run", "b", "true"},
         kInvalidArgument,
         "unknown flag 'dry_run'"},
        {"Plan: keep_going is Apply's",
         "Plan",
         {"sasa{sv}", "small", "1", "bi0", "1", "keep_going", "b", "true"},
         kInvalidArgument,
         "unknown flag 'keep_going'"},
        {"Apply: 1 MB flag name",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0", "1", mb, "b", "true"},
         kInvalidArgument,
         "unknown flag"},
        {"Apply: force as a string",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0", "1", "force", "s", "yes"},
         kInvalidArgument,
         "flag 'force' must be a boolean"},
        {"Apply: force as an int",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0", "1", "force", "i", "1"},
         kInvalidArgument,
         "flag 'force' must be a boolean"},
        {"Apply: keep_going as an array",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0", "1", "keep_going", "as", "1", "x"},
         kInvalidArgument,
         "flag 'keep_going' must be a boolean"},
        {"Apply: force as a variant in a variant",
         "Apply",
         {"sasa{sv}", "small", "1", "bi0", "1", "force", "v", "b", "true"},
         kInvalidArgument,
         "flag 'force' must be a boolean"},
        {"Audit: all as u",
         "Audit",
         {"assa{sv}", "1", "bi0", "", "1", "all", "u", "1"},
         kInvalidArgument,
         "flag 'all' must be a boolean"},
        {"Plan: force as a struct",
         "Plan",
         {"sasa{sv}", "small", "1", "bi0", "1", "force", "(bs)", "true", "x"},
         kInvalidArgument,
         "flag 'force' must be a boolean"},

        // Counts.
        {"Audit: 5,000 interfaces", "Audit", cat(cat({"assa{sv}"}, many("x", 5000)), {"", "0"}),
         kInvalidArgument, "too many interfaces (5000)"},
        {"Apply: 5,000 interfaces", "Apply",
         cat(cat({"sasa{sv}", "small"}, many("x", 5000)), {"0"}), kInvalidArgument,
         "too many interfaces (5000)"},
        {"Plan: 5,000 interfaces", "Plan", cat(cat({"sasa{sv}", "small"}, many("x", 5000)), {"0"}),
         kInvalidArgument, "too many interfaces (5000)"},
        {"Apply: 4,096 unknown interfaces", "Apply",
         cat(cat({"sasa{sv}", "small"}, many("x", 4096)), {"0"}), kNoSuchInterface, "x0"},
        {"Apply: 5,000 flags", "Apply",
         [] {
             std::vector<std::string> v = {"sasa{sv}", "small", "1", "bi0", "5000"};
             for (int i = 0; i < 5000; ++i)
                 v.insert(v.end(), {"f" + std::to_string(i), "b", "true"});
             return v;
         }(),
         kInvalidArgument, "unknown flag"},
    };

    const std::string before = snapshot();
    for (const auto& c : cases)
        check(c, before);
    std::printf("[bad-input] %zu D-Bus cases, %d of them also through busctl\n", cases.size(),
                busctl_calls_);
    EXPECT_NE(h_->log().find("ready"), std::string::npos);
    EXPECT_EQ(h_->log().find("internal error"), std::string::npos) << h_->log();
}

TEST_F(BadInputTest, InvalidUtf8NeverLeavesTheClient) {
    // D-Bus strings are UTF-8 without NUL; sd-bus refuses to marshal anything
    // else, so nictuned can never receive it.
    const Reply r = sdbus_call(*proxy_, "org.nictune1.Manager", "Rollback", {"s", "bi\xff\xfe"});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.name.find("org.freedesktop.DBus.Error"), std::string::npos) << r.name;
    EXPECT_TRUE(daemon_answers());
}

TEST_F(BadInputTest, TheCliRefusesBadInterfaceNamesWithExitTwoAndNamesThem) {
    const std::string before = snapshot();
    const std::string long_name(40, 'q');
    const std::string huge(kBusctlArgMax, 'z');
    struct CliCase {
        std::vector<std::string> args;
        std::string named;  // must appear in the message (stderr, or the report on stdout)
    };
    const std::vector<CliCase> cases = {
        {{"apply", "small", long_name}, long_name.substr(0, 15)},
        {{"apply", "small", "a/b"}, "a/b"},
        {{"apply", "small", "../../etc"}, "../../etc"},
        {{"apply", "small", "nosuch0"}, "nosuch0"},
        {{"apply", "small", "bi0", "nosuch1"}, "nosuch1"},
        {{"apply", "small", huge}, huge.substr(0, 15)},
        {{"audit", "a/b"}, "a/b"},
        {{"audit", "nosuch0"}, "nosuch0"},
        {{"audit", long_name}, long_name.substr(0, 15)},
        {{"diff", "small", "nosuch0"}, "nosuch0"},
        {{"diff", "small", "x/y"}, "x/y"},
        {{"rollback", "a/b"}, "a/b"},
        {{"rollback", long_name}, long_name.substr(0, 15)},
        {{"apply", "../small", "bi0"}, "../small"},
        {{"apply", std::string(300, 'p'), "bi0"}, "300"},
        // The same through the engine in this process.
        {{"--direct", "apply", "small", "a/b"}, "a/b"},
        {{"--direct", "apply", "small", long_name}, long_name.substr(0, 15)},
        {{"--direct", "audit", "nosuch0"}, "nosuch0"},
        {{"--direct", "rollback", "a/b"}, "a/b"},
    };
    for (const auto& c : cases) {
        std::string what;
        for (const auto& a : c.args)
            what += " " + a.substr(0, 40);
        SCOPED_TRACE("nictunectl" + what);
        std::vector<std::string> args = c.args;
        if (args.front() == "--direct")
            args.insert(args.begin() + 1, {"--state-dir", (h_->dir() / "direct-state").string(),
                                           "--profiles-dir", (h_->dir() / "profiles").string()});
        auto r = h_->ctl(args);
        EXPECT_EQ(r.status, 2) << r.out.substr(0, 300) << r.err.substr(0, 300);
        EXPECT_NE((r.err + r.out).find(c.named), std::string::npos) << r.err.substr(0, 300);
        EXPECT_LE(r.err.size(), 2048U) << "messages stay readable";
        EXPECT_EQ(changes(before, snapshot()), "");
    }
    EXPECT_TRUE(h_->daemon().running());
    EXPECT_TRUE(daemon_answers());
}

// Rollback of a name that is no interface: README's exit table says 2
// ("unknown interface ... nothing changed"), like apply, audit and diff, and
// no lock file may be left behind for a made-up name (rollback_interface()
// used to take the lock first and answer "nothing_saved", exit 0).
TEST_F(BadInputTest, RollbackOfAnUnknownInterfaceIsRefusedAndLeavesNoFile) {
    const std::string before = snapshot();
    const Reply r = sdbus_call(*proxy_, "org.nictune1.Manager", "Rollback", {"s", "nosuch0"});
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.name, kNoSuchInterface) << r.message;
    EXPECT_EQ(changes(before, snapshot()), "");
    for (bool direct : {false, true}) {
        SCOPED_TRACE(direct ? "nictunectl --direct rollback nosuch1"
                            : "nictunectl rollback nosuch1");
        std::vector<std::string> args = {"rollback", "nosuch1"};
        if (direct)
            args.insert(args.begin(), {"--direct", "--state-dir", (h_->dir() / "state").string(),
                                       "--profiles-dir", (h_->dir() / "profiles").string()});
        auto c = h_->ctl(args);
        EXPECT_EQ(c.status, 2) << c.out << c.err;
        EXPECT_NE(c.err.find("nosuch1"), std::string::npos) << c.err;
        EXPECT_EQ(changes(before, snapshot()), "");
    }
    EXPECT_TRUE(daemon_answers());
}

}  // namespace
}  // namespace nictune::test
