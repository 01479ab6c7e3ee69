#include "sysinfo/irq.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <system_error>

#include "model/cpulist.hpp"
#include "model/irq.hpp"
#include "sysinfo/cpu_power.hpp"
#include "sysinfo/pcie.hpp"
#include "sysinfo/procfs.hpp"
#include "sysinfo/text_file.hpp"
#include "util/strings.hpp"
#include "util/unique_fd.hpp"

namespace nictune::sysinfo {
namespace {

namespace fs = std::filesystem;

using detail::read_value;

// A CPU list as the kernel prints it, in nictune's form (the same ranges).
std::optional<std::string> normalized_list(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    auto cpus = parse_cpulist(*text);
    if (!cpus) return text;
    return format_cpulist(*cpus);
}

// /proc/irq/N/smp_affinity_list or effective_affinity_list, trimmed; nullopt
// when absent or unreadable. These are read 512 times a transaction, so one
// open and, as a rule, one read (detail::read_value_fd: procfs makes the
// file whole at the first read), from offset 0 so that a descriptor just
// written through reads the same (write_affinity).
std::optional<std::string> read_open_irq_file(int fd) {
    const auto f = detail::read_value_fd(fd);
    if (!f.content) return std::nullopt;
    return std::string(detail::trim(*f.content));
}

std::optional<std::string> read_irq_file(int dir, const char* path) {
    const UniqueFd fd(::openat(dir, path, O_RDONLY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    return read_open_irq_file(fd.get());
}

// "N/FILE" relative to the open ROOT/irq (or "ROOT/irq/N/FILE" when it did
// not open), one buffer reused for every IRQ of a read: no allocation per
// IRQ for its paths.
class IrqPath {
  public:
    IrqPath(const UniqueFd& dir, const fs::path& proc)
        : dir_(dir ? dir.get() : AT_FDCWD), path_(dir ? "" : (proc / "irq").string() + "/") {
        base_ = path_.size();
        path_.reserve(base_ + 40);
    }
    [[nodiscard]] int dir() const { return dir_; }
    const char* file(unsigned irq, std::string_view name) {
        path_.resize(base_);
        char num[16];
        const auto [end, ec] = std::to_chars(num, num + sizeof num, irq);
        (void)ec;  // 16 digits hold any unsigned
        path_.append(num, end);
        path_ += '/';
        path_ += name;
        return path_.c_str();
    }

  private:
    int dir_;
    std::string path_;
    std::size_t base_ = 0;
};

std::string describe(std::chrono::milliseconds d) {
    return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s"
                                 : std::to_string(d.count()) + " ms";
}

// The time left until `end`, at least 1 ms while any is left (0: none).
std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point end) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) return std::chrono::milliseconds{0};
    return std::max(std::chrono::milliseconds{1},
                    std::chrono::ceil<std::chrono::milliseconds>(end - now));
}

void set_send_timeout(int fd, std::chrono::milliseconds t) {
    timeval tv{};
    tv.tv_sec = t.count() / 1000;
    tv.tv_usec = (t.count() % 1000) * 1000;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace

bool is_queue_irq_name(std::string_view name) {
    return queue_of_irq_name(name).has_value();
}

std::vector<unsigned> parse_irqbalance_setup(std::string_view reply) {
    // "SLEEP 10 IRQ 34 LOAD 0 DIFF 0 CLASS 0 IRQ 35 ... BANNED 00000000"
    std::vector<unsigned> out;
    std::vector<std::string_view> toks;
    while (!reply.empty()) {
        const auto b = reply.find_first_not_of(" \t\n");
        if (b == std::string_view::npos) break;
        reply.remove_prefix(b);
        const auto e = reply.find_first_of(" \t\n");
        toks.push_back(reply.substr(0, e));
        reply = e == std::string_view::npos ? std::string_view{} : reply.substr(e);
    }
    for (std::size_t i = 0; i + 1 < toks.size(); ++i) {
        if (toks[i] == "BANNED") break;  // a CPU mask follows, not IRQs
        if (toks[i] != "IRQ") continue;
        if (auto n = parse_number<unsigned>(toks[i + 1])) out.push_back(*n);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Result<std::string> irqbalance_request(const fs::path& socket, std::string_view msg,
                                       std::chrono::milliseconds deadline) {
    const std::string context = "irqbalance " + socket.string();
    // irqbalance answers from its main loop; the whole exchange gets
    // `deadline`, however the peer spreads its bytes.
    const auto end = std::chrono::steady_clock::now() + deadline;
    const auto out_of_time = [&] {
        return fail(Errc::Io, context, "no complete answer within " + describe(deadline));
    };
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket.native().size() >= sizeof addr.sun_path)
        return fail(Errc::InvalidArgument, context, "socket path too long");
    std::memcpy(addr.sun_path, socket.c_str(), socket.native().size());
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.get() < 0) return fail_errno(errno, context + ": socket");
    // A unix connect waits only while the listener's backlog is full, and
    // for at most SO_SNDTIMEO; so does the send.
    set_send_timeout(s.get(), left_until(end));
    if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
        const int err = errno;
        if (err == EAGAIN || err == EINPROGRESS) return out_of_time();
        return fail_errno(err, context + ": connect");
    }
    // irqbalance takes requests from uid 0 only and reads the uid from
    // SCM_CREDENTIALS (SO_PASSCRED on its side); send them as its own
    // client (irqbalance-ui) does.
    ucred cred{::getpid(), ::geteuid(), ::getegid()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
    iovec iov{const_cast<char*>(msg.data()), msg.size()};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof(ucred));
    std::memcpy(CMSG_DATA(c), &cred, sizeof cred);
    ssize_t n = -1;
    do {
        const auto left = left_until(end);
        if (left.count() == 0) return out_of_time();
        set_send_timeout(s.get(), left);
        n = ::sendmsg(s.get(), &mh, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        const int err = errno;
        if (err == EAGAIN) return out_of_time();
        return fail_errno(err, context + ": send");
    }
    if (static_cast<std::size_t>(n) != msg.size()) return fail(Errc::Io, context, "short send");
    // The answer, up to irqbalance's close (which also says it handled it).
    std::string out;
    char buf[4096];
    while (true) {
        const auto left = left_until(end);
        if (left.count() == 0) return out_of_time();
        pollfd p{s.get(), POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return fail_errno(errno, context + ": poll");
        if (ready == 0) return out_of_time();
        n = ::recv(s.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0) return fail_errno(errno, context + ": receive");
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > (1U << 20)) return fail(Errc::Io, context, "answer too long");
    }
    return out;
}

IrqFiles::IrqFiles(IrqRoots roots)
    : roots_(std::move(roots)),
      irq_dir_(::open((roots_.proc / "irq").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {}

std::vector<unsigned> IrqFiles::queue_irqs(std::string_view ifname) const {
    std::vector<unsigned> out;
    if (!detail::safe_component(ifname)) return out;
    auto table = interrupts();
    if (!table) return out;
    const fs::path dev = roots_.sysfs / "class/net" / std::string(ifname) / "device";
    auto vectors = read_device_irqs(dev);
    if (!vectors.known()) return out;
    for (unsigned irq : *vectors)
        if (const auto* line = table->find(irq); line && is_queue_irq_name(line->name))
            out.push_back(irq);
    return out;
}

Result<InterruptTable> IrqFiles::interrupts() const {
    return ProcFs(roots_.proc).interrupts();
}

Result<std::optional<IrqPlacement>> IrqFiles::read(std::string_view ifname,
                                                   const InterruptTable& table,
                                                   bool effective) const {
    return read_at(-1, ifname, table, effective);
}

Result<std::optional<IrqPlacement>> IrqFiles::read_at(int ifdir, std::string_view ifname,
                                                      const InterruptTable& table,
                                                      bool effective) const {
    if (!detail::safe_component(ifname))
        return fail(Errc::InvalidArgument, std::string(ifname), "not an interface name");
    // The device directory opened once for msi_irqs and numa_node (one
    // walk of the whole path, as the check that it exists was; one
    // component below the interface's directory).
    const UniqueFd dev =
        ifdir >= 0 ? detail::open_dir_at(ifdir, "device")
                   : detail::open_dir(roots_.sysfs / "class/net" / std::string(ifname) / "device");
    if (!dev) return std::optional<IrqPlacement>{};  // veth, dummy, ...
    auto vectors = read_device_irqs_at(dev.get(), "device");
    if (!vectors.known()) return std::optional<IrqPlacement>{};
    IrqPath path(irq_dir_, roots_.proc);
    IrqPlacement out;
    out.irqs.reserve(vectors->size());
    for (unsigned irq : *vectors) {
        const auto* line = table.find(irq);
        // Not requested (the interface is down) or released meanwhile.
        if (!line || !is_queue_irq_name(line->name)) continue;
        auto& q = out.irqs.emplace_back();
        q.irq = irq;
        q.name = line->name;
        q.affinity =
            normalized_list(read_irq_file(path.dir(), path.file(irq, "smp_affinity_list")));
        if (effective)
            q.effective = normalized_list(
                read_irq_file(path.dir(), path.file(irq, "effective_affinity_list")));
    }
    if (out.irqs.empty()) return std::optional<IrqPlacement>{};
    out.online_cpus = CpuSysfs(roots_.sysfs).online().value_or(std::vector<unsigned>{});
    if (auto node = detail::read_value_at(dev.get(), "numa_node")) {
        if (auto n = parse_number<int>(*node); n && *n >= 0) {
            out.numa_node = *n;
            const auto list = read_value(roots_.sysfs / "devices/system/node" /
                                         ("node" + std::to_string(*n)) / "cpulist");
            if (auto cpus = list ? parse_cpulist(*list) : std::nullopt) {
                for (unsigned c : *cpus)
                    if (std::binary_search(out.online_cpus.begin(), out.online_cpus.end(), c))
                        out.node_cpus.push_back(c);
            }
        }
    }
    return std::optional<IrqPlacement>{std::move(out)};
}

IrqPlacement IrqFiles::read_back(std::span<const unsigned> irqs) const {
    IrqPath path(irq_dir_, roots_.proc);
    IrqPlacement out;
    out.irqs.reserve(irqs.size());
    for (unsigned irq : irqs) {
        auto& q = out.irqs.emplace_back();
        q.irq = irq;
        q.affinity =
            normalized_list(read_irq_file(path.dir(), path.file(irq, "smp_affinity_list")));
    }
    return out;
}

Result<std::optional<std::string>> IrqFiles::write_affinity(unsigned irq, std::string_view cpulist,
                                                            const std::string& context) const {
    auto cpus = parse_cpulist(cpulist);
    if (!cpus || cpus->empty()) return fail(Errc::InvalidArgument, context, "not a CPU list");
    const std::string text = format_cpulist(*cpus);
    IrqPath path(irq_dir_, roots_.proc);
    // As detail::write_kernel_file, relative to ROOT/irq: no O_CREAT (a gone
    // IRQ is never a new file), the value in one write(2). Opened for
    // reading too, for the read-back; write-only when that is refused.
    const char* file = path.file(irq, "smp_affinity_list");
    UniqueFd fd(::openat(path.dir(), file, O_RDWR | O_CLOEXEC));
    bool readable = true;
    if (!fd && errno == EACCES) {
        readable = false;
        fd = UniqueFd(::openat(path.dir(), file, O_WRONLY | O_CLOEXEC));
    }
    if (!fd) {
        const int err = errno;  // read before the message is built
        return detail::open_failure(
            err, context,
            "IRQ " + std::to_string(irq) + " is gone (no " +
                (roots_.proc / "irq" / std::to_string(irq) / "smp_affinity_list").string() + ")");
    }
    if (auto w = detail::write_kernel_value(fd.get(), text, context); !w) {
        if (w.error().sys_errno == EIO) {
            // irq_can_set_affinity_usr(): a managed IRQ's affinity is the
            // kernel's (the driver spread it at allocation).
            w.error().code = Errc::Unsupported;
            w.error().message = "IRQ " + std::to_string(irq) +
                                " is managed by the kernel (EIO): its affinity cannot be set, "
                                "left as it is";
        }
        return std::unexpected(std::move(w.error()));
    }
    if (!readable) return std::optional<std::string>{};
    return normalized_list(read_open_irq_file(fd.get()));
}

std::optional<IrqBalance> IrqFiles::irqbalance() const {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(roots_.proc, ec)) {
        const std::string name = e.path().filename().string();
        auto pid = parse_number<int>(name);
        if (!pid) continue;
        auto comm = read_value(e.path() / "comm");
        if (!comm || *comm != "irqbalance") continue;
        IrqBalance ib;
        ib.pid = *pid;
        ib.socket = (roots_.run / "irqbalance" / ("irqbalance" + name + ".sock")).string();
        if (!fs::exists(ib.socket, ec)) {
            // irqbalance falls back to an autobound abstract socket that no
            // client can find (init_socket).
            ib.problem = "irqbalance (pid " + name + ") has no socket " + ib.socket;
            return ib;
        }
        auto reply = irqbalance_request(ib.socket, "setup");
        if (reply)
            ib.banned = parse_irqbalance_setup(*reply);
        else
            ib.problem = reply.error().str();
        return ib;
    }
    return std::nullopt;
}

Result<void> IrqFiles::ban_for_interface(std::string_view ifname,
                                         const std::vector<unsigned>& wanted,
                                         const std::string& context) const {
    auto ib = irqbalance();
    if (!ib) return fail(Errc::Unsupported, context, "irqbalance is not running (any more)");
    if (!ib->banned) return fail(Errc::Unsupported, context, ib->problem);
    std::vector<unsigned> mine = queue_irqs(ifname);
    mine.insert(mine.end(), wanted.begin(), wanted.end());
    std::vector<unsigned> list;
    for (unsigned b : *ib->banned)
        if (std::find(mine.begin(), mine.end(), b) == mine.end()) list.push_back(b);
    list.insert(list.end(), wanted.begin(), wanted.end());
    const std::string msg = irqbalance_ban_message(list);
    if (msg.size() > kIrqbalanceMessageLimit)
        return fail(Errc::Unsupported, context,
                    "the list of IRQs is longer than the 500 bytes irqbalance reads from its "
                    "socket");
    auto r = irqbalance_request(ib->socket, msg);
    if (!r) {
        Error e = r.error();
        e.context = context + ": " + e.context;
        return std::unexpected(e);
    }
    return {};
}

}  // namespace nictune::sysinfo
