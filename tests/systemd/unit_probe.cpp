// nictune_unit_probe: a stand-in for nictuned that runs under nictuned.service's
// sandbox and reports, from inside, whether each thing the daemon needs works
// and each thing the unit takes away is refused.
//
//   nictune_unit_probe [--checks] [--iface NAME] [--hidden-pid PID] [--log FILE]
//
// --checks runs the sandbox checks (one "PASS: name" or "FAIL: name: detail"
// line each, to stdout and to --log) before serving; --iface names a throwaway
// interface the checks may change (MTU through rtnetlink, restored after);
// --hidden-pid a process of another user whose /proc visibility is reported.
// Then it serves the bus like the daemon would: it owns org.nictune1 on the
// system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured), answers every method of
// org.nictune1.Manager and org.freedesktop.DBus.Properties on /org/nictune1
// with the string "probe:INTERFACE.MEMBER" (so a caller can tell "delivered"
// from the bus's AccessDenied), sends READY=1, WATCHDOG=1 (sd-event, when
// WATCHDOG_USEC is set), RELOADING=1/READY=1 on SIGHUP ("reload N" is logged)
// and STOPPING=1 on SIGTERM.
//
// Used by tests/systemd/check-units.sh (policy on a private bus) and
// tests/systemd/vm-units.sh (under systemd in the VM harness). It is not the
// daemon: it only proves what the unit allows.

#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>
#include <systemd/sd-hwdb.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

namespace {

struct Options {
    bool checks = false;
    std::string iface;
    std::string hidden_pid;  // a process of another user
    std::string log;
};

Options g_opt;
int g_failures = 0;
int g_reloads = 0;

void out(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (!g_opt.log.empty()) {
        std::ofstream f(g_opt.log, std::ios::app);
        f << line << '\n';
    }
}

void pass(const std::string& name, const std::string& detail = "") {
    out("PASS: " + name + (detail.empty() ? "" : " (" + detail + ")"));
}

void fail(const std::string& name, const std::string& detail) {
    ++g_failures;
    out("FAIL: " + name + ": " + detail);
}

std::string err_name(int e) {
    const char* n = strerrorname_np(e);
    return std::string(n ? n : "E?") + " (" + std::to_string(e) + ")";
}

// Expects an operation to fail with one of the given errnos (0 = success).
void expect_errno(const std::string& name, int got, std::initializer_list<int> want) {
    for (int w : want)
        if (got == w) return pass(name, got == 0 ? "ok" : err_name(got));
    std::string wanted;
    for (int w : want)
        wanted += (wanted.empty() ? "" : " or ") + (w == 0 ? "success" : err_name(w));
    fail(name, "got " + (got == 0 ? std::string("success") : err_name(got)) + ", want " + wanted);
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) return std::nullopt;
    std::stringstream ss;
    ss << f.rdbuf();
    std::string s = ss.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

// 0 on success, else errno.
int write_file(const std::string& path, const std::string& value, int flags = O_WRONLY) {
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    ssize_t n = ::write(fd, value.data(), value.size());
    int e = n < 0 ? errno : 0;
    if (::close(fd) != 0 && e == 0) e = errno;
    return e;
}

std::string status_field(const std::string& field) {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(field + ":", 0) == 0) {
            auto v = line.substr(field.size() + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        }
    return "";
}

// --- netlink ----------------------------------------------------------------

void add_attr(nlmsghdr* nh, unsigned short type, const void* data, std::size_t len) {
    auto* rta = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(nh) + NLMSG_ALIGN(nh->nlmsg_len));
    rta->rta_type = type;
    rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    std::memcpy(RTA_DATA(rta), data, len);
    nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

// Sends one request and reads the first answer: 0 for an ACK or a data
// message, the errno of an NLMSG_ERROR, or the errno of the socket call.
int nl_request(int fd, nlmsghdr* nh) {
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd, nh, nh->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
        return errno;
    alignas(nlmsghdr) char buf[32768];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0) return errno;
    auto* reply = reinterpret_cast<nlmsghdr*>(buf);
    if (!NLMSG_OK(reply, static_cast<unsigned>(n))) return EPROTO;
    if (reply->nlmsg_type == NLMSG_ERROR) {
        auto* e = static_cast<nlmsgerr*>(NLMSG_DATA(reply));
        return -e->error;
    }
    return 0;
}

int set_mtu(int fd, int ifindex, uint32_t mtu) {
    alignas(nlmsghdr) char buf[256] = {};
    auto* nh = reinterpret_cast<nlmsghdr*>(buf);
    nh->nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg));
    nh->nlmsg_type = RTM_NEWLINK;
    nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    nh->nlmsg_seq = 1;
    auto* ifi = static_cast<ifinfomsg*>(NLMSG_DATA(nh));
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    add_attr(nh, IFLA_MTU, &mtu, sizeof mtu);
    return nl_request(fd, nh);
}

int genl_family(int fd, const char* name) {
    alignas(nlmsghdr) char buf[256] = {};
    auto* nh = reinterpret_cast<nlmsghdr*>(buf);
    nh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
    nh->nlmsg_type = GENL_ID_CTRL;
    nh->nlmsg_flags = NLM_F_REQUEST;
    nh->nlmsg_seq = 2;
    auto* gh = static_cast<genlmsghdr*>(NLMSG_DATA(nh));
    gh->cmd = CTRL_CMD_GETFAMILY;
    gh->version = 1;
    add_attr(nh, CTRL_ATTR_FAMILY_NAME, name, std::strlen(name) + 1);
    return nl_request(fd, nh);
}

int socket_errno(int family, int type, int protocol) {
    int fd = ::socket(family, type | SOCK_CLOEXEC, protocol);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
}

// Forks (clone is allowed: threads need it) and reports how the child's exec
// attempt ended: 0 if the program ran, else the errno of the exec call.
template <typename F>
int child_exec_errno(F exec) {
    pid_t pid = ::fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        exec();
        ::_exit(errno == 0 ? 255 : errno);
    }
    int status = 0;
    if (::waitpid(pid, &status, 0) < 0) return -errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 254;
}

// --- the checks -------------------------------------------------------------

void check_identity() {
    if (::getuid() == 0 && ::geteuid() == 0)
        pass("uid 0");
    else
        fail("uid 0", "uid " + std::to_string(::getuid()));
    const std::string want = "0000000000001000";  // CAP_NET_ADMIN only
    for (const char* f : {"CapEff", "CapPrm", "CapBnd"}) {
        auto v = status_field(f);
        if (v == want)
            pass(std::string(f) + " = CAP_NET_ADMIN");
        else
            fail(std::string(f) + " = CAP_NET_ADMIN", v);
    }
    auto amb = status_field("CapAmb");
    if (amb == "0000000000000000")
        pass("no ambient capabilities");
    else
        fail("no ambient capabilities", amb);
    if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
        pass("no_new_privs");
    else
        fail("no_new_privs", "not set");
    auto sc = status_field("Seccomp");
    if (sc == "2")
        pass("seccomp filter");
    else
        fail("seccomp filter", "Seccomp: " + sc);
}

void check_files() {
    // net sysctls: writable (change, read back, restore).
    const std::string backlog = "/proc/sys/net/core/netdev_max_backlog";
    if (auto v = read_file(backlog)) {
        const std::string bumped = std::to_string(std::stol(*v) + 1);
        int e = write_file(backlog, bumped);
        auto after = read_file(backlog);
        int e2 = write_file(backlog, *v);
        if (e == 0 && after == bumped && e2 == 0)
            pass("write net.core.netdev_max_backlog", *v + " -> " + bumped + " -> " + *v);
        else
            fail("write net.core.netdev_max_backlog", "write " + err_name(e) + ", read back " +
                                                          after.value_or("?") + ", restore " +
                                                          err_name(e2));
    } else {
        fail("read net.core.netdev_max_backlog", "unreadable");
    }
    if (auto v = read_file("/proc/sys/net/ipv4/tcp_timestamps"))
        expect_errno("write net.ipv4.tcp_timestamps (same value)",
                     write_file("/proc/sys/net/ipv4/tcp_timestamps", *v), {0});
    // Other sysctls: read-only.
    if (auto v = read_file("/proc/sys/vm/swappiness"))
        expect_errno("vm.swappiness is read-only", write_file("/proc/sys/vm/swappiness", *v),
                     {EROFS});
    else
        fail("read vm.swappiness", "unreadable");
    if (auto v = read_file("/proc/sys/kernel/osrelease"))
        pass("read kernel.osrelease", *v);
    else
        fail("read kernel.osrelease", "unreadable");
    // /sys: the devices' files are writable ([rps] and [xps] write the
    // queues' masks, under /sys/devices), the rest is read-only; /proc/irq
    // is writable ([irq]).
    if (!g_opt.iface.empty()) {
        const std::string q = "/sys/class/net/" + g_opt.iface + "/queues/rx-0/rps_cpus";
        if (auto v = read_file(q))
            expect_errno("write rps_cpus of rx-0 (same value)", write_file(q, *v), {0});
        else
            fail("read " + q, "unreadable");
    }
    bool outside = false;
    for (const char* f : {"/sys/kernel/uevent_helper",
                          "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/power/state"}) {
        if (auto v = read_file(f)) {
            expect_errno(std::string("/sys outside /sys/devices is read-only (") + f + ")",
                         write_file(f, *v), {EROFS});
            outside = true;
            break;
        }
    }
    if (!outside) fail("read a file of /sys outside /sys/devices", "none of the candidates");
    if (auto v = read_file("/proc/irq/default_smp_affinity"))
        expect_errno("write /proc/irq/default_smp_affinity (same value)",
                     write_file("/proc/irq/default_smp_affinity", *v), {0});
    else
        fail("read /proc/irq/default_smp_affinity", "unreadable");
    // The state directory: writable, private, files private.
    struct stat st {};
    if (::stat("/run/nictune", &st) == 0 && (st.st_mode & 07777) == 0700)
        pass("/run/nictune mode 0700");
    else
        fail("/run/nictune mode 0700", "mode " + std::to_string(st.st_mode & 07777));
    int e =
        write_file("/run/nictune/probe-state", "survives restarts\n", O_WRONLY | O_CREAT | O_TRUNC);
    expect_errno("write /run/nictune/probe-state", e, {0});
    if (e == 0 && ::stat("/run/nictune/probe-state", &st) == 0 && (st.st_mode & 0077) == 0)
        pass("UMask=0077 (state file is 0600)");
    else if (e == 0)
        fail("UMask=0077", "state file mode " + std::to_string(st.st_mode & 07777));
    // Everything else read-only or hidden.
    expect_errno("/etc is read-only", write_file("/etc/nictune-probe", "x", O_WRONLY | O_CREAT),
                 {EROFS});
    expect_errno("/usr is read-only", write_file("/usr/nictune-probe", "x", O_WRONLY | O_CREAT),
                 {EROFS});
    expect_errno("/var is read-only", write_file("/var/lib/nictune-probe", "x", O_WRONLY | O_CREAT),
                 {EROFS});
    expect_errno("/tmp is writable (private)",
                 write_file("/tmp/nictune-probe", "x", O_WRONLY | O_CREAT), {0});
    expect_errno("/root is inaccessible", ::access("/root/.", F_OK) == 0 ? 0 : errno,
                 {EACCES, ENOENT});
    if (!g_opt.hidden_pid.empty()) {
        // Informational: hidepid=invisible does not hide anything from gid 0.
        const std::string p = "/proc/" + g_opt.hidden_pid + "/status";
        out("INFO: " + p + " (another user's process) is " +
            (::access(p.c_str(), F_OK) == 0 ? "visible" : "hidden: " + err_name(errno)));
    }
    expect_errno("/dev/kmsg is absent", ::access("/dev/kmsg", F_OK) == 0 ? 0 : errno, {ENOENT});
    expect_errno("/dev/null is there", ::access("/dev/null", R_OK | W_OK) == 0 ? 0 : errno, {0});
    expect_errno("read /etc/os-release", ::access("/etc/os-release", R_OK) == 0 ? 0 : errno, {0});
    sd_hwdb* hwdb = nullptr;
    int r = sd_hwdb_new(&hwdb);
    expect_errno("udev hwdb opens", r < 0 ? -r : 0, {0});
    sd_hwdb_unref(hwdb);
    if (!g_opt.iface.empty()) {
        sd_device* dev = nullptr;
        r = sd_device_new_from_ifname(&dev, g_opt.iface.c_str());
        expect_errno("sd-device " + g_opt.iface, r < 0 ? -r : 0, {0});
        sd_device_unref(dev);
    }
}

void check_network() {
    // rtnetlink: a SET that needs CAP_NET_ADMIN, on the throwaway interface.
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) {
        fail("AF_NETLINK rtnetlink socket", err_name(errno));
    } else {
        pass("AF_NETLINK rtnetlink socket");
        if (!g_opt.iface.empty()) {
            auto idx = read_file("/sys/class/net/" + g_opt.iface + "/ifindex");
            auto mtu = read_file("/sys/class/net/" + g_opt.iface + "/mtu");
            if (!idx || !mtu) {
                fail("rtnetlink MTU set", "no interface " + g_opt.iface);
            } else {
                const int ifindex = std::stoi(*idx);
                const auto old = static_cast<uint32_t>(std::stoul(*mtu));
                const uint32_t want = old == 1400 ? 1300 : 1400;
                int e = set_mtu(fd, ifindex, want);
                auto now = read_file("/sys/class/net/" + g_opt.iface + "/mtu");
                int e2 = set_mtu(fd, ifindex, old);
                if (e == 0 && now == std::to_string(want) && e2 == 0)
                    pass("rtnetlink MTU set (CAP_NET_ADMIN)",
                         g_opt.iface + " " + *mtu + " -> " + std::to_string(want) + " -> " + *mtu);
                else
                    fail("rtnetlink MTU set (CAP_NET_ADMIN)", "set " + err_name(e) + ", now " +
                                                                  now.value_or("?") + ", restore " +
                                                                  err_name(e2));
            }
        }
        ::close(fd);
    }
    fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (fd < 0) {
        fail("AF_NETLINK generic socket", err_name(errno));
    } else {
        expect_errno("genetlink family \"ethtool\" resolves", genl_family(fd, "ethtool"), {0});
        ::close(fd);
    }
    // SIOCETHTOOL GDRVINFO on an AF_UNIX socket.
    if (!g_opt.iface.empty()) {
        fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ethtool_drvinfo info{};
        info.cmd = ETHTOOL_GDRVINFO;
        ifreq ifr{};
        std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", g_opt.iface.c_str());
        ifr.ifr_data = reinterpret_cast<char*>(&info);
        if (fd < 0)
            fail("SIOCETHTOOL GDRVINFO", "AF_UNIX socket: " + err_name(errno));
        else if (::ioctl(fd, SIOCETHTOOL, &ifr) < 0)
            fail("SIOCETHTOOL GDRVINFO", err_name(errno));
        else
            pass("SIOCETHTOOL GDRVINFO", std::string("driver ") + info.driver);
        if (fd >= 0) ::close(fd);
    }
    // No other address family.
    expect_errno("AF_INET refused", socket_errno(AF_INET, SOCK_DGRAM, 0), {EAFNOSUPPORT});
    expect_errno("AF_INET6 refused", socket_errno(AF_INET6, SOCK_DGRAM, 0), {EAFNOSUPPORT});
    expect_errno("AF_PACKET refused", socket_errno(AF_PACKET, SOCK_RAW, 0), {EAFNOSUPPORT});
}

void check_process() {
    std::atomic<bool> ran{false};
    std::thread t([&ran] { ran = true; });
    t.join();
    if (ran)
        pass("threads");
    else
        fail("threads", "thread did not run");
    // No exec: /bin/true is on a noexec mount (NoExecPaths=/), execveat is
    // filtered (seccomp, EPERM).
    int r = child_exec_errno([] { ::execl("/bin/true", "true", static_cast<char*>(nullptr)); });
    expect_errno("execve /bin/true refused", r, {EACCES});
    r = child_exec_errno([] {
        char arg0[] = "true";
        char* argv[] = {arg0, nullptr};
        char* envp[] = {nullptr};
        ::syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp, 0);
    });
    expect_errno("execveat refused (seccomp)", r, {EPERM});
    expect_errno("unshare(CLONE_NEWNET) refused", ::unshare(CLONE_NEWNET) == 0 ? 0 : errno,
                 {EPERM});
    void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    expect_errno("W+X memory refused", p == MAP_FAILED ? errno : 0, {EPERM, EACCES});
    if (p != MAP_FAILED) ::munmap(p, 4096);
    expect_errno("sethostname refused", ::sethostname("x", 1) == 0 ? 0 : errno, {EPERM});
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0)
        pass("watchdog enabled", std::to_string(usec / 1000000) + " s");
    else
        fail("watchdog enabled", "WATCHDOG_USEC not set");
}

// --- serving ----------------------------------------------------------------

int on_method(sd_bus_message* m, void*, sd_bus_error*) {
    const char* iface = sd_bus_message_get_interface(m);
    const char* member = sd_bus_message_get_member(m);
    if (!iface || !member) return 0;
    if (std::strcmp(iface, "org.nictune1.Manager") != 0 &&
        std::strcmp(iface, "org.freedesktop.DBus.Properties") != 0)
        return 0;  // Introspectable, Peer: sd-bus answers
    const std::string reply = std::string("probe:") + iface + "." + member;
    return sd_bus_reply_method_return(m, "s", reply.c_str());
}

int on_sighup(sd_event_source*, const signalfd_siginfo*, void*) {
    sd_notify(0, "RELOADING=1");
    out("reload " + std::to_string(++g_reloads));
    sd_notify(0, "READY=1");
    return 0;
}

int on_sigterm(sd_event_source* s, const signalfd_siginfo*, void*) {
    sd_notify(0, "STOPPING=1");
    out("stopping");
    return sd_event_exit(sd_event_source_get_event(s), 0);
}

int serve() {
    sd_event* ev = nullptr;
    sd_bus* bus = nullptr;
    int r = sd_event_default(&ev);
    if (r >= 0) r = sd_event_set_watchdog(ev, 1);
    if (r >= 0) r = sd_event_add_signal(ev, nullptr, SIGHUP, on_sighup, nullptr);
    if (r >= 0) r = sd_event_add_signal(ev, nullptr, SIGTERM, on_sigterm, nullptr);
    if (r >= 0) r = sd_event_add_signal(ev, nullptr, SIGINT, on_sigterm, nullptr);
    if (r < 0) {
        fail("event loop", err_name(-r));
        return 1;
    }
    r = sd_bus_open_system(&bus);
    if (r >= 0) r = sd_bus_add_object(bus, nullptr, "/org/nictune1", on_method, nullptr);
    if (r >= 0) r = sd_bus_request_name(bus, "org.nictune1", 0);
    if (r < 0) {
        fail("own org.nictune1 on the system bus", err_name(-r));
        sd_bus_unref(bus);
        sd_event_unref(ev);
        return 1;
    }
    pass("own org.nictune1 on the system bus");
    r = sd_bus_attach_event(bus, ev, SD_EVENT_PRIORITY_NORMAL);
    if (r < 0) {
        fail("attach bus", err_name(-r));
        return 1;
    }
    out(g_failures == 0 ? "ready" : "ready with " + std::to_string(g_failures) + " failures");
    sd_notify(0, "READY=1");
    r = sd_event_loop(ev);
    sd_bus_flush_close_unref(bus);
    sd_event_unref(ev);
    return r < 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--checks") {
            g_opt.checks = true;
        } else if (a == "--iface" && i + 1 < argc) {
            g_opt.iface = argv[++i];
        } else if (a == "--hidden-pid" && i + 1 < argc) {
            g_opt.hidden_pid = argv[++i];
        } else if (a == "--log" && i + 1 < argc) {
            g_opt.log = argv[++i];
        } else {
            std::fprintf(stderr,
                         "usage: %s [--checks] [--iface NAME] [--hidden-pid PID] [--log FILE]\n",
                         argv[0]);
            return 2;
        }
    }
    // Signals are taken through sd-event: block them before any thread starts.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, nullptr);

    if (g_opt.checks) {
        out("checks: pid " + std::to_string(::getpid()));
        check_identity();
        check_files();
        check_network();
        check_process();
    }
    return serve();
}
