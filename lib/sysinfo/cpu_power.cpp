#include "sysinfo/cpu_power.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <system_error>

#include "model/cpulist.hpp"
#include "sysinfo/text_file.hpp"
#include "util/strings.hpp"

namespace nictune::sysinfo {
namespace {

namespace fs = std::filesystem;

using detail::read_value;

}  // namespace

CpuSysfs::CpuSysfs(fs::path sysfs_root)
    : cpu_dir_(sysfs_root / "devices" / "system" / "cpu"),
      node_dir_(sysfs_root / "devices" / "system" / "node") {}

std::optional<std::vector<unsigned>> CpuSysfs::online() const {
    auto v = read_value(cpu_dir_ / "online");
    if (!v) return std::nullopt;
    return parse_cpulist(*v);
}

CpuPower CpuSysfs::power(unsigned cpu) const {
    CpuPower p;
    p.cpu = cpu;
    const fs::path dir = cpu_dir_ / ("cpu" + std::to_string(cpu));
    p.governor = read_value(dir / "cpufreq" / "scaling_governor");
    p.epp = read_value(dir / "cpufreq" / "energy_performance_preference");
    p.driver = read_value(dir / "cpufreq" / "scaling_driver");
    for (unsigned s = 0; s < 32; ++s) {
        const fs::path sd = dir / "cpuidle" / ("state" + std::to_string(s));
        auto name = read_value(sd / "name");
        if (!name) break;
        CpuIdleState st;
        st.name = *name;
        if (auto l = read_value(sd / "latency"))
            st.latency_us = parse_number<uint64_t>(*l).value_or(0);
        if (auto d = read_value(sd / "disable")) st.disabled = *d != "0";
        p.idle.push_back(std::move(st));
    }
    return p;
}

std::map<unsigned, int> CpuSysfs::cpu_nodes() const {
    std::map<unsigned, int> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(node_dir_, ec)) {
        const std::string name = e.path().filename().string();
        if (!name.starts_with("node")) continue;
        auto n = parse_number<int>(std::string_view(name).substr(4));
        if (!n) continue;
        auto list = read_value(e.path() / "cpulist");
        if (!list) continue;
        if (auto cpus = parse_cpulist(*list))
            for (unsigned c : *cpus)
                out[c] = *n;
    }
    return out;
}

}  // namespace nictune::sysinfo
