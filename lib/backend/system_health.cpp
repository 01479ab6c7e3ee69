#include "backend/system_health.hpp"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <climits>
#include <map>
#include <system_error>
#include <unordered_map>

#include "ethnl/codecs.hpp"
#include "ethnl/socket.hpp"
#include "model/cpulist.hpp"
#include "rtnl/stats.hpp"
#include "services/network_manager.hpp"
#include "services/systemd1.hpp"
#include "sysinfo/cpu_power.hpp"
#include "sysinfo/ethtool_stats.hpp"
#include "sysinfo/foreign_config.hpp"
#include "sysinfo/pcie.hpp"
#include "sysinfo/procfs.hpp"
#include "sysinfo/procsys.hpp"
#include "sysinfo/sysfs.hpp"
#include "sysinfo/text_file.hpp"
#include "sysinfo/udev_device.hpp"
#include "util/unique_fd.hpp"

namespace nictune {
namespace {

namespace fs = std::filesystem;

std::optional<uint64_t> u64(std::string_view s) {
    uint64_t v = 0;
    s = sysinfo::detail::trim(s);
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// "4096 131072 6291456" -> 6291456.
std::optional<uint64_t> third(const std::optional<std::string>& v) {
    if (!v) return std::nullopt;
    const auto sp = v->rfind(' ');
    if (sp == std::string::npos) return std::nullopt;
    return u64(std::string_view(*v).substr(sp + 1));
}

bool is_virtual(const NicState& n) {
    return !n.id.physical;
}

}  // namespace

std::vector<std::string> bit_names(const std::vector<uint32_t>& bits, const FeatureNames& names) {
    std::vector<std::string> out;
    // The set bits alone, word by word: looking at every name of three
    // bitsets of some hundred link modes per interface (mostly empty:
    // veth's are) was 1.6 % of the user time of an audit of 512 veth.
    for (std::size_t w = 0; w < bits.size() && w * 32 < names.size(); ++w)
        for (uint32_t word = bits[w]; word != 0; word &= word - 1) {
            const std::size_t i = w * 32 + static_cast<std::size_t>(std::countr_zero(word));
            if (i < names.size() && !names[i].empty()) out.push_back(names[i]);
        }
    return out;
}

struct SystemHealthReader::Impl {
    HealthOptions opts;
    sysinfo::ProcFs proc;
    sysinfo::ProcSys procsys;
    sysinfo::CpuSysfs cpu;
    sysinfo::ModuleFiles modules;
    std::unique_ptr<ethnl::Socket> eth;
    std::unique_ptr<rtnl::StatsSocket> stats;
    std::optional<sysinfo::StatsIoctl> ioctl;
    std::string eth_error, stats_error, ioctl_error;
    std::map<std::string, Known<DriverFiles>> driver_cache;

    explicit Impl(HealthOptions o)
        : opts(std::move(o)),
          proc(opts.proc_root),
          procsys(opts.proc_root / "sys"),
          cpu(opts.sysfs_root),
          modules([&] {
              auto k = opts.kmod;
              if (k.sysfs_root == "/sys") k.sysfs_root = opts.sysfs_root;
              return k;
          }()) {
        if (auto s = ethnl::Socket::open())
            eth = std::move(*s);
        else
            eth_error = s.error().str();
        if (auto s = rtnl::StatsSocket::open())
            stats = std::move(*s);
        else
            stats_error = s.error().str();
        if (auto s = sysinfo::StatsIoctl::open())
            ioctl.emplace(std::move(*s));
        else
            ioctl_error = s.error().str();
    }

    // ---- once per read

    // What one read opens once for all its interfaces. sysfs: each
    // interface's directory is opened below class/net, and its files below
    // that, where a whole path per file walks every component through
    // kernfs (and the class/net link) again: 512 veth interfaces spent more
    // of an audit in those walks than in anything else. udev's records and
    // ifupdown's files likewise: a look-up by one name, one read.
    struct PerRead {
        UniqueFd class_net;
        UniqueFd udev_data;
        sysinfo::IfupdownFiles ifupdown;
        std::unique_ptr<services::NmClient> nm;
    };
    PerRead per_read(bool foreign) {
        PerRead r{sysinfo::detail::open_dir(opts.sysfs_root / "class" / "net"),
                  foreign && opts.udev ? sysinfo::detail::open_dir(opts.udev_data_dir) : UniqueFd{},
                  sysinfo::IfupdownFiles(opts.ifupdown_file), nullptr};
        if (foreign) r.nm = services::NmClient::open(opts.bus);
        return r;
    }
    // The interface's directory below class/net; empty when it has none.
    static UniqueFd interface_dir(const PerRead& r, const std::string& name) {
        if (!sysinfo::detail::safe_component(name)) return {};
        return sysinfo::detail::open_dir_at(r.class_net.get(), name.c_str());
    }
    // sysfs carrier_changes of the interface's directory `dir`.
    static std::optional<uint64_t> carrier_changes(int dir) {
        const auto cc = sysinfo::detail::read_value_file_at(dir, "carrier_changes", 64);
        return cc.content ? u64(*cc.content) : std::nullopt;
    }

    void read_system(SystemHealth& sys, const HealthQuery& q, sysinfo::InterruptTable* table) {
        if (auto sn = proc.softnet()) {
            sys.softnet = Known<std::vector<SoftnetCpu>>::of(std::move(sn->cpus));
        } else {
            sys.softnet = Known<std::vector<SoftnetCpu>>::none(sn.error().str());
        }
        if (table) sys.irq_cpus = table->cpus;
        if (auto on = cpu.online()) sys.online_cpus = static_cast<unsigned>(on->size());
        std::string state;
        sys.irqbalance_active = services::unit_active(opts.bus, "irqbalance.service", &state);
        sys.irqbalance_detail = sys.irqbalance_active.known() ? "irqbalance.service: " + state
                                                              : sys.irqbalance_active.unknown;
        read_sysctls(sys.sysctls);
        if (q.tuned_profile) {
            sys.tuned_profile = q.tuned_profile;
            auto conf = sysinfo::read_tuned_profile(opts.tuned_dirs, *q.tuned_profile);
            if (!conf) {
                sys.tuned_detail = conf.error().str();
            } else if (!*conf) {
                sys.tuned_detail = "tuned profile " + *q.tuned_profile + ": no tuned.conf found";
            } else {
                ForeignConfig c;
                c.tool = "tuned";
                c.source = (*conf)->file;
                c.settings = (*conf)->net;
                for (auto& s : (*conf)->cpu)
                    c.settings.push_back(s);
                if ((*conf)->net_devices) c.note = "[net] devices=" + *(*conf)->net_devices;
                sys.tuned_net = std::move(c);
            }
        }
    }

    void read_sysctls(NetSysctls& s) {
        auto get = [&](const char* name) -> std::optional<std::string> {
            auto v = procsys.read(name);
            if (!v) return std::nullopt;
            return *v;
        };
        s.tcp_rmem_max = third(get("net.ipv4.tcp_rmem"));
        s.tcp_wmem_max = third(get("net.ipv4.tcp_wmem"));
        auto num = [&](const char* name) -> std::optional<uint64_t> {
            auto v = get(name);
            return v ? u64(*v) : std::nullopt;
        };
        s.rmem_max = num("net.core.rmem_max");
        s.wmem_max = num("net.core.wmem_max");
        s.netdev_max_backlog = num("net.core.netdev_max_backlog");
        s.netdev_budget = num("net.core.netdev_budget");
        s.netdev_budget_usecs = num("net.core.netdev_budget_usecs");
    }

    std::map<int, LinkStats> link_stats(std::string* why) {
        std::map<int, LinkStats> out;
        if (!stats) {
            *why = stats_error;
            return out;
        }
        auto r = stats->dump([&](int ifindex, const LinkStats& s) { out[ifindex] = s; });
        if (!r) *why = r.error().str();
        return out;
    }

    struct Modes {
        std::map<int, ethnl::LinkModeBits> bits;
        std::shared_ptr<const FeatureNames> names;
        std::string why;
    };
    Modes link_modes() {
        Modes m;
        if (!eth) {
            m.why = eth_error;
            return m;
        }
        auto names = eth->global_strings(ETH_SS_LINK_MODES);
        if (!names) {
            m.why = "link mode names: " + names.error().str();
            return m;
        }
        m.names = *names;
        auto r = eth->dump(ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_FLAG_COMPACT_BITSETS,
                           [&](const nlmsghdr* nlh) -> Result<void> {
                               auto b = ethnl::decode_link_mode_bits(nlh);
                               if (!b) return std::unexpected(b.error());
                               m.bits[b->ifindex] = std::move(*b);
                               return {};
                           });
        if (!r) m.why = r.error().str();
        return m;
    }

    // ---- per interface

    // `dir`: the interface's directory below class/net (-1: none).
    Known<DriverFiles> driver_files(const NicState& n, int dir) {
        std::string module;
        char link[PATH_MAX];
        const ssize_t len = ::readlinkat(dir, "device/driver/module", link, sizeof link);
        if (len > 0) {
            const std::string_view target(link, static_cast<std::size_t>(len));
            module = std::string(target.substr(target.rfind('/') + 1));
        }
        if (module.empty() && n.id.driver) module = *n.id.driver;
        if (module.empty()) return Known<DriverFiles>::none("no driver name");
        auto it = driver_cache.find(module);
        if (it == driver_cache.end()) it = driver_cache.emplace(module, modules.read(module)).first;
        return it->second;
    }

    Known<std::vector<IrqInfo>> irqs(const NicState& n, const fs::path& dir,
                                     const Result<sysinfo::InterruptTable>& table,
                                     const std::map<unsigned, int>& nodes) {
        if (!table) return Known<std::vector<IrqInfo>>::none(table.error().str());
        auto vectors = sysinfo::read_device_irqs(dir);
        if (!vectors.known()) {
            std::string why = vectors.unknown;
            const auto op = n.values.get(Key::LinkOperstate);
            if (op && *op != 6)
                why += " (many drivers request their vectors only when the interface is up)";
            return Known<std::vector<IrqInfo>>::none(why);
        }
        std::vector<IrqInfo> out;
        // virtio functions carry one device; its queue names start with
        // "virtioN-": keep only this netdev's own device's vectors.
        for (unsigned irq : *vectors) {
            const auto* line = table->find(irq);
            // Gone between msi_irqs and /proc/interrupts (a reset or a
            // down): not this read's to report.
            if (!line) continue;
            IrqInfo q;
            q.irq = irq;
            q.name = line->name;
            q.queue = sysinfo::queue_of_irq_name(line->name);
            q.per_cpu = line->per_cpu;
            for (auto c : line->per_cpu)
                q.count += c;
            const auto aff = proc.irq_affinity(irq);
            if (!aff.affinity) continue;  // vanished meanwhile
            q.affinity = *aff.affinity;
            q.effective_affinity = aff.effective.value_or("");
            const std::string& eff =
                q.effective_affinity.empty() ? q.affinity : q.effective_affinity;
            if (auto cpus = parse_cpulist(eff); cpus && !cpus->empty() && !nodes.empty()) {
                std::optional<int> node;
                bool one = true;
                for (unsigned c : *cpus) {
                    auto it = nodes.find(c);
                    if (it == nodes.end()) {
                        one = false;
                        break;
                    }
                    if (node && *node != it->second) one = false;
                    node = it->second;
                }
                if (one) q.node = node;
            }
            out.push_back(std::move(q));
        }
        if (out.empty()) {
            // Drivers such as e1000e allocate the vectors at probe and
            // request them (which puts them in /proc/interrupts) at open.
            const auto op = n.values.get(Key::LinkOperstate);
            if (op && *op != 6)
                return Known<std::vector<IrqInfo>>::none(
                    "its MSI vectors are not in /proc/interrupts: the driver requests them when "
                    "the interface is up, and it is not");
            return Known<std::vector<IrqInfo>>::none(
                "its MSI vectors are not in /proc/interrupts (released meanwhile)");
        }
        return Known<std::vector<IrqInfo>>::of(std::move(out));
    }

    Known<std::vector<CpuPower>> cpus_of(const Known<NumaInfo>& numa,
                                         std::map<unsigned, CpuPower>& cache) {
        if (!numa.known()) return Known<std::vector<CpuPower>>::none(numa.unknown);
        auto list = parse_cpulist(numa->local_cpulist);
        if (!list) return Known<std::vector<CpuPower>>::none("unreadable local_cpulist");
        std::vector<CpuPower> out;
        for (unsigned c : *list) {
            auto it = cache.find(c);
            if (it == cache.end()) it = cache.emplace(c, cpu.power(c)).first;
            out.push_back(it->second);
        }
        return Known<std::vector<CpuPower>>::of(std::move(out));
    }

    void foreign(const NicState& n, InterfaceHealth& h, PerRead& r) {
        const std::string record_name = "n" + std::to_string(n.id.ifindex);
        struct stat st {};
        if (opts.udev &&
            (!r.udev_data || ::fstatat(r.udev_data.get(), record_name.c_str(), &st, 0) != 0)) {
            h.foreign_unknown.push_back("systemd.link: udev has no record of " + n.id.name + " (" +
                                        (opts.udev_data_dir / record_name).string() + ")");
        } else if (opts.udev) {
            auto file = sysinfo::udev_property(n.id.name, "ID_NET_LINK_FILE");
            if (file.known()) {
                const auto t = sysinfo::detail::read_text_file(*file, 1024 * 1024);
                if (!t.content) {
                    h.foreign_unknown.push_back("systemd.link: " + *file +
                                                " (applied by udev) cannot be read");
                } else if (auto c = sysinfo::parse_link_file(*t.content, *file); c) {
                    c->note = "applied by udev when the device was added (ID_NET_LINK_FILE)";
                    h.foreign.push_back(std::move(*c));
                } else {
                    h.foreign_unknown.push_back("systemd.link: " + c.error().str());
                }
            } else {
                h.foreign_unknown.push_back("systemd.link: " + file.unknown);
            }
        }
        if (auto c = r.ifupdown.settings_for(n.id.name); !c) {
            h.foreign_unknown.push_back("ifupdown: " + c.error().str());
        } else if (*c) {
            h.foreign.push_back(std::move(**c));
        }
        // One connection (or one failure to connect) for the whole read.
        auto nm = r.nm->device(n.id.name);
        if (!nm.known()) {
            h.foreign_unknown.push_back("NetworkManager: " + nm.unknown);
            return;
        }
        if (nm->config) h.foreign.push_back(std::move(*nm->config));
    }
};

SystemHealthReader::SystemHealthReader(HealthOptions opts)
    : impl_(std::make_unique<Impl>(std::move(opts))) {}
SystemHealthReader::~SystemHealthReader() = default;

HealthRead SystemHealthReader::read(std::span<const NicState* const> nics,
                                    const HealthQuery& query) {
    Impl& im = *impl_;
    HealthRead out;
    auto table = im.proc.interrupts();
    im.read_system(out.system, query, table ? &*table : nullptr);
    if (!table) out.system.interrupts_unknown = table.error().str();
    const auto online = im.cpu.online().value_or(std::vector<unsigned>{});
    const auto nodes = im.cpu.cpu_nodes();
    std::string stats_why;
    auto stats = im.link_stats(&stats_why);
    auto modes = im.link_modes();
    std::map<unsigned, CpuPower> cpu_cache;
    auto per_read = im.per_read(true);

    out.interfaces.resize(nics.size());
    for (std::size_t i = 0; i < nics.size(); ++i) {
        const NicState& n = *nics[i];
        InterfaceHealth& h = out.interfaces[i];
        const auto dir =
            n.id.physical ? sysinfo::pci_function_dir(im.opts.sysfs_root, n.id.name) : std::nullopt;
        const std::string no_pci = is_virtual(n)
                                       ? "a software link (" + n.id.kind.value_or("no device") + ")"
                                       : "not a PCI device (" + n.id.parent_bus.value_or("?") + ")";
        if (dir) {
            h.pcie = sysinfo::read_pcie(*dir);
            h.numa = sysinfo::read_numa(*dir, online);
            h.irqs = im.irqs(n, *dir, table, nodes);
        } else {
            h.pcie = Known<PcieLink>::none(no_pci + ": no PCIe link");
            h.numa = Known<NumaInfo>::none(no_pci + ": no NUMA placement");
            h.irqs = Known<std::vector<IrqInfo>>::none(no_pci + ": no device interrupts");
        }
        h.cpus = im.cpus_of(h.numa, cpu_cache);

        if (auto it = modes.bits.find(n.id.ifindex); it != modes.bits.end() && modes.names) {
            LinkModes m;
            m.supported = bit_names(it->second.supported, *modes.names);
            m.advertised = bit_names(it->second.advertised, *modes.names);
            m.partner = bit_names(it->second.peer, *modes.names);
            h.modes = Known<LinkModes>::of(std::move(m));
        } else {
            h.modes = Known<LinkModes>::none(modes.why.empty() ? "the driver reports no link modes"
                                                               : modes.why);
        }
        const UniqueFd ifdir = Impl::interface_dir(per_read, n.id.name);
        if (auto v = Impl::carrier_changes(ifdir.get()))
            h.carrier_changes = Known<uint64_t>::of(*v);
        else
            h.carrier_changes = Known<uint64_t>::none("no carrier_changes in sysfs");

        if (!im.ioctl) {
            h.driver_stats = Known<std::vector<Counter>>::none(im.ioctl_error);
        } else if (auto s = im.ioctl->read(n.id.name)) {
            h.driver_stats = Known<std::vector<Counter>>::of(std::move(*s));
        } else {
            h.driver_stats = Known<std::vector<Counter>>::none(
                s.error().code == Errc::Unsupported ? "the driver has no statistics (ethtool -S)"
                                                    : s.error().str());
        }
        if (auto it = stats.find(n.id.ifindex); it != stats.end())
            h.link_stats = Known<LinkStats>::of(it->second);
        else
            h.link_stats = Known<LinkStats>::none(
                stats_why.empty() ? "no rtnetlink statistics for it" : stats_why);
        h.driver = im.driver_files(n, ifdir.get());
        im.foreign(n, h, per_read);
    }
    return out;
}

void SystemHealthReader::release_buffers() noexcept {
    if (impl_->eth) impl_->eth->release_buffer();
    if (impl_->stats) impl_->stats->release_buffer();
}

CounterSnapshot SystemHealthReader::read_counters(std::span<const NicState* const> nics) {
    Impl& im = *impl_;
    CounterSnapshot s;
    std::string why;
    auto stats = im.link_stats(&why);
    const auto per_read = im.per_read(false);
    for (const NicState* n : nics) {
        if (auto it = stats.find(n->id.ifindex); it != stats.end())
            s.link_stats[n->id.ifindex] = it->second;
        if (im.ioctl)
            if (auto d = im.ioctl->read(n->id.name)) s.driver_stats[n->id.ifindex] = std::move(*d);
        if (auto v = Impl::carrier_changes(Impl::interface_dir(per_read, n->id.name).get()))
            s.carrier_changes[n->id.ifindex] = *v;
    }
    if (auto table = im.proc.interrupts()) {
        s.irq_cpus = table->cpus;
        for (auto& l : table->lines)
            s.irq_per_cpu[l.irq] = std::move(l.per_cpu);
    }
    if (auto sn = im.proc.softnet()) s.softnet = std::move(sn->cpus);
    return s;
}

}  // namespace nictune
