#include "sysinfo/drvinfo.hpp"

#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "sysinfo/text_file.hpp"
#include "util/strings.hpp"

namespace nictune::sysinfo {
namespace {

// Drivers fill these arrays with strscpy(), but nothing in the ABI promises
// a terminator: stop at the array's end. "N/A" is what several drivers put
// in for "no firmware"; it means the same as an empty field.
template <std::size_t N>
std::optional<std::string> field(const char (&raw)[N]) {
    const std::string_view v = detail::trim(std::string_view(raw, strnlen(raw, N)));
    if (v.empty() || v == "N/A") return std::nullopt;
    return std::string(v);
}

}  // namespace

DrvInfo parse_drvinfo(const ethtool_drvinfo& raw) {
    DrvInfo d;
    d.driver = field(raw.driver);
    d.version = field(raw.version);
    d.firmware_version = field(raw.fw_version);
    d.expansion_rom_version = field(raw.erom_version);
    d.bus_info = field(raw.bus_info);
    return d;
}

Result<IoctlSocket> IoctlSocket::open() {
    // Any socket reaches the SIOCETHTOOL handler (AF_UNIX falls through to
    // dev_ioctl); AF_UNIX keeps AF_INET out of the daemon's address families.
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail_errno(errno, "ethtool ioctl: socket");
    return IoctlSocket(fd);
}

Result<DrvInfo> IoctlSocket::drvinfo(std::string_view ifname) const {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ || ifname.find('\0') != std::string_view::npos)
        return fail(Errc::InvalidArgument, "driver info",
                    "invalid interface name \"" + escape_name(ifname) + "\"");
    ethtool_drvinfo raw{};
    raw.cmd = ETHTOOL_GDRVINFO;
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
    ifr.ifr_data = reinterpret_cast<char*>(&raw);
    if (::ioctl(fd_.get(), SIOCETHTOOL, &ifr) < 0) {
        const int saved_errno = errno;  // read before the message is built
        return fail_errno(saved_errno, escape_name(ifname) + ": driver info: get", Errc::Kernel);
    }
    return parse_drvinfo(raw);
}

}  // namespace nictune::sysinfo

namespace nictune::sysinfo {

Result<void> IoctlSocket::ethtool(std::string_view ifname, void* data,
                                  std::string_view what) const {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ || ifname.find('\0') != std::string_view::npos)
        return fail(Errc::InvalidArgument, std::string(what),
                    "invalid interface name \"" + escape_name(ifname) + "\"");
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, ifname.data(), ifname.size());
    ifr.ifr_data = static_cast<char*>(data);
    if (::ioctl(fd_.get(), SIOCETHTOOL, &ifr) < 0) {
        const int saved_errno = errno;
        return fail_errno(saved_errno, escape_name(ifname) + ": " + std::string(what),
                          Errc::Kernel);
    }
    return {};
}

}  // namespace nictune::sysinfo
