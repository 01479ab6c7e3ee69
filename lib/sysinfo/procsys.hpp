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
    // The value as normalize_sysctl_value() (util/strings.hpp) makes it:
    // surrounding whitespace trimmed, inner runs (tabs in tcp_rmem) one
    // space. Absent if the sysctl does not exist.
    [[nodiscard]] Result<std::optional<std::string>> read(std::string_view name) const;
    Result<void> write(std::string_view name, std::string_view value) const;

  private:
    std::filesystem::path root_;
};

}  // namespace nictune::sysinfo
