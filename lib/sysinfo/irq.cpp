#include "sysinfo/irq.hpp"

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

Result<std::string> irqbalance_request(const fs::path& socket, std::string_view msg) {
    const std::string context = "irqbalance " + socket.string();
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket.native().size() >= sizeof addr.sun_path)
        return fail(Errc::InvalidArgument, context, "socket path too long");
    std::memcpy(addr.sun_path, socket.c_str(), socket.native().size());
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.get() < 0) return fail_errno(errno, context + ": socket");
    // irqbalance answers from its main loop; never wait longer than this.
    timeval tv{2, 0};
    ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0)
        return fail_errno(errno, context + ": connect");
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
        n = ::sendmsg(s.get(), &mh, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return fail_errno(errno, context + ": send");
    if (static_cast<std::size_t>(n) != msg.size()) return fail(Errc::Io, context, "short send");
    // The answer, up to irqbalance's close (which also says it handled it).
    std::string out;
    char buf[4096];
    while (true) {
        n = ::recv(s.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            if (err == EAGAIN)  // EWOULDBLOCK is the same on Linux
                return fail(Errc::Io, context, "no answer within 2 s");
            return fail_errno(err, context + ": receive");
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > (1U << 20)) return fail(Errc::Io, context, "answer too long");
    }
    return out;
}

IrqFiles::IrqFiles(IrqRoots roots) : roots_(std::move(roots)) {}

std::vector<unsigned> IrqFiles::queue_irqs(std::string_view ifname) const {
    std::vector<unsigned> out;
    auto table = interrupts();
    if (!table) return out;
    auto p = read(ifname, *table);
    if (!p || !*p) return out;
    for (const auto& q : (*p)->irqs)
        out.push_back(q.irq);
    return out;
}

Result<InterruptTable> IrqFiles::interrupts() const {
    return ProcFs(roots_.proc).interrupts();
}

Result<std::optional<IrqPlacement>> IrqFiles::read(std::string_view ifname) const {
    auto table = interrupts();
    if (!table) return std::unexpected(table.error());
    auto out = read(ifname, *table);
    if (out && *out) (*out)->irqbalance = irqbalance();
    return out;
}

Result<std::optional<IrqPlacement>> IrqFiles::read(std::string_view ifname,
                                                   const InterruptTable& table_) const {
    if (!detail::safe_component(ifname))
        return fail(Errc::InvalidArgument, std::string(ifname), "not an interface name");
    const fs::path dev = roots_.sysfs / "class/net" / std::string(ifname) / "device";
    std::error_code ec;
    if (!fs::exists(dev, ec)) return std::optional<IrqPlacement>{};  // veth, dummy, ...
    auto vectors = read_device_irqs(dev);
    if (!vectors.known()) return std::optional<IrqPlacement>{};
    ProcFs proc(roots_.proc);
    const InterruptTable* table = &table_;
    IrqPlacement out;
    for (unsigned irq : *vectors) {
        const auto* line = table->find(irq);
        // Not requested (the interface is down) or released meanwhile.
        if (!line || !is_queue_irq_name(line->name)) continue;
        const auto aff = proc.irq_affinity(irq);
        out.irqs.push_back(QueueIrq{irq, line->name, normalized_list(aff.affinity),
                                    normalized_list(aff.effective)});
    }
    if (out.irqs.empty()) return std::optional<IrqPlacement>{};
    out.online_cpus = CpuSysfs(roots_.sysfs).online().value_or(std::vector<unsigned>{});
    if (auto node = read_value(dev / "numa_node")) {
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

Result<void> IrqFiles::write_affinity(unsigned irq, std::string_view cpulist,
                                      const std::string& context) const {
    auto cpus = parse_cpulist(cpulist);
    if (!cpus || cpus->empty()) return fail(Errc::InvalidArgument, context, "not a CPU list");
    const fs::path path = roots_.proc / "irq" / std::to_string(irq) / "smp_affinity_list";
    auto r = detail::write_kernel_file(
        path, format_cpulist(*cpus), context,
        "IRQ " + std::to_string(irq) + " is gone (no " + path.string() + ")");
    if (!r && r.error().sys_errno == EIO) {
        // irq_can_set_affinity_usr(): a managed IRQ's affinity is the
        // kernel's (the driver spread it at allocation).
        r.error().code = Errc::Unsupported;
        r.error().message = "IRQ " + std::to_string(irq) +
                            " is managed by the kernel (EIO): its affinity cannot be set, left "
                            "as it is";
    }
    return r;
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
