// nictuned's configuration, /etc/nictune/nictune.toml: which profile goes on
// which NIC. Every error is "file:line:column: message"; a daemon that gets
// a bad file on reload keeps its previous configuration.
//
//   [daemon]                      # optional
//   profiles_dirs = ["/srv/nictune/profiles"]   # searched before /etc and the shipped ones
//   state_dir = "/run/nictune"
//   metrics_dir = "/var/lib/prometheus/node-exporter"   # "" turns the metrics file off
//   placement_check_interval = 10  # seconds between reads of the queue placement (drift)
//
//   [[bind]]
//   profile = "x520-lowlatency"
//   enforce = true                # re-apply when a bound setting drifts (default false)
//   interface = "p4p*"            # name or glob      } one or more of these;
//                                 # (or an alternative name; text form: '\xff*')
//   mac = "90:e2:ba:00:00:01"     # current or permanent MAC } all given keys
//   pci = "0000:03:00.0"          # PCI address       } must match
//   driver = "ixgbe"              # kernel driver     }
//   verify_peer = "10.0.0.2"      # keep the apply only if the path to this peer
//                                 # carries the MTU (nictune-verify@.service checks)
//   min_gbps = 9.0                # ... and iperf3 -s there measures at least this
//   confirm_timeout = 300         # seconds the check may take before a rollback
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/nic_state.hpp"
#include "profile/loader.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace nictune {

struct Binding {
    std::string profile;
    bool enforce = false;
    // Name or glob in nictune's text form, matched on the real bytes of the
    // interface's name and of each of its alternative names (glob_match).
    std::optional<std::string> interface;
    std::optional<std::string> mac;  // lower-case aa:bb:cc:dd:ee:ff
    std::optional<std::string> pci;  // lower-case 0000:03:00.0
    std::optional<std::string> driver;
    // A check on the wire, which nictuned cannot make itself (no IP
    // sockets): the transaction is held open until nictune-verify@.service
    // (`nictunectl confirm`) probes the peer and confirms or aborts it, and
    // rolled back after confirm_timeout seconds without a verdict.
    std::optional<std::string> verify_peer;
    std::optional<double> min_gbps;
    uint32_t confirm_timeout = 300;
    SourceLoc loc;          // the [[bind]] table
    SourceLoc profile_loc;  // the profile value

    // All given keys match (interface matches the name or an alternative
    // name; mac matches the current or the permanent address; pci matches
    // the PCI slot or the bus-info).
    [[nodiscard]] bool matches(const Identity& id) const;
    // "interface p4p* driver ixgbe -> x520-lowlatency (enforce)"
    [[nodiscard]] std::string describe() const;
};

struct DaemonConfig {
    std::filesystem::path file;  // where it came from (empty: defaults)
    std::vector<std::string> profiles_dirs;
    std::optional<std::string> state_dir;
    // node_exporter's textfile directory for nictune.prom; "" = none.
    std::optional<std::string> metrics_dir;
    // Seconds between the watcher's reads of the queue placement ([rps],
    // [xps]), which no notification announces (watch/watcher.hpp).
    uint32_t placement_check_interval = 10;
    std::vector<Binding> bindings;

    // The first binding that matches, or nullptr.
    [[nodiscard]] const Binding* binding_for(const Identity& id) const;
};

// The keys of [daemon] ("daemon") and [[bind]] ("bind"), for the docs.
std::vector<std::string_view> config_keys(std::string_view section);

Result<DaemonConfig> parse_config(std::string_view text, const std::string& file);

// Reads and parses the file (trusted-file rules of the profile loader when
// require_root_owned). A missing file is an empty configuration.
Result<DaemonConfig> load_config(const std::filesystem::path& path, bool require_root_owned);

// The state directory of nictuned and of nictunectl --direct, decided here
// for both so that they share its locks and each other's journals:
// `override` (their --state-dir) when given, else `config`'s state_dir,
// else kDefaultStateDir (also when the configuration does not load, for
// both alike).
inline constexpr const char* kDefaultStateDir = "/run/nictune";
std::filesystem::path state_dir_for(const std::optional<std::filesystem::path>& override,
                                    const Result<DaemonConfig>& config);

// Every bound profile exists and loads; errors point at the binding's
// profile value ("nictune.toml:4:11: profile 'x' ...").
Result<void> validate_bindings(const DaemonConfig& cfg, const profile::Store& store);

}  // namespace nictune
