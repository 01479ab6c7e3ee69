#include "sysinfo/pcie.hpp"

#include <fcntl.h>

#include <algorithm>
#include <charconv>
#include <system_error>

#include "model/cpulist.hpp"
#include "sysinfo/sysfs.hpp"
#include "sysinfo/text_file.hpp"
#include "util/unique_fd.hpp"

namespace nictune::sysinfo {
namespace {

namespace fs = std::filesystem;

std::string read_trimmed(const fs::path& p) {
    const auto f = detail::read_text_file(p, 4096);
    if (!f.content) return {};
    return std::string(detail::trim(*f.content));
}

// "0000:03:00.1" -> "0000:03:00." (the device part, functions share it).
std::optional<std::string> device_prefix(const std::string& function) {
    const auto dot = function.rfind('.');
    if (dot == std::string::npos || dot + 1 >= function.size()) return std::nullopt;
    return function.substr(0, dot + 1);
}

bool is_network_function(const fs::path& dir) {
    // PCI class 0x02xxxx: network controller.
    const std::string cls = read_trimmed(dir / "class");
    if (cls.starts_with("0x02")) return true;
    std::error_code ec;
    return fs::is_directory(dir / "net", ec);
}

std::vector<std::string> netdevs_of(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "net", ec))
        out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string end_text(const PcieEnd& e) {
    return "speed " + (e.current_speed_text.empty() ? "n/a" : e.current_speed_text) + ", width " +
           (e.current_width ? std::to_string(*e.current_width) : std::string("n/a"));
}

}  // namespace

std::optional<double> parse_link_speed(std::string_view text) {
    text = detail::trim(text);
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end == text.data() || !(v > 0) || v > 1000) return std::nullopt;
    std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
    rest = detail::trim(rest);
    if (!rest.starts_with("GT/s")) return std::nullopt;
    return v;
}

std::optional<unsigned> parse_link_width(std::string_view text) {
    text = detail::trim(text);
    // Some kernels print the width with an "x" ("x8").
    if (text.starts_with('x')) text.remove_prefix(1);
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    // 0: link down or no registers; 255: the register read as all ones.
    if (v == 0 || v > 32) return std::nullopt;
    return v;
}

PcieEnd read_pcie_end(const fs::path& dir) {
    PcieEnd e;
    e.current_speed_text = read_trimmed(dir / "current_link_speed");
    e.max_speed_text = read_trimmed(dir / "max_link_speed");
    e.current_gts = parse_link_speed(e.current_speed_text);
    e.max_gts = parse_link_speed(e.max_speed_text);
    e.current_width = parse_link_width(read_trimmed(dir / "current_link_width"));
    e.max_width = parse_link_width(read_trimmed(dir / "max_link_width"));
    return e;
}

Known<PcieLink> read_pcie(const fs::path& dir) {
    PcieLink link;
    link.function = dir.filename().string();
    std::error_code ec;
    if (!fs::exists(dir / "current_link_speed", ec))
        return Known<PcieLink>::none(link.function +
                                     " has no PCIe link registers in sysfs (a virtual or "
                                     "conventional PCI device)");
    link.link = read_pcie_end(dir);
    if (!link.link.current_gts && !link.link.current_width)
        return Known<PcieLink>::none(link.function + " reports no link (" + end_text(link.link) +
                                     "): no link registers, e.g. an integrated endpoint");
    const fs::path parent = dir.parent_path();
    if (is_pci_device(parent) && fs::exists(parent / "current_link_speed", ec)) {
        link.upstream_port = parent.filename().string();
        link.upstream = read_pcie_end(parent);
    }
    if (auto prefix = device_prefix(link.function)) {
        for (const auto& e : fs::directory_iterator(parent, ec)) {
            const std::string name = e.path().filename().string();
            if (!name.starts_with(*prefix) || !is_pci_device(e.path())) continue;
            if (name != link.function && !is_network_function(e.path())) continue;
            // An SR-IOV VF sits on another device number; only PFs share here.
            link.port_functions.push_back(name);
            for (auto& n : netdevs_of(e.path()))
                link.port_interfaces.push_back(std::move(n));
        }
        std::sort(link.port_functions.begin(), link.port_functions.end());
        std::sort(link.port_interfaces.begin(), link.port_interfaces.end());
    }
    if (link.port_functions.empty()) link.port_functions.push_back(link.function);
    return Known<PcieLink>::of(std::move(link));
}

Known<NumaInfo> read_numa(const fs::path& dir, const std::vector<unsigned>& online) {
    NumaInfo n;
    const std::string node = read_trimmed(dir / "numa_node");
    int v = -1;
    if (!node.empty()) {
        const auto [end, ec] = std::from_chars(node.data(), node.data() + node.size(), v);
        if (ec == std::errc() && end == node.data() + node.size() && v >= 0) n.node = v;
    }
    n.local_cpulist = read_trimmed(dir / "local_cpulist");
    auto cpus = parse_cpulist(n.local_cpulist);
    if (n.local_cpulist.empty() || !cpus)
        return Known<NumaInfo>::none(dir.filename().string() + ": no readable local_cpulist");
    n.local_cpus = static_cast<unsigned>(cpus->size());
    n.online_cpus = static_cast<unsigned>(online.size());
    return Known<NumaInfo>::of(std::move(n));
}

Known<std::vector<unsigned>> read_device_irqs(const fs::path& dir) {
    const UniqueFd fd = detail::open_dir(dir);
    return read_device_irqs_at(fd ? fd.get() : -1, dir.filename().string());
}

Known<std::vector<unsigned>> read_device_irqs_at(int dir, const std::string& name) {
    std::vector<unsigned> irqs;
    // The names as getdents64 gives them, not fs::directory_iterator: a NIC
    // has hundreds of vectors, and the iterator builds a path (and a string
    // of its name) per entry where the name alone is a number to parse.
    if (const UniqueFd fd(::openat(dir, "msi_irqs", O_RDONLY | O_DIRECTORY | O_CLOEXEC)); fd) {
        (void)detail::for_each_entry(fd.get(), [&](std::string_view entry) {
            unsigned v = 0;
            const auto [end, err] = std::from_chars(entry.data(), entry.data() + entry.size(), v);
            if (err == std::errc() && end == entry.data() + entry.size()) irqs.push_back(v);
        });
    }
    if (!irqs.empty()) {
        std::sort(irqs.begin(), irqs.end());
        return Known<std::vector<unsigned>>::of(std::move(irqs));
    }
    const std::string legacy = detail::read_value_at(dir, "irq").value_or("");
    unsigned v = 0;
    const auto [end, err] = std::from_chars(legacy.data(), legacy.data() + legacy.size(), v);
    if (!legacy.empty() && err == std::errc() && end == legacy.data() + legacy.size() && v > 0)
        return Known<std::vector<unsigned>>::of({v});
    return Known<std::vector<unsigned>>::none(name +
                                              ": no MSI vectors (msi_irqs) and no legacy irq");
}

}  // namespace nictune::sysinfo
