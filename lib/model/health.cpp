#include "model/health.hpp"

#include <charconv>

namespace nictune {

std::optional<double> pcie_gbps(std::optional<double> gts, std::optional<unsigned> width) {
    if (!gts || !width || *gts <= 0 || *width == 0) return std::nullopt;
    // PCIe 1.x and 2.x (2.5 and 5 GT/s) send 10 bits per byte; 3.0 and
    // later (8 GT/s and up) 130 bits per 128.
    const double coding = *gts <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
    return *gts * coding * static_cast<double>(*width);
}

std::optional<ModeSpeed> mode_speed(std::string_view name) {
    uint32_t mbps = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), mbps);
    if (ec != std::errc() || end == name.data() || mbps == 0) return std::nullopt;
    // The kernel's names: "<speed>base<medium>/<Full|Half>".
    const std::string_view rest(end, static_cast<std::size_t>(name.data() + name.size() - end));
    if (!rest.starts_with("base")) return std::nullopt;
    return ModeSpeed{mbps, !rest.ends_with("/Half")};
}

std::vector<Counter> LinkStats::list() const {
    return {{"rx_packets", rx_packets},
            {"tx_packets", tx_packets},
            {"rx_bytes", rx_bytes},
            {"tx_bytes", tx_bytes},
            {"rx_errors", rx_errors},
            {"tx_errors", tx_errors},
            {"rx_dropped", rx_dropped},
            {"tx_dropped", tx_dropped},
            {"multicast", multicast},
            {"collisions", collisions},
            {"rx_length_errors", rx_length_errors},
            {"rx_over_errors", rx_over_errors},
            {"rx_crc_errors", rx_crc_errors},
            {"rx_frame_errors", rx_frame_errors},
            {"rx_fifo_errors", rx_fifo_errors},
            {"rx_missed_errors", rx_missed_errors},
            {"tx_aborted_errors", tx_aborted_errors},
            {"tx_carrier_errors", tx_carrier_errors},
            {"tx_fifo_errors", tx_fifo_errors},
            {"tx_heartbeat_errors", tx_heartbeat_errors},
            {"tx_window_errors", tx_window_errors},
            {"rx_compressed", rx_compressed},
            {"tx_compressed", tx_compressed},
            {"rx_nohandler", rx_nohandler}};
}

}  // namespace nictune
