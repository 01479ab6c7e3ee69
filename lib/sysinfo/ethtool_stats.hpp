// The driver's own statistics, as `ethtool -S` prints them: the string set
// ETH_SS_STATS (ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS) and the values
// (ETHTOOL_GSTATS), over the SIOCETHTOOL ioctl: netlink has no per-driver
// statistics message (ETHTOOL_MSG_STATS_GET covers the standard groups only).
//
// The kernel sizes GSTRINGS and GSTATS replies by the count it has now, not
// by the caller's buffer: the replies go into a buffer followed by an
// inaccessible guard page, so a count that grew between the calls ends in
// EFAULT instead of in memory after the buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/health.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune::sysinfo {

// Names from a GSTRINGS payload of `count` entries of ETH_GSTRING_LEN bytes
// (each NUL-padded, possibly unterminated).
std::vector<std::string> parse_gstrings(std::string_view payload, uint32_t count);

class StatsIoctl {
  public:
    static Result<StatsIoctl> open();
    StatsIoctl(StatsIoctl&& other) noexcept;
    StatsIoctl& operator=(StatsIoctl&& other) noexcept;
    ~StatsIoctl();

    // Names and values. Errc::Unsupported when the driver has no statistics
    // (no ETH_SS_STATS set), Errc::NoSuchInterface when it vanished.
    Result<std::vector<Counter>> read(std::string_view ifname);
    // Values only, for a second read of the same names: Errc::Busy when the
    // count is no longer `expected` (channels changed in between).
    Result<std::vector<uint64_t>> values(std::string_view ifname, std::size_t expected);

  private:
    explicit StatsIoctl(int fd) : fd_(fd) {}
    Result<uint32_t> count(std::string_view ifname);
    // read() without the count asked first: GSTRINGS into the buffer as it
    // is, then GSTATS. nullopt when that did not work, for any reason.
    std::optional<std::vector<Counter>> read_in_buffer(std::string_view ifname);
    Result<void> call(std::string_view ifname, void* data, const char* what);
    // A buffer of at least `bytes` followed by a PROT_NONE page.
    Result<unsigned char*> buffer(std::size_t bytes);

    UniqueFd fd_;
    unsigned char* map_ = nullptr;
    std::size_t map_bytes_ = 0;     // mapped, guard page included
    std::size_t usable_bytes_ = 0;  // before the guard page
};

}  // namespace nictune::sysinfo
