// Other tools' configuration that sets what nictune sets, read (never run):
// systemd .link files (the one udev applied, ID_NET_LINK_FILE), ifupdown's
// /etc/network/interfaces (mtu, the ethtool package's options, and ethtool
// or `ip link ... mtu` commands in pre-up/up/post-up lines) and tuned
// profiles (their [net] and [cpu] sections). Each setting found is named by
// nictune's key, with the tool's own key, its value and the line.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/health.hpp"
#include "util/error.hpp"

namespace nictune::sysinfo {

// The [Link] keys of a .link file that overlap nictune's (MTUBytes,
// RxBufferSize, RxChannels, RxFlowControl, UseAdaptiveRxCoalesce,
// RxCoalesceSec, GenericReceiveOffload, ...), values normalised to
// nictune's units ("9K" -> "9216", "50us" -> "50", "yes" -> "true").
// Later assignments win; an empty one resets.
Result<ForeignConfig> parse_link_file(std::string_view text, const std::string& file);

// The settings /etc/network/interfaces (and the files it sources) make for
// `ifname`; `source` and `source-directory` are followed 4 levels deep.
// nullopt: the file says nothing about `ifname`.
Result<std::optional<ForeignConfig>> read_ifupdown(const std::filesystem::path& file,
                                                   const std::string& ifname);
Result<std::optional<ForeignConfig>> parse_ifupdown(std::string_view text, const std::string& file,
                                                    const std::string& ifname);

// read_ifupdown for many interfaces: the file and what it sources are read
// at the first interface asked about and kept, so that one audit of 512
// interfaces opens them once instead of once per interface.
class IfupdownFiles {
  public:
    explicit IfupdownFiles(std::filesystem::path file);
    ~IfupdownFiles();
    IfupdownFiles(IfupdownFiles&&) noexcept;
    IfupdownFiles& operator=(IfupdownFiles&&) noexcept;
    Result<std::optional<ForeignConfig>> settings_for(const std::string& ifname);

    struct Cache;  // the sourced files, by pattern

  private:
    std::filesystem::path file_;
    // The file's text (nullopt: it does not exist), or why it is unreadable.
    std::optional<Result<std::optional<std::string>>> top_;
    std::unique_ptr<Cache> cache_;
};

// An `ethtool ...` or `ip link set ... mtu N` command line: the settings
// it makes on `ifname` (empty when it is about another interface or is
// not one of those commands).
std::vector<ForeignSetting> settings_of_command(std::string_view command,
                                                const std::string& ifname);

// tuned profile `name`: its tuned.conf under each directory of `dirs`
// (/etc/tuned, /usr/lib/tuned), following include= (4 deep). The [net]
// plugin's options (ring, coalesce, channels, pause, features,
// devices) and [cpu]'s governor, energy_perf_bias and force_latency.
struct TunedProfileConf {
    std::string file;
    std::vector<ForeignSetting> net;
    std::vector<ForeignSetting> cpu;
    std::optional<std::string> net_devices;  // [net] devices=
};
Result<std::optional<TunedProfileConf>> read_tuned_profile(
    const std::vector<std::filesystem::path>& dirs, const std::string& name);

}  // namespace nictune::sysinfo
