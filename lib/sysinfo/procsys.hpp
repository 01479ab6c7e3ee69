// Sysctls through /proc/sys (dotted names <-> paths). The root is a parameter
// so that tests use fixture trees.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace nictune::sysinfo {

class ProcSys {
  public:
    explicit ProcSys(std::filesystem::path root = "/proc/sys");
    // "net.core.rmem_max" -> root/net/core/rmem_max. Rejects names with '/',
    // "..", empty components or a leading/trailing dot (Errc::InvalidArgument).
    [[nodiscard]] Result<std::filesystem::path> path_of(std::string_view name) const;
    // Value with surrounding whitespace trimmed and inner runs of whitespace
    // (tabs in tcp_rmem) collapsed to one space. Absent if the sysctl does not exist.
    [[nodiscard]] Result<std::optional<std::string>> read(std::string_view name) const;
    Result<void> write(std::string_view name, std::string_view value) const;

  private:
    std::filesystem::path root_;
};

// Collapses whitespace the way read() does, for comparing values.
std::string normalize_sysctl_value(std::string_view v);

}  // namespace nictune::sysinfo
