#include "sysinfo/queues.hpp"

#include <fcntl.h>

#include <cerrno>
#include <charconv>

#include "model/cpulist.hpp"
#include "sysinfo/text_file.hpp"
#include "util/unique_fd.hpp"

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
    return read_at(-1, ifname);
}

Result<std::optional<QueueSet>> QueueFiles::read_at(int ifdir, std::string_view ifname) const {
    if (!detail::safe_component(ifname))
        return fail(Errc::InvalidArgument, std::string(ifname), "not an interface name");
    const auto path = [&] { return root_ / "class/net" / std::string(ifname) / "queues"; };
    // The queues directory is opened once (below the interface's open
    // directory: one component) and its files below it ("rx-0/rps_cpus":
    // two components where the whole path is about ten, the class/net
    // link among them). 512 veth interfaces with one queue each: 19 system
    // calls and 4 whole-path walks per interface before, 13 and none now.
    const UniqueFd fd(ifdir >= 0 ? ::openat(ifdir, "queues", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                 : ::open(path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
        const int err = errno;
        if (err == ENOENT || err == ENOTDIR) return std::optional<QueueSet>{};
        return fail_errno(err, path().string() + ": read");
    }
    QueueSet out;
    std::string file;
    const int err = detail::for_each_entry(fd.get(), [&](std::string_view entry) {
        if (auto n = queue_number(entry, "rx-")) {
            if (*n >= 4096) return;
            if (out.rx.size() <= *n) out.rx.resize(*n + 1);
            file.assign(entry).append("/rps_cpus");
            out.rx[*n].rps_cpus = cpus_of(fd.get(), file.c_str());
            file.assign(entry).append("/rps_flow_cnt");
            out.rx[*n].rps_flow_cnt = number_of(fd.get(), file.c_str());
        } else if (auto t = queue_number(entry, "tx-")) {
            if (*t >= 4096) return;
            if (out.tx.size() <= *t) out.tx.resize(*t + 1);
            file.assign(entry).append("/xps_cpus");
            out.tx[*t].xps_cpus = cpus_of(fd.get(), file.c_str());
        }
    });
    if (err != 0) return fail_errno(err, path().string() + ": read");
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
