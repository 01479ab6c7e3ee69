#include "sysinfo/procsys.hpp"

#include "sysinfo/text_file.hpp"
#include "util/strings.hpp"

namespace nictune::sysinfo {
namespace {

std::string quoted(std::string_view s) {
    std::string out = "\"";
    out += s;
    out += '"';
    return out;
}

}  // namespace

ProcSys::ProcSys(std::filesystem::path root) : root_(std::move(root)) {}

Result<std::filesystem::path> ProcSys::path_of(std::string_view name) const {
    auto invalid = [&](const char* why) {
        return fail(Errc::InvalidArgument, "sysctl",
                    "invalid sysctl name " + quoted(name) + ": " + why);
    };
    if (name.empty()) return invalid("empty");
    // '/' is sysctl(8)'s other separator, which would let a name escape the
    // dotted form (and with "..", the tree); only dots are accepted.
    if (name.find('/') != std::string_view::npos) return invalid("contains '/'");
    if (name.find('\0') != std::string_view::npos) return invalid("contains NUL");
    std::filesystem::path p = root_;
    std::string_view rest = name;
    for (;;) {
        const auto dot = rest.find('.');
        const std::string_view part = rest.substr(0, dot);
        if (part.empty()) return invalid("empty component");
        if (!detail::safe_component(part)) return invalid("invalid component");
        p /= part;
        if (dot == std::string_view::npos) break;
        rest = rest.substr(dot + 1);
    }
    return p;
}

Result<std::optional<std::string>> ProcSys::read(std::string_view name) const {
    auto path = path_of(name);
    if (!path) return std::unexpected(std::move(path.error()));
    const auto f = detail::read_text_file(*path);
    if (f.sys_errno != 0) return fail_errno(f.sys_errno, "sysctl." + std::string(name) + ": read");
    if (!f.content) return std::optional<std::string>{};
    return std::optional<std::string>{normalize_sysctl_value(*f.content)};
}

Result<void> ProcSys::write(std::string_view name, std::string_view value) const {
    const std::string context = "sysctl." + std::string(name) + "=" + quoted(value) + ": set";
    auto path = path_of(name);
    if (!path) return std::unexpected(std::move(path.error()));
    // A newline would let one value become several writes to a vector sysctl.
    if (value.find_first_of(std::string_view("\n\0", 2)) != std::string_view::npos)
        return fail(Errc::InvalidArgument, context, "value contains a newline or NUL");
    return detail::write_kernel_file(*path, value, context, "no such sysctl on this system");
}

}  // namespace nictune::sysinfo
