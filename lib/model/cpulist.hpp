// CPU lists as the kernel writes them ("0-3,8,10-11": smp_affinity_list,
// local_cpulist, node cpulist, cpu/online) and back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nictune {

// Sorted, without duplicates. nullopt for anything that is not a CPU list
// (an empty string is the empty list). CPU numbers above kMaxCpu are refused.
inline constexpr unsigned kMaxCpu = 65535;
std::optional<std::vector<unsigned>> parse_cpulist(std::string_view text);
// The kernel's form: ranges joined by commas.
std::string format_cpulist(const std::vector<unsigned>& cpus);

// The kernel's CPU mask form (rps_cpus, xps_cpus, smp_affinity): hex words
// of 32 bits, most significant first, joined by commas ("00000000,0000000f";
// "0" is empty). nullopt for anything else.
std::optional<std::vector<unsigned>> parse_cpumask(std::string_view text);
// The shortest mask the kernel accepts for these CPUs ("f", "1,00000000").
std::string format_cpumask(const std::vector<unsigned>& cpus);

}  // namespace nictune
