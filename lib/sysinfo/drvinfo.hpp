// Driver identity through the SIOCETHTOOL ETHTOOL_GDRVINFO ioctl: the only
// interface that reports driver, version, firmware and bus-info (there is no
// netlink message for it).
#pragma once

#include <linux/ethtool.h>

#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune::sysinfo {

struct DrvInfo {
    std::optional<std::string> driver;
    std::optional<std::string> version;
    std::optional<std::string> firmware_version;
    std::optional<std::string> expansion_rom_version;
    std::optional<std::string> bus_info;
};

// Extracts the fixed-size, possibly unterminated char arrays; empty strings
// and "N/A" become absent.
DrvInfo parse_drvinfo(const ethtool_drvinfo& raw);

// An AF_UNIX datagram socket to issue ethtool ioctls on (in the caller's
// network namespace). Owns the descriptor.
class IoctlSocket {
  public:
    static Result<IoctlSocket> open();
    // ENODEV -> Errc::NoSuchInterface; EOPNOTSUPP -> Errc::Unsupported.
    Result<DrvInfo> drvinfo(std::string_view ifname) const;
    // Any other ethtool command: `data` is its struct, `what` names it for
    // the error ("rss: get"). Errors as drvinfo's.
    Result<void> ethtool(std::string_view ifname, void* data, std::string_view what) const;

  private:
    explicit IoctlSocket(int fd) : fd_(fd) {}
    UniqueFd fd_;
};

}  // namespace nictune::sysinfo
