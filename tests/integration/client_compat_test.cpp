// nictunectl's D-Bus client against an older nictuned: one that owns
// org.nictune1 but has no RollbackInterfaces method, and whose errors are a
// name and a message alone. The stand-in is an object in this process on a
// private dbus-daemon; the client must fall back to one Rollback call per
// interface and give each interface what Rollback said, errors included,
// and take an error without details as it always did. And against a peer
// whose error replies carry something else after the message: it is left
// alone.
#include <gtest/gtest.h>
#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "dbus/client.hpp"
#include "dbus/reply.hpp"
#include "support/dbus.hpp"
#include "support/process.hpp"

namespace nictune::test {
namespace {

namespace fs = std::filesystem;

using Restored =
    std::vector<sdbus::Struct<std::string, std::string, std::string, bool, std::string>>;

using Outcomes = std::vector<
    sdbus::Struct<std::string, std::string, std::string, std::string, std::string, std::string>>;

// A stand-in owning org.nictune1 on the private bus: `add` registers its
// methods on /org/nictune1, then it serves them from a thread of its own
// until it is destroyed. A class whose methods use its other members
// declares its FakePeer last, so that serving stops before they go.
class FakePeer {
  public:
    FakePeer(const std::string& address, const std::function<void(sdbus::IObject&)>& add)
        : conn_(sdbus::createSessionBusConnectionWithAddress(address)),
          object_(sdbus::createObject(*conn_, "/org/nictune1")) {
        add(*object_);
        object_->finishRegistration();
        conn_->requestName("org.nictune1");
        conn_->enterEventLoopAsync();
    }
    ~FakePeer() { stop(); }
    // Stops serving (for a class that must drop what its methods kept
    // while the connection still exists).
    void stop() {
        if (serving_) conn_->leaveEventLoop();
        serving_ = false;
    }
    FakePeer(const FakePeer&) = delete;
    FakePeer& operator=(const FakePeer&) = delete;

  private:
    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<sdbus::IObject> object_;
    bool serving_ = true;
};

// Each test: a private dbus-daemon, and nictunectl's client on it.
class ClientCompat : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
        std::string why;
        bus_ = PrivateBus::start(fs::path(NICTUNE_TEST_DATA) / "tuned" / "bus.conf", &why);
        ASSERT_TRUE(bus_) << why;
    }
    [[nodiscard]] const std::string& address() const { return bus_->address(); }
    // Connected after the stand-in owns its name.
    std::unique_ptr<dbus::Client> client() {
        std::string why;
        auto c = dbus::Client::connect(address(), &why);
        EXPECT_TRUE(c) << why;
        return c;
    }

  private:
    std::unique_ptr<PrivateBus> bus_;
};

// org.nictune1.Manager as nictuned had it before RollbackInterfaces and
// before error details: only Rollback and Apply matter here. It knows eth-a
// (rolled back) and refuses anything else as an unknown interface, as
// nictuned does, with the error's name and text alone.
class OlderNictuned {
  public:
    explicit OlderNictuned(const std::string& address)
        : peer_(address, [this](sdbus::IObject& object) { add(object); }) {}

    std::vector<std::string> calls() {
        std::lock_guard lock(mu_);
        return calls_;
    }

  private:
    void add(sdbus::IObject& object) {
        object.registerMethod("Apply")
            .onInterface("org.nictune1.Manager")
            .withInputParamNames("profile", "interfaces", "flags")
            .withOutputParamNames("transaction", "result", "outcomes", "report")
            .implementedAs([](const std::string&, const std::vector<std::string>& names,
                              const std::map<std::string, sdbus::Variant>&)
                               -> std::tuple<std::string, std::string, Outcomes, std::string> {
                throw sdbus::Error("org.nictune1.Error.NoSuchInterface",
                                   names.at(0) + ": no such interface");
            });
        object.registerMethod("Rollback")
            .onInterface("org.nictune1.Manager")
            .withInputParamNames("interface")
            .withOutputParamNames("result", "restored", "report")
            .implementedAs([this](const std::string& name) {
                {
                    std::lock_guard lock(mu_);
                    calls_.push_back(name);
                }
                if (name != "eth-a")
                    throw sdbus::Error("org.nictune1.Error.NoSuchInterface",
                                       name + ": no such interface");
                Restored restored;
                restored.emplace_back(name, "link.mtu", "1500", true, "");
                return std::make_tuple(std::string("rolled_back"), restored,
                                       std::string(R"({"interface": "eth-a", "result": )"
                                                   R"("rolled_back"})"));
            });
    }

    std::mutex mu_;
    std::vector<std::string> calls_;
    FakePeer peer_;  // last: it stops serving before the members above go
};

TEST_F(ClientCompat, RollbackOfSeveralFallsBackToOneCallEachOnAnOlderNictuned) {
    OlderNictuned older(address());
    auto client = this->client();
    ASSERT_TRUE(client);
    auto r = client->rollback(std::vector<std::string>{"eth-a", "eth-b"});
    ASSERT_TRUE(r) << r.error().str();
    ASSERT_EQ(r->size(), 2U);

    ASSERT_TRUE((*r)[0]) << (*r)[0].error().str();
    EXPECT_EQ((*r)[0]->at("interface"), "eth-a");
    EXPECT_EQ((*r)[0]->at("result"), "rolled_back");

    ASSERT_FALSE((*r)[1]);
    EXPECT_EQ((*r)[1].error().code, Errc::NoSuchInterface) << (*r)[1].error().str();
    EXPECT_NE((*r)[1].error().str().find("eth-b: no such interface"), std::string::npos)
        << (*r)[1].error().str();

    // RollbackInterfaces was refused as unknown; then one Rollback each, in order.
    EXPECT_EQ(older.calls(), (std::vector<std::string>{"eth-a", "eth-b"}));
}

TEST_F(ClientCompat, AnErrorWithoutDetailsFromAnOlderNictunedIsItsNameAndMessage) {
    OlderNictuned older(address());
    auto client = this->client();
    ASSERT_TRUE(client);
    auto r = client->apply("jumbo", {"eth-b"}, false, false);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::NoSuchInterface);
    EXPECT_EQ(r.error().message, "eth-b: no such interface");
    EXPECT_EQ(r.error().context, "");
    EXPECT_EQ(r.error().interface, "") << "an older nictuned does not say";
    EXPECT_EQ(r.error().str(), "eth-b: no such interface");
}

// A peer that owns org.nictune1 and answers Audit and Plan with errors
// whose second argument is not nictuned's details: a string, and a
// dictionary with a field of the wrong type.
void add_odd_methods(sdbus::IObject& object) {
    object.registerMethod("org.nictune1.Manager", "Audit", "assa{sv}", "a(sssssss)s",
                          [](sdbus::MethodCall call) {
                              auto reply = call.createErrorReply(
                                  sdbus::Error("org.nictune1.Error.NoSuchInterface", "x0: gone"));
                              reply << std::string("not a dictionary");
                              reply.send();
                          });
    object.registerMethod(
        "org.nictune1.Manager", "Plan", "sasa{sv}", "a(sisssssb)s", [](sdbus::MethodCall call) {
            auto reply = call.createErrorReply(
                sdbus::Error("org.nictune1.Error.InvalidProfile", "p.toml:1:1: bad"));
            reply << std::map<std::string, sdbus::Variant>{
                {"interface", sdbus::Variant(int32_t{7})},
                {"setting", sdbus::Variant(std::string("link.mtu"))},
                {"from_the_future", sdbus::Variant(true)}};
            reply.send();
        });
}

TEST_F(ClientCompat, DetailsOfAnotherShapeOrTypeAreLeftAlone) {
    FakePeer peer(address(), add_odd_methods);
    auto client = this->client();
    ASSERT_TRUE(client);
    auto audit = client->audit({"x0"}, "", false);
    ASSERT_FALSE(audit);
    EXPECT_EQ(audit.error().code, Errc::NoSuchInterface);
    EXPECT_EQ(audit.error().str(), "x0: gone");
    EXPECT_EQ(audit.error().interface, "");

    auto plan = client->plan("p", {"x0"}, false);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, Errc::InvalidProfile);
    EXPECT_EQ(plan.error().setting, "link.mtu");
    EXPECT_EQ(plan.error().interface, "") << "an int32 is no interface name";
    EXPECT_EQ(plan.error().message, "p.toml:1:1: bad") << "no \"message\" key: the message";
}

// A peer that takes Status and never answers it (the calls are held, not
// dropped, so that no error reply goes back either).
class SilentPeer {
  public:
    explicit SilentPeer(const std::string& address)
        : peer_(address, [this](sdbus::IObject& object) {
              object.registerMethod("org.nictune1.Manager", "Status", "", "a(sisssb)s",
                                    [this](sdbus::MethodCall call) {
                                        std::lock_guard lock(mu_);
                                        held_.push_back(std::move(call));
                                    });
          }) {}
    // The held calls belong to the connection: dropped before it goes.
    ~SilentPeer() {
        peer_.stop();
        held_.clear();
    }
    SilentPeer(const SilentPeer&) = delete;
    SilentPeer& operator=(const SilentPeer&) = delete;

  private:
    std::mutex mu_;
    std::vector<sdbus::MethodCall> held_;
    FakePeer peer_;  // last: it stops serving before the members above go
};

// The client waits for a reply by processing its own connection: a call
// nobody answers ends at the connection's method call timeout (sd-bus
// answers it with NoReply), it does not wait for ever.
TEST_F(ClientCompat, ACallNobodyAnswersEndsAtTheTimeout) {
    SilentPeer peer(address());

    auto conn = sdbus::createSessionBusConnectionWithAddress(address());
    conn->setMethodCallTimeout(std::chrono::milliseconds(300));
    auto proxy = sdbus::createProxy(*conn, "org.nictune1", "/org/nictune1");
    auto call = proxy->createMethodCall("org.nictune1.Manager", "Status");
    const auto start = std::chrono::steady_clock::now();
    auto r = dbus::send_and_wait(*conn, *proxy, call);
    const auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().error.getName(), "org.freedesktop.DBus.Error.NoReply");
    EXPECT_FALSE(r.error().details);
    EXPECT_GE(waited, std::chrono::milliseconds(300));
    EXPECT_LT(waited, std::chrono::seconds(10));
}

}  // namespace
}  // namespace nictune::test
