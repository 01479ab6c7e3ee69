// nictuned: applies bound NIC profiles at boot and on hotplug, watches for
// drift, and serves org.nictune1 on the system bus. All logic is in
// libnictune (lib/service/).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "service/daemon.hpp"

int main(int argc, char** argv) {
    CLI::App app{"nictuned: keeps network cards tuned (D-Bus service org.nictune1)"};
    app.set_version_flag("--version", std::string("nictuned ") + NICTUNE_VERSION);
    nictune::service::DaemonOptions opts;
    std::string config = opts.config.string();
    std::vector<std::string> profiles_dirs;
    std::string state_dir;
    app.add_option("--config", config, "Bindings file")->type_name("PATH");
    app.add_option("--profiles-dir", profiles_dirs, "Directory searched for profiles first")
        ->type_name("DIR");
    app.add_option("--state-dir", state_dir,
                   "Where original settings are kept (default /run/nictune)")
        ->type_name("DIR");
    app.add_option("--bus-address", opts.bus_address,
                   "D-Bus address to serve on (default: the system bus)")
        ->type_name("ADDR");
    std::optional<std::string> metrics_dir;
    app.add_option("--metrics-dir", metrics_dir,
                   "node_exporter textfile directory for nictune.prom (\"\": none; default "
                   "/var/lib/prometheus/node-exporter)")
        ->type_name("DIR");
    app.add_flag("--debug", opts.debug, "Log debug messages");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    opts.config = config;
    for (const auto& d : profiles_dirs)
        opts.profiles_dirs.emplace_back(d);
    if (!state_dir.empty()) opts.state_dir = state_dir;
    if (metrics_dir) opts.metrics_dir = *metrics_dir;
    return nictune::service::run_daemon(opts);
}
