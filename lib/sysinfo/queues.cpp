#include "sysinfo/queues.hpp"

#include <dirent.h>

#include <cerrno>
#include <charconv>
#include <memory>

#include "model/cpulist.hpp"
#include "sysinfo/text_file.hpp"

namespace nictune::sysinfo {
namespace {

// "rx-12" -> 12 for prefix "rx-".
std::optional<std::size_t> queue_number(std::string_view entry, std::string_view prefix) {
    if (!entry.starts_with(prefix)) return std::nullopt;
    entry.remove_prefix(prefix.size());
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), n);
    if (ec != std::errc() || end != entry.data() + entry.size() || entry.empty())
        return std::nullopt;
    return n;
}

std::optional<std::string> cpus_of(int queue_dir, const char* file) {
    const auto f = detail::read_value_file_at(queue_dir, file);
    if (!f.content) return std::nullopt;
    auto cpus = parse_cpumask(detail::trim(*f.content));
    if (!cpus) return std::nullopt;
    return format_cpulist(*cpus);
}

std::optional<uint64_t> number_of(int queue_dir, const char* file) {
    const auto f = detail::read_value_file_at(queue_dir, file);
    if (!f.content) return std::nullopt;
    const auto t = detail::trim(*f.content);
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty()) return std::nullopt;
    return v;
}

}  // namespace

QueueFiles::QueueFiles(std::filesystem::path sysfs_root) : root_(std::move(sysfs_root)) {}

Result<std::optional<QueueSet>> QueueFiles::read(std::string_view ifname) const {
    if (!detail::safe_component(ifname))
        return fail(Errc::InvalidArgument, std::string(ifname), "not an interface name");
    const auto dir = root_ / "class/net" / std::string(ifname) / "queues";
    // The queues directory is walked to once; its files are opened below
    // it ("rx-0/rps_cpus": two components where the whole path is about
    // ten, the class/net link among them). 512 veth interfaces: 19 system
    // calls and 4 whole-path walks per interface before, 14 and 1 now.
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR) return std::optional<QueueSet>{};
        return fail_errno(errno, dir.string() + ": read");
    }
    const std::unique_ptr<DIR, int (*)(DIR*)> owner(d, ::closedir);
    const int fd = ::dirfd(d);
    QueueSet out;
    std::string file;
    while (true) {
        errno = 0;
        const dirent* e = ::readdir(d);
        if (!e) {
            if (errno != 0) return fail_errno(errno, dir.string() + ": read");
            break;
        }
        const std::string_view entry = e->d_name;
        if (auto n = queue_number(entry, "rx-")) {
            if (*n >= 4096) continue;
            if (out.rx.size() <= *n) out.rx.resize(*n + 1);
            file.assign(entry).append("/rps_cpus");
            out.rx[*n].rps_cpus = cpus_of(fd, file.c_str());
            file.assign(entry).append("/rps_flow_cnt");
            out.rx[*n].rps_flow_cnt = number_of(fd, file.c_str());
        } else if (auto t = queue_number(entry, "tx-")) {
            if (*t >= 4096) continue;
            if (out.tx.size() <= *t) out.tx.resize(*t + 1);
            file.assign(entry).append("/xps_cpus");
            out.tx[*t].xps_cpus = cpus_of(fd, file.c_str());
        }
    }
    return std::optional<QueueSet>{std::move(out)};
}

Result<void> QueueFiles::write_file(std::string_view ifname, const std::string& queue_dir,
                                    const char* file, const std::string& text,
                                    const std::string& context) const {
    if (!detail::safe_component(ifname))
        return fail(Errc::InvalidArgument, context, "not an interface name");
    const auto path = root_ / "class/net" / std::string(ifname) / "queues" / queue_dir / file;
    return detail::write_kernel_file(
        path, text, context,
        "no " + queue_dir + "/" + file + " (the queue is gone, or the kernel has no RPS/XPS)");
}

Result<void> QueueFiles::write_cpus(std::string_view ifname, const std::string& name, bool rx,
                                    std::size_t queue, std::string_view cpulist) const {
    const std::string q = (rx ? "rx-" : "tx-") + std::to_string(queue);
    const std::string context =
        name + ": " + (rx ? "rps." : "xps.") + q + ".cpus=\"" + std::string(cpulist) + "\": set";
    auto cpus = parse_cpulist(cpulist);
    if (!cpus) return fail(Errc::InvalidArgument, context, "not a CPU list");
    return write_file(ifname, q, rx ? "rps_cpus" : "xps_cpus", format_cpumask(*cpus), context);
}

Result<void> QueueFiles::write_flow_cnt(std::string_view ifname, const std::string& name,
                                        std::size_t queue, uint64_t count) const {
    const std::string q = "rx-" + std::to_string(queue);
    return write_file(ifname, q, "rps_flow_cnt", std::to_string(count),
                      name + ": rps." + q + ".flow_cnt=" + std::to_string(count) + ": set");
}

}  // namespace nictune::sysinfo
