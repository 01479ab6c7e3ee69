// nictuned: one event loop over the D-Bus connection, the rtnetlink link
// group, the ethtool monitor group and a signalfd. No polling: when nothing
// happens the process sleeps in poll(2) (only the systemd watchdog, when
// configured, wakes it).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nictune::service {

struct DaemonOptions {
    std::filesystem::path config = NICTUNE_SYSCONFDIR "/nictune.toml";
    std::vector<std::filesystem::path> profiles_dirs;  // before the config's and the defaults
    std::optional<std::filesystem::path> state_dir;    // default: config's, then /run/nictune
    std::string bus_address;                           // empty: the system bus
    // node_exporter textfile directory ("" = none); default: the config's,
    // then /var/lib/prometheus/node-exporter (service/metrics.hpp).
    std::optional<std::filesystem::path> metrics_dir;
    bool debug = false;
};

// Runs until SIGTERM/SIGINT; returns the process exit status.
int run_daemon(const DaemonOptions& opts);

}  // namespace nictune::service
