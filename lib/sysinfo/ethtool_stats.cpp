#include "sysinfo/ethtool_stats.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <utility>

namespace nictune::sysinfo {
namespace {

// mlx5 reports a few thousand; more than this is not a real driver.
constexpr uint32_t kMaxStats = 1U << 16;
// The first buffer's size, before any count is known: 511 names.
constexpr std::size_t kFirstBuffer = 16 * 1024;

std::size_t page_size() {
    static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return p;
}

}  // namespace

std::vector<std::string> parse_gstrings(std::string_view payload, uint32_t count) {
    std::vector<std::string> out;
    out.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        const std::size_t at = std::size_t{i} * ETH_GSTRING_LEN;
        if (at + ETH_GSTRING_LEN > payload.size()) break;
        const char* s = payload.data() + at;
        out.emplace_back(s, strnlen(s, ETH_GSTRING_LEN));
    }
    return out;
}

Result<StatsIoctl> StatsIoctl::open() {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail_errno(errno, "ethtool statistics: socket");
    return StatsIoctl(fd);
}

StatsIoctl::StatsIoctl(StatsIoctl&& o) noexcept
    : fd_(std::move(o.fd_)),
      map_(std::exchange(o.map_, nullptr)),
      map_bytes_(std::exchange(o.map_bytes_, 0)),
      usable_bytes_(std::exchange(o.usable_bytes_, 0)) {}

StatsIoctl& StatsIoctl::operator=(StatsIoctl&& o) noexcept {
    std::swap(fd_, o.fd_);
    std::swap(map_, o.map_);
    std::swap(map_bytes_, o.map_bytes_);
    std::swap(usable_bytes_, o.usable_bytes_);
    return *this;
}

StatsIoctl::~StatsIoctl() {
    if (map_) ::munmap(map_, map_bytes_);
}

Result<unsigned char*> StatsIoctl::buffer(std::size_t bytes) {
    if (bytes <= usable_bytes_) return map_;
    const std::size_t page = page_size();
    const std::size_t usable = (bytes + page - 1) / page * page;
    void* m =
        ::mmap(nullptr, usable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return fail_errno(errno, "ethtool statistics: buffer");
    auto* p = static_cast<unsigned char*>(m);
    if (::mprotect(p + usable, page, PROT_NONE) != 0) {
        const int err = errno;
        ::munmap(m, usable + page);
        return fail_errno(err, "ethtool statistics: guard page");
    }
    if (map_) ::munmap(map_, map_bytes_);
    map_ = p;
    map_bytes_ = usable + page;
    usable_bytes_ = usable;
    return map_;
}

Result<void> StatsIoctl::call(std::string_view ifname, void* data, const char* what) {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ)
        return fail(Errc::InvalidArgument, "ethtool statistics",
                    "invalid interface name \"" + std::string(ifname) + "\"");
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
    ifr.ifr_data = static_cast<char*>(data);
    if (::ioctl(fd_.get(), SIOCETHTOOL, &ifr) < 0) {
        const int err = errno;
        auto e = fail_errno(err, std::string(ifname) + ": " + what, Errc::Kernel);
        if (err == ENODEV) e.error().code = Errc::NoSuchInterface;
        if (err == EOPNOTSUPP) e.error().code = Errc::Unsupported;
        return e;
    }
    return {};
}

Result<uint32_t> StatsIoctl::count(std::string_view ifname) {
    // ethtool_sset_info ends in a flexible array: one u32 follows it.
    alignas(ethtool_sset_info) unsigned char raw[sizeof(ethtool_sset_info) + sizeof(uint32_t)]{};
    ethtool_sset_info hdr{};
    hdr.cmd = ETHTOOL_GSSET_INFO;
    hdr.sset_mask = 1ULL << ETH_SS_STATS;
    std::memcpy(raw, &hdr, sizeof hdr);
    if (auto r = call(ifname, raw, "statistics count (ETHTOOL_GSSET_INFO)"); !r)
        return std::unexpected(r.error());
    std::memcpy(&hdr, raw, sizeof hdr);
    uint32_t n = 0;
    std::memcpy(&n, raw + sizeof hdr, sizeof n);
    if ((hdr.sset_mask & (1ULL << ETH_SS_STATS)) == 0)
        return fail(Errc::Unsupported, std::string(ifname), "the driver has no statistics");
    if (n > kMaxStats)
        return fail(Errc::Kernel, std::string(ifname),
                    "implausible statistics count " + std::to_string(n));
    return n;
}

Result<std::vector<uint64_t>> StatsIoctl::values(std::string_view ifname, std::size_t expected) {
    const std::size_t bytes = sizeof(ethtool_stats) + expected * sizeof(uint64_t);
    auto buf = buffer(bytes);
    if (!buf) return std::unexpected(buf.error());
    auto* st = reinterpret_cast<ethtool_stats*>(*buf);
    std::memset(st, 0, sizeof *st);
    st->cmd = ETHTOOL_GSTATS;
    st->n_stats = static_cast<uint32_t>(expected);
    auto r = call(ifname, st, "statistics (ETHTOOL_GSTATS)");
    if (!r) {
        if (r.error().sys_errno == EFAULT)
            return fail(Errc::Busy, std::string(ifname),
                        "the number of statistics changed while they were read");
        return std::unexpected(r.error());
    }
    if (st->n_stats != expected)
        return fail(Errc::Busy, std::string(ifname),
                    "the number of statistics changed while they were read");
    std::vector<uint64_t> out(expected);
    if (expected) std::memcpy(out.data(), *buf + sizeof(ethtool_stats), expected * 8);
    return out;
}

std::optional<std::vector<Counter>> StatsIoctl::read_in_buffer(std::string_view ifname) {
    auto buf = buffer(std::max(usable_bytes_, kFirstBuffer));
    if (!buf) return std::nullopt;
    auto* gs = reinterpret_cast<ethtool_gstrings*>(*buf);
    std::memset(gs, 0, sizeof *gs);
    gs->cmd = ETHTOOL_GSTRINGS;
    gs->string_set = ETH_SS_STATS;
    if (!call(ifname, gs, "statistics names (ETHTOOL_GSTRINGS)")) return std::nullopt;
    const uint32_t n = gs->len;
    if (n > kMaxStats ||
        sizeof(ethtool_gstrings) + std::size_t{n} * ETH_GSTRING_LEN > usable_bytes_)
        return std::nullopt;
    auto names = parse_gstrings(
        std::string_view(reinterpret_cast<const char*>(*buf + sizeof(ethtool_gstrings)),
                         std::size_t{n} * ETH_GSTRING_LEN),
        n);
    auto vals = values(ifname, n);
    if (!vals) return std::nullopt;
    std::vector<Counter> out;
    out.reserve(n);
    for (std::size_t i = 0; i < names.size(); ++i)
        out.push_back(Counter{std::move(names[i]), (*vals)[i]});
    return out;
}

Result<std::vector<Counter>> StatsIoctl::read(std::string_view ifname) {
    // GSTRINGS says how many names it wrote, so while they fit the buffer
    // of the reads before (a guard page makes a longer answer EFAULT, not
    // an overrun) no GSSET_INFO has to ask first: two ioctls where there
    // were three, 512 times an audit of 512 veth interfaces.
    if (auto quick = read_in_buffer(ifname)) return std::move(*quick);
    // Otherwise (a longer list, a driver without statistics, a vanished
    // interface) the count first, which also gives every error its own
    // words. Twice at most: a count that changes between the calls (a channel
    // change re-creates the per-queue counters) gets one more try.
    for (int attempt = 0;; ++attempt) {
        auto n = count(ifname);
        if (!n) return std::unexpected(n.error());
        const std::size_t bytes = sizeof(ethtool_gstrings) + std::size_t{*n} * ETH_GSTRING_LEN;
        auto buf = buffer(std::max(bytes, sizeof(ethtool_stats) + std::size_t{*n} * 8));
        if (!buf) return std::unexpected(buf.error());
        auto* gs = reinterpret_cast<ethtool_gstrings*>(*buf);
        std::memset(gs, 0, sizeof *gs);
        gs->cmd = ETHTOOL_GSTRINGS;
        gs->string_set = ETH_SS_STATS;
        gs->len = *n;
        auto r = call(ifname, gs, "statistics names (ETHTOOL_GSTRINGS)");
        const bool grew = (!r && r.error().sys_errno == EFAULT) || (r && gs->len != *n);
        if (!r && !grew) return std::unexpected(r.error());
        if (grew) {
            if (attempt == 0) continue;
            return fail(Errc::Busy, std::string(ifname),
                        "the number of statistics changed while they were read");
        }
        auto names = parse_gstrings(
            std::string_view(reinterpret_cast<const char*>(*buf + sizeof(ethtool_gstrings)),
                             std::size_t{*n} * ETH_GSTRING_LEN),
            *n);
        auto vals = values(ifname, *n);
        if (!vals) {
            if (vals.error().code == Errc::Busy && attempt == 0) continue;
            return std::unexpected(vals.error());
        }
        std::vector<Counter> out;
        out.reserve(*n);
        for (std::size_t i = 0; i < names.size(); ++i)
            out.push_back(Counter{std::move(names[i]), (*vals)[i]});
        return out;
    }
}

}  // namespace nictune::sysinfo
