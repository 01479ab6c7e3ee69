// A stand-in for tuned's D-Bus API on a private bus, for tests:
//   nictune_fake_tuned --address ADDR --profile NAME
// Owns com.redhat.tuned, serves com.redhat.tuned.control on /Tuned the way
// tuned answers (active_profile, switch_profile, profile_changed), prints
// "ready" once the name is owned and exits 0 on SIGTERM or SIGINT.
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <signal.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <string_view>

namespace {

constexpr const char* kName = "com.redhat.tuned";
constexpr const char* kPath = "/Tuned";
constexpr const char* kInterface = "com.redhat.tuned.control";

const std::set<std::string, std::less<>> kKnownProfiles = {
    "balanced",           "latency-performance",    "network-latency",
    "network-throughput", "throughput-performance", "virtual-guest"};

struct Args {
    std::string address;
    std::string profile;  // "" is tuned with no active profile
};

bool parse_args(int argc, char** argv, Args& args) {
    bool have_address = false;
    bool have_profile = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view opt = argv[i];
        if (opt == "--address") {
            args.address = argv[i + 1];
            have_address = true;
        } else if (opt == "--profile") {
            args.profile = argv[i + 1];
            have_profile = true;
        } else {
            return false;
        }
    }
    return argc % 2 == 1 && have_address && have_profile && !args.address.empty();
}

// SIGTERM arrives through a signalfd polled beside the bus, so the stop is
// an ordinary loop exit: the connection closes cleanly and the bus drops the
// name at once, as it does when tuned stops.
int serve(const Args& args, int signal_fd) {
    std::string profile = args.profile;
    auto conn = sdbus::createSessionBusConnectionWithAddress(args.address);
    auto obj = sdbus::createObject(*conn, kPath);
    obj->registerMethod("active_profile").onInterface(kInterface).implementedAs([&] {
        return profile;
    });
    // Asynchronous form so that the reply goes out before profile_changed,
    // the order in which tuned sends them.
    obj->registerMethod("switch_profile")
        .onInterface(kInterface)
        .implementedAs(
            [&](sdbus::Result<sdbus::Struct<bool, std::string>>&& result, const std::string& name) {
                if (!kKnownProfiles.contains(name)) {
                    result.returnResults(sdbus::make_struct(
                        false, "Requested profile '" + name + "' doesn't exist."));
                    return;
                }
                profile = name;
                result.returnResults(sdbus::make_struct(true, std::string("OK")));
                obj->emitSignal("profile_changed")
                    .onInterface(kInterface)
                    .withArguments(profile, true, std::string("OK"));
            });
    obj->registerSignal("profile_changed")
        .onInterface(kInterface)
        .withParameters<std::string, bool, std::string>("profile", "result", "error");
    obj->finishRegistration();
    conn->requestName(kName);
    std::cout << "ready" << std::endl;

    while (true) {
        while (conn->processPendingRequest()) {
        }
        const auto data = conn->getEventLoopPollData();
        pollfd fds[2] = {{data.fd, data.events, 0}, {signal_fd, POLLIN, 0}};
        const int n = poll(fds, 2, data.getPollTimeout());
        if (n < 0 && errno != EINTR) {
            std::cerr << "fake tuned: poll: " << std::strerror(errno) << "\n";
            return 1;
        }
        if (n > 0 && (fds[1].revents & POLLIN) != 0) return 0;
    }
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parse_args(argc, argv, args)) {
        std::cerr << "usage: nictune_fake_tuned --address ADDR --profile NAME\n";
        return 2;
    }
    // Blocked before anything can start a thread, so no thread takes them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    if (sigprocmask(SIG_BLOCK, &stop_signals, nullptr) != 0) {
        std::cerr << "fake tuned: sigprocmask: " << std::strerror(errno) << "\n";
        return 1;
    }
    const int signal_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
    if (signal_fd < 0) {
        std::cerr << "fake tuned: signalfd: " << std::strerror(errno) << "\n";
        return 1;
    }
    try {
        return serve(args, signal_fd);
    } catch (const sdbus::Error& e) {
        std::cerr << "fake tuned: " << e.getName() << ": " << e.getMessage() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "fake tuned: " << e.what() << "\n";
    }
    return 1;
}
