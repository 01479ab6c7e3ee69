// Stand-ins for systemd's and NetworkManager's D-Bus APIs on a private bus,
// for the health checks' tests (never on the system bus):
//   nictune_fake_services --address ADDR [--irqbalance STATE|none]
//                         [--nm IFACE,ID,UUID,MTU,RING_RX | --nm none]
// Owns org.freedesktop.systemd1 (Manager.GetUnit, the unit's ActiveState;
// "none": irqbalance.service is not loaded) and, unless "--nm none",
// org.freedesktop.NetworkManager (GetDeviceByIpIface; the device's Managed,
// ActiveConnection and GetAppliedConnection with 802-3-ethernet.mtu and
// ethtool.ring-rx). Prints "ready" once the names are owned; exits 0 on
// SIGTERM or SIGINT.
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <signal.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Args {
    std::string address;
    std::string irqbalance = "active";
    std::vector<std::string> nm;  // IFACE, ID, UUID, MTU, RING_RX; empty: no NetworkManager
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, ',');)
        out.push_back(part);
    return out;
}

bool parse_args(int argc, char** argv, Args& a) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string opt = argv[i];
        const std::string v = argv[i + 1];
        if (opt == "--address")
            a.address = v;
        else if (opt == "--irqbalance")
            a.irqbalance = v;
        else if (opt == "--nm")
            a.nm = v == "none" ? std::vector<std::string>{} : split(v);
        else
            return false;
    }
    return argc % 2 == 1 && !a.address.empty() && (a.nm.empty() || a.nm.size() == 5);
}

using Settings = std::map<std::string, std::map<std::string, sdbus::Variant>>;

int serve(const Args& a, int signal_fd) {
    auto conn = sdbus::createSessionBusConnectionWithAddress(a.address);
    const std::string unit_path = "/org/freedesktop/systemd1/unit/irqbalance_2eservice";
    auto manager = sdbus::createObject(*conn, "/org/freedesktop/systemd1");
    manager->registerMethod("GetUnit")
        .onInterface("org.freedesktop.systemd1.Manager")
        .implementedAs([&](const std::string& name) {
            if (name != "irqbalance.service" || a.irqbalance == "none")
                throw sdbus::Error("org.freedesktop.systemd1.NoSuchUnit",
                                   "Unit " + name + " not loaded.");
            return sdbus::ObjectPath(unit_path);
        });
    manager->finishRegistration();
    auto unit = sdbus::createObject(*conn, unit_path);
    unit->registerProperty("ActiveState")
        .onInterface("org.freedesktop.systemd1.Unit")
        .withGetter([&] { return a.irqbalance; });
    unit->finishRegistration();
    conn->requestName("org.freedesktop.systemd1");

    std::unique_ptr<sdbus::IObject> nm, dev;
    if (!a.nm.empty()) {
        const std::string dev_path = "/org/freedesktop/NetworkManager/Devices/1";
        nm = sdbus::createObject(*conn, "/org/freedesktop/NetworkManager");
        nm->registerMethod("GetDeviceByIpIface")
            .onInterface("org.freedesktop.NetworkManager")
            .implementedAs([&, dev_path](const std::string& iface) {
                if (iface != a.nm[0])
                    throw sdbus::Error("org.freedesktop.NetworkManager.UnknownDevice",
                                       "No device found for the requested iface.");
                return sdbus::ObjectPath(dev_path);
            });
        nm->finishRegistration();
        dev = sdbus::createObject(*conn, dev_path);
        const char* kDev = "org.freedesktop.NetworkManager.Device";
        dev->registerProperty("Managed").onInterface(kDev).withGetter([] { return true; });
        dev->registerProperty("ActiveConnection").onInterface(kDev).withGetter([] {
            return sdbus::ObjectPath("/org/freedesktop/NetworkManager/ActiveConnection/1");
        });
        dev->registerMethod("GetAppliedConnection").onInterface(kDev).implementedAs([&](uint32_t) {
            Settings s;
            s["connection"]["id"] = sdbus::Variant(a.nm[1]);
            s["connection"]["uuid"] = sdbus::Variant(a.nm[2]);
            s["connection"]["type"] = sdbus::Variant(std::string("802-3-ethernet"));
            s["802-3-ethernet"]["mtu"] = sdbus::Variant(static_cast<uint32_t>(std::stoul(a.nm[3])));
            s["ethtool"]["ring-rx"] = sdbus::Variant(static_cast<uint32_t>(std::stoul(a.nm[4])));
            s["ipv4"]["method"] = sdbus::Variant(std::string("auto"));
            return std::tuple<Settings, uint64_t>{s, 1};
        });
        dev->finishRegistration();
        conn->requestName("org.freedesktop.NetworkManager");
    }
    std::cout << "ready" << std::endl;
    while (true) {
        while (conn->processPendingRequest()) {
        }
        const auto data = conn->getEventLoopPollData();
        pollfd fds[2] = {{data.fd, data.events, 0}, {signal_fd, POLLIN, 0}};
        const int n = poll(fds, 2, data.getPollTimeout());
        if (n < 0 && errno != EINTR) return 1;
        if (n > 0 && (fds[1].revents & POLLIN) != 0) return 0;
    }
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parse_args(argc, argv, args)) {
        std::cerr << "usage: nictune_fake_services --address ADDR [--irqbalance STATE|none] "
                     "[--nm IFACE,ID,UUID,MTU,RING_RX|none]\n";
        return 2;
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    if (sigprocmask(SIG_BLOCK, &stop, nullptr) != 0) return 1;
    const int signal_fd = signalfd(-1, &stop, SFD_CLOEXEC);
    if (signal_fd < 0) return 1;
    try {
        return serve(args, signal_fd);
    } catch (const sdbus::Error& e) {
        std::cerr << "fake services: " << e.getName() << ": " << e.getMessage() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "fake services: " << e.what() << "\n";
    }
    return 1;
}
