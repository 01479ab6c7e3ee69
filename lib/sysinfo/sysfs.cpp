#include "sysinfo/sysfs.hpp"

#include <net/if.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include "sysinfo/text_file.hpp"

namespace nictune::sysinfo {
namespace {

namespace fs = std::filesystem;

// Parent directories between a netdev's device and its PCI function: a few
// for virtio and USB, never more than this.
constexpr int kMaxWalk = 16;

bool valid_ifname(std::string_view name) {
    return name.size() < IFNAMSIZ && detail::safe_component(name);
}

std::string lower(std::string s) {
    std::ranges::transform(s, s.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::optional<int> read_numa_node(const fs::path& dir) {
    const auto f = detail::read_text_file(dir / "numa_node");
    if (!f.content) return std::nullopt;
    const std::string_view v = detail::trim(*f.content);
    int node = -1;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), node);
    // -1 is the kernel's "no NUMA affinity" (single node, or firmware did not say).
    if (ec != std::errc() || end != v.data() + v.size() || node < 0) return std::nullopt;
    return node;
}

PciInfo read_pci(const fs::path& dir) {
    PciInfo info;
    // One read of uevent yields the ids, the slot and the modalias.
    if (const auto f = detail::read_text_file(dir / "uevent"); f.content) {
        if (auto v = uevent_value(*f.content, "PCI_ID")) info.id = lower(*v);
        if (auto v = uevent_value(*f.content, "PCI_SUBSYS_ID")) info.subsystem = lower(*v);
        info.slot = uevent_value(*f.content, "PCI_SLOT_NAME");
        info.modalias = uevent_value(*f.content, "MODALIAS");
    }
    if (!info.slot) info.slot = dir.filename().string();
    info.numa_node = read_numa_node(dir);
    std::error_code ec;
    info.sriov_vf = fs::is_symlink(dir / "physfn", ec);
    return info;
}

}  // namespace

Sysfs::Sysfs(std::filesystem::path root) : root_(std::move(root)) {}

bool Sysfs::has_device(std::string_view ifname) const {
    if (!valid_ifname(ifname)) return false;
    std::error_code ec;
    return fs::exists(root_ / "class" / "net" / ifname / "device", ec);
}

std::optional<PciInfo> Sysfs::pci_for(std::string_view ifname) const {
    auto dir = pci_function_dir(root_, ifname);
    if (!dir) return std::nullopt;
    return read_pci(*dir);
}

// sysfs marks a PCI device with a `subsystem` link to .../bus/pci.
bool is_pci_device(const fs::path& dir) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(dir / "subsystem", ec);
    if (ec) return false;
    return target.filename() == "pci" && target.parent_path().filename() == "bus";
}

std::optional<fs::path> pci_function_dir(const fs::path& root, std::string_view ifname) {
    if (!valid_ifname(ifname)) return std::nullopt;
    std::error_code ec;
    fs::path dir = fs::canonical(root / "class" / "net" / ifname / "device", ec);
    if (ec) return std::nullopt;
    const fs::path top = fs::canonical(root, ec);
    if (ec) return std::nullopt;
    for (int i = 0; i < kMaxWalk && dir != top && dir.has_relative_path(); ++i) {
        if (is_pci_device(dir)) return dir;
        dir = dir.parent_path();
    }
    return std::nullopt;
}

std::optional<std::string> Sysfs::module_version(const std::string& driver) {
    if (auto it = module_versions_.find(driver); it != module_versions_.end()) return it->second;
    std::optional<std::string> version;
    if (detail::safe_component(driver)) {
        if (const auto f = detail::read_text_file(root_ / "module" / driver / "version");
            f.content) {
            const std::string_view v = detail::trim(*f.content);
            if (!v.empty()) version = std::string(v);
        }
    }
    module_versions_.emplace(driver, version);
    return version;
}

UniqueFd open_interface_dir(const fs::path& root, std::string_view ifname) {
    if (!valid_ifname(ifname)) return {};
    return detail::open_dir(root / "class" / "net" / ifname);
}

std::optional<std::string> uevent_value(std::string_view uevent, std::string_view key) {
    while (!uevent.empty()) {
        const auto nl = uevent.find('\n');
        std::string_view line = uevent.substr(0, nl);
        uevent = nl == std::string_view::npos ? std::string_view{} : uevent.substr(nl + 1);
        if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == '=')
            return std::string(detail::trim(line.substr(key.size() + 1)));
    }
    return std::nullopt;
}

}  // namespace nictune::sysinfo
