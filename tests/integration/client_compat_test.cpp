// nictunectl's D-Bus client against an older nictuned: one that owns
// org.nictune1 but has no RollbackInterfaces method. The stand-in is an
// object in this process on a private dbus-daemon; the client must fall back
// to one Rollback call per interface and give each interface what Rollback
// said, errors included.
#include <gtest/gtest.h>
#include <sdbus-c++/sdbus-c++.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "dbus/client.hpp"
#include "support/dbus.hpp"
#include "support/process.hpp"

namespace nictune::test {
namespace {

namespace fs = std::filesystem;

using Restored =
    std::vector<sdbus::Struct<std::string, std::string, std::string, bool, std::string>>;

// org.nictune1.Manager as nictuned had it before RollbackInterfaces: only
// Rollback matters here. It knows eth-a (rolled back) and refuses anything
// else as an unknown interface, as nictuned does.
class OlderNictuned {
  public:
    explicit OlderNictuned(const std::string& address) {
        conn_ = sdbus::createSessionBusConnectionWithAddress(address);
        object_ = sdbus::createObject(*conn_, "/org/nictune1");
        object_->registerMethod("Rollback")
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
        object_->finishRegistration();
        conn_->requestName("org.nictune1");
        conn_->enterEventLoopAsync();
    }
    ~OlderNictuned() { conn_->leaveEventLoop(); }

    std::vector<std::string> calls() {
        std::lock_guard lock(mu_);
        return calls_;
    }

  private:
    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<sdbus::IObject> object_;
    std::mutex mu_;
    std::vector<std::string> calls_;
};

TEST(ClientCompat, RollbackOfSeveralFallsBackToOneCallEachOnAnOlderNictuned) {
    if (!have_program("dbus-daemon")) GTEST_SKIP() << "needs dbus-daemon for a private bus";
    std::string why;
    auto bus = PrivateBus::start(fs::path(NICTUNE_TEST_DATA) / "tuned" / "bus.conf", &why);
    ASSERT_TRUE(bus) << why;
    OlderNictuned older(bus->address());

    auto client = dbus::Client::connect(bus->address(), &why);
    ASSERT_TRUE(client) << why;
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

}  // namespace
}  // namespace nictune::test
