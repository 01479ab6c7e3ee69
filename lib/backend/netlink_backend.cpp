#include "backend/netlink_backend.hpp"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "backend/irq_read.hpp"
#include "backend/link_fields.hpp"
#include "ethnl/codecs.hpp"
#include "model/cpulist.hpp"
#include "model/value.hpp"
#include "sysinfo/rss_ioctl.hpp"
#include "sysinfo/sysfs.hpp"
#include "util/strings.hpp"
#include "util/unique_fd.hpp"

namespace nictune {
namespace {

// The ethtool families of settings read for every interface, in the
// table's order (ethnl/codecs.hpp); features are read apart (their names).
bool is_settings(const ethnl::Family& f) {
    return f.replies == ethnl::Replies::Settings;
}

// The link's strings are moved: the dump's links are read once (a read of
// 512 copied 1,024 MAC strings only to free them).
void take_link(rtnl::Link&& l, NicState& nic) {
    backend_detail::take_link_fields(std::move(l), nic);
}

void merge_values(DeviceValues& into, const DeviceValues& from, Section s) {
    for (const auto& k : device_keys())
        if (k.section == s)
            if (auto v = from.get(k.key)) into.set(k.key, *v);
}

void store_features(NicState& nic, ethnl::FeaturesReply&& r,
                    const std::shared_ptr<const FeatureNames>& names) {
    nic.features = ethnl::to_feature_set(std::move(r), names);
}

}  // namespace

NetlinkBackend::NetlinkBackend(NetlinkBackendOptions opts, std::unique_ptr<rtnl::Socket> rt,
                               std::unique_ptr<ethnl::Socket> eth, sysinfo::IoctlSocket io)
    : opts_(std::move(opts)),
      rtnl_(std::move(rt)),
      eth_(std::move(eth)),
      ioctl_(std::move(io)),
      sysfs_(opts_.sysfs_root),
      queue_files_(opts_.sysfs_root),
      irq_files_(sysinfo::IrqRoots{opts_.sysfs_root, opts_.proc_root, opts_.run_root}),
      procsys_(opts_.procsys_root) {}

Result<std::unique_ptr<NetlinkBackend>> NetlinkBackend::open(NetlinkBackendOptions opts) {
    auto rt = rtnl::Socket::open();
    if (!rt) return std::unexpected(rt.error());
    auto eth = ethnl::Socket::open();
    if (!eth) return std::unexpected(eth.error());
    auto io = sysinfo::IoctlSocket::open();
    if (!io) return std::unexpected(io.error());
    return std::unique_ptr<NetlinkBackend>(
        new NetlinkBackend(std::move(opts), std::move(*rt), std::move(*eth), std::move(*io)));
}

namespace {

// Whether the link is called `name`, by its name or an alternative name
// (the kernel resolves both alike).
bool called(const rtnl::Link& l, std::string_view name) {
    return l.name == name || std::ranges::find(l.altnames, name) != l.altnames.end();
}

}  // namespace

Result<std::vector<rtnl::Link>> NetlinkBackend::list_links(const ReadRequest& req) {
    std::vector<rtnl::Link> links;
    for (const auto& n : req.names)
        if (!valid_name_or_altname(n))
            return fail(Errc::InvalidArgument, "",
                        "interface name " + quote_name(n.substr(0, 64)) +
                            " is not valid (1-15 bytes for a name, up to 127 for an alternative "
                            "name; no '/' or whitespace; bytes written \\xhh)");

    if (!req.names.empty() && req.names.size() <= opts_.per_device_limit) {
        for (const auto& n : req.names) {
            if (std::any_of(links.begin(), links.end(),
                            [&](const rtnl::Link& l) { return called(l, n); }))
                continue;
            auto l = rtnl_->get_link(n);
            if (!l) {
                if (l.error().code == Errc::NoSuchInterface)
                    return fail_on(Errc::NoSuchInterface, n, "no such interface");
                return std::unexpected(std::move(l.error()).within_interface(n));
            }
            // Named twice, by a name and an alternative name.
            if (std::any_of(links.begin(), links.end(),
                            [&](const rtnl::Link& x) { return x.ifindex == l->ifindex; }))
                continue;
            links.push_back(std::move(*l));
        }
        return links;
    }

    if (!req.names.empty()) return dump_named_links(req);
    auto dumped = rtnl_->dump_links();
    if (!dumped) return std::unexpected(std::move(dumped.error()));
    links = std::move(*dumped);
    links_dumped_ = links.size();
    if (!req.include_virtual)
        std::erase_if(links, [](const rtnl::Link& l) {
            return !l.parent_dev.has_value() || l.kind.has_value();
        });
    std::sort(links.begin(), links.end(),
              [](const auto& a, const auto& b) { return a.ifindex < b.ifindex; });
    return links;
}

// The named links out of one dump, in the order named, a link named twice
// (by a name and an alternative name) once. The dump is streamed: only the
// named links are kept, each in its place as it arrives (collecting a
// thousand links first and picking 512 of them held two vectors of them,
// 1.1 MB, in each of an apply's two reads).
Result<std::vector<rtnl::Link>> NetlinkBackend::dump_named_links(const ReadRequest& req) {
    using Wanted = std::pair<std::string_view, std::size_t>;  // name, place in the request
    std::vector<Wanted> wanted;
    wanted.reserve(req.names.size());
    for (std::size_t i = 0; i < req.names.size(); ++i)
        wanted.emplace_back(req.names[i], i);
    std::ranges::sort(wanted);
    enum : uint8_t { kMissing, kHere, kElsewhere };  // the link named here: not seen, here, earlier
    std::vector<uint8_t> state(req.names.size(), kMissing);
    std::vector<rtnl::Link> got(req.names.size());
    std::size_t dumped = 0;
    std::vector<std::size_t> places;
    auto on_link = [&](rtnl::Link&& l) {
        ++dumped;
        places.clear();
        const auto add = [&](std::string_view name) {
            auto [first, last] = std::ranges::equal_range(wanted, name, {}, &Wanted::first);
            for (auto it = first; it != last; ++it)
                places.push_back(it->second);
        };
        add(l.name);
        for (const auto& alt : l.altnames)
            add(alt);
        if (places.empty()) return;
        const std::size_t here = std::ranges::min(places);
        for (std::size_t p : places)
            state[p] = p == here ? kHere : kElsewhere;
        got[here] = std::move(l);
    };
    auto r = rtnl_->stream_links(on_link, [&] {
        dumped = 0;
        std::ranges::fill(state, kMissing);
    });
    if (!r) return std::unexpected(std::move(r.error()));
    links_dumped_ = dumped;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (state[i] == kMissing)
            return fail_on(Errc::NoSuchInterface, req.names[i], "no such interface");
        if (state[i] != kHere) continue;
        if (kept != i) got[kept] = std::move(got[i]);
        ++kept;
    }
    got.resize(kept);
    return got;
}

Result<void> NetlinkBackend::read_ethtool_dumps(std::vector<NicState>& nics,
                                                const ReadRequest& req) {
    // A sorted index (a hash map allocated a node per interface, twice per
    // apply); each ifindex is there once.
    std::vector<std::pair<int, NicState*>> by_index;
    by_index.reserve(nics.size());
    for (auto& n : nics)
        by_index.emplace_back(n.id.ifindex, &n);
    std::ranges::sort(by_index);
    const auto find = [&](int ifindex) -> NicState* {
        auto it =
            std::ranges::lower_bound(by_index, ifindex, {}, &std::pair<int, NicState*>::first);
        return it != by_index.end() && it->first == ifindex ? it->second : nullptr;
    };

    for (const ethnl::Family& f : ethnl::families()) {
        const Section s = f.section;
        if (!is_settings(f) || !req.wants_ethtool(s)) continue;
        auto r = eth_->dump(f.get, f.request_flags, [&](const nlmsghdr* nlh) -> Result<void> {
            auto rep = ethnl::decode_settings(s, nlh);
            if (!rep) return std::unexpected(rep.error());
            if (NicState* nic = find(rep->ifindex)) merge_values(nic->values, rep->values, s);
            return {};
        });
        if (!r && r.error().code != Errc::Unsupported) return r;
    }
    if (!req.wants(Section::Features)) return {};
    auto names = eth_->feature_names();
    if (!names) return std::unexpected(names.error());
    auto r = eth_->dump(ETHTOOL_MSG_FEATURES_GET, ethnl::request_flags(Section::Features),
                        [&](const nlmsghdr* nlh) -> Result<void> {
                            auto rep = ethnl::decode_features(nlh);
                            if (!rep) return std::unexpected(rep.error());
                            if (NicState* nic = find(rep->ifindex))
                                store_features(*nic, std::move(*rep), *names);
                            return {};
                        });
    if (!r && r.error().code != Errc::Unsupported) return r;
    return {};
}

// Each family's GETs for every device go out together (Socket::get_many),
// not one device and family at a time: a new link's reads wait for the RTNL
// lock behind a burst of link creations once per window instead of once per
// request. A device that vanished is not asked again.
Result<void> NetlinkBackend::read_ethtool_per_device(std::vector<NicState>& nics,
                                                     const ReadRequest& req) {
    const bool named = !req.names.empty();
    std::vector<char> vanished(nics.size(), 0);
    auto note = [&](std::size_t i, Section s, const Error& e) {
        if (e.code == Errc::Unsupported) return;
        if (e.code == Errc::NoSuchInterface) {
            vanished[i] = 1;
            return;
        }
        nics[i].problems.push_back(ReadProblem{s, e.sys_errno, e.str()});
    };
    std::vector<std::size_t> live;  // the devices asked, by index in nics
    std::vector<int> ifindexes;
    auto gather = [&] {
        live.clear();
        ifindexes.clear();
        for (std::size_t i = 0; i < nics.size(); ++i)
            if (!vanished[i]) {
                live.push_back(i);
                ifindexes.push_back(nics[i].id.ifindex);
            }
        return !live.empty();
    };
    for (const ethnl::Family& f : ethnl::families()) {
        const Section s = f.section;
        if (!is_settings(f) || !req.wants_ethtool(s) || !gather()) continue;
        auto rs = eth_->get_many(f.get, f.request_flags, ifindexes,
                                 [&](std::size_t k, const nlmsghdr* nlh) -> Result<void> {
                                     auto rep = ethnl::decode_settings(s, nlh);
                                     if (!rep) return std::unexpected(rep.error());
                                     merge_values(nics[live[k]].values, rep->values, s);
                                     return {};
                                 });
        for (std::size_t k = 0; k < rs.size(); ++k)
            if (!rs[k]) note(live[k], s, rs[k].error());
    }
    if (req.wants(Section::Features) && gather()) {
        auto names = eth_->feature_names();
        if (!names) return std::unexpected(names.error());
        auto rs =
            eth_->get_many(ETHTOOL_MSG_FEATURES_GET, ethnl::request_flags(Section::Features),
                           ifindexes, [&](std::size_t k, const nlmsghdr* nlh) -> Result<void> {
                               auto rep = ethnl::decode_features(nlh);
                               if (!rep) return std::unexpected(rep.error());
                               store_features(nics[live[k]], std::move(*rep), *names);
                               return {};
                           });
        for (std::size_t k = 0; k < rs.size(); ++k)
            if (!rs[k]) note(live[k], Section::Features, rs[k].error());
    }
    if (std::find(vanished.begin(), vanished.end(), 1) == vanished.end()) return {};
    std::size_t keep = 0;
    for (std::size_t i = 0; i < nics.size(); ++i) {
        if (vanished[i]) {
            if (named)
                return fail_on(Errc::NoSuchInterface, nics[i].id.name,
                               "interface vanished while it was being read");
            continue;
        }
        if (keep != i) nics[keep] = std::move(nics[i]);
        ++keep;
    }
    nics.resize(keep);
    return {};
}

void NetlinkBackend::read_identity(NicState& nic) {
    // The ioctl and sysfs take the name's real bytes.
    auto bytes = unescape_name(nic.id.name);
    if (!bytes) return;
    if (auto d = ioctl_.drvinfo(*bytes)) {
        nic.id.driver = d->driver;
        nic.id.driver_version = d->version;
        nic.id.firmware_version = d->firmware_version;
        nic.id.expansion_rom_version = d->expansion_rom_version;
        nic.id.bus_info = d->bus_info;
    } else if (d.error().code != Errc::Unsupported && d.error().code != Errc::NoSuchInterface) {
        // Its context holds the raw bytes; the message names the interface as nictune writes it.
        Error e = std::move(d.error());
        e.context = nic.id.name + ": driver info: get";
        nic.problems.push_back(ReadProblem{Section::Link, e.sys_errno, "driver info: " + e.str()});
    }
    if (nic.id.driver) nic.id.module_version = sysfs_.module_version(*nic.id.driver);
    if (!nic.id.physical) return;
    if (auto pci = sysfs_.pci_for(*bytes)) {
        nic.id.pci_slot = pci->slot;
        nic.id.pci_id = pci->id;
        nic.id.pci_subsystem = pci->subsystem;
        nic.id.numa_node = pci->numa_node;
        nic.id.sriov_vf = pci->sriov_vf;
        if (pci->modalias) {
            auto names = hwdb_.lookup(*pci->modalias);
            nic.id.vendor_name = names.vendor;
            nic.id.model_name = names.model;
        }
    }
}

// The named links' rtnetlink part: those the caller has from their
// RTM_NEWLINK (req.linked) as they are, the others asked for; in the order
// named, a link named twice once.
Result<std::vector<NicState>> NetlinkBackend::read_links(const ReadRequest& req) {
    std::vector<NicState> nics;
    const bool per_device = !req.names.empty() && req.names.size() <= opts_.per_device_limit;
    if (!per_device || req.linked.empty()) {
        auto links = list_links(req);
        if (!links) return std::unexpected(links.error());
        nics.resize(links->size());
        for (std::size_t i = 0; i < links->size(); ++i)
            take_link(std::move((*links)[i]), nics[i]);
        return nics;
    }
    // As list_links: a name an earlier link answers to (by an alternative
    // name) is not read again, and a link named twice is kept once.
    const auto answers_to = [](const NicState& x, std::string_view n) {
        return x.id.name == n || std::ranges::find(x.id.altnames, n) != x.id.altnames.end();
    };
    for (const auto& n : req.names) {
        if (std::ranges::any_of(nics, [&](const NicState& x) { return answers_to(x, n); }))
            continue;
        const auto known =
            std::ranges::find_if(req.linked, [&](const NicState& l) { return l.id.name == n; });
        NicState nic;
        if (known != req.linked.end()) {
            nic = *known;
        } else {
            auto l = list_links(ReadRequest{{n}, req.include_virtual});
            if (!l) return std::unexpected(l.error());
            if (l->empty()) continue;
            take_link(std::move(l->front()), nic);
        }
        if (std::ranges::none_of(nics,
                                 [&](const NicState& x) { return x.id.ifindex == nic.id.ifindex; }))
            nics.push_back(std::move(nic));
    }
    return nics;
}

Result<std::vector<NicState>> NetlinkBackend::read_interfaces(const ReadRequest& req) {
    auto linked = read_links(req);
    if (!linked) return std::unexpected(linked.error());
    std::vector<NicState> nics = std::move(*linked);

    if (opts_.after_list) {
        std::vector<std::string> names;
        for (const auto& n : nics)
            names.push_back(n.id.name);
        opts_.after_list(names);
    }

    const bool named = !req.names.empty();
    if (named && nics.size() <= opts_.per_device_limit) {
        if (auto r = read_ethtool_per_device(nics, req); !r) return std::unexpected(r.error());
    } else {
        if (auto r = read_ethtool_dumps(nics, req); !r) return std::unexpected(r.error());
    }
    if (auto r = read_queues_and_flags(nics, req); !r) return std::unexpected(r.error());
    if (!req.identity) return nics;

    for (auto it = nics.begin(); it != nics.end();) {
        read_identity(*it);
        // A link that left between the dump and now has no driver info and no
        // ethtool data; confirm with the kernel before dropping or failing.
        if (!it->id.driver && !it->features) {
            if (auto l = rtnl_->get_link(it->id.ifindex);
                !l && l.error().code == Errc::NoSuchInterface) {
                if (named)
                    return fail_on(Errc::NoSuchInterface, it->id.name,
                                   "interface vanished while it was being read");
                it = nics.erase(it);
                continue;
            }
        }
        ++it;
    }
    return nics;
}

Result<void> NetlinkBackend::read_queues_and_flags(std::vector<NicState>& nics,
                                                   const ReadRequest& req) {
    const bool queues = req.wants(Section::Rps) || req.wants(Section::Xps);
    const bool flags = req.wants(Section::PrivateFlags);
    const bool rss = req.wants(Section::Rss);  // [rss]
    const bool irq = req.wants(Section::Irq);  // [irq]
    if (!queues && !flags && !rss && !irq) return {};
    IrqPlacementReader irqs(irq_files_, req);
    // Private flags: one dump for many interfaces, as the settings are
    // read (a device without private flags is left out of it: EOPNOTSUPP);
    // a GET per interface when few are read or the dump fails (then each
    // says what went wrong). 512 veth: 513 GETs, 1026 system calls, gone.
    std::optional<std::unordered_map<int, ethnl::PrivFlagsReply>> dumped;
    const bool per_device = !req.names.empty() && nics.size() <= opts_.per_device_limit;
    if (flags && !per_device) {
        std::unordered_map<int, ethnl::PrivFlagsReply> by_index;
        auto r = eth_->dump(ETHTOOL_MSG_PRIVFLAGS_GET, ETHTOOL_FLAG_COMPACT_BITSETS,
                            [&](const nlmsghdr* nlh) -> Result<void> {
                                auto d = ethnl::decode_private_flags(nlh);
                                if (!d) return std::unexpected(d.error());
                                by_index[d->ifindex] = std::move(*d);
                                return {};
                            });
        if (r) dumped = std::move(by_index);
    }
    // What Socket::private_flags answers for the interface, from the dump.
    auto flags_of = [&](int ifindex) -> Result<std::vector<PrivateFlag>> {
        if (!dumped) return eth_->private_flags(ifindex);
        const auto it = dumped->find(ifindex);
        if (it == dumped->end()) return fail(Errc::Unsupported, "", "no private flags");
        if (it->second.nbits == 0) return std::vector<PrivateFlag>{};
        auto names = eth_->device_strings(ifindex, ETH_SS_PRIV_FLAGS);
        if (!names) return std::unexpected(names.error());
        return ethnl::to_private_flags(it->second, *names);
    };
    for (auto& nic : nics) {
        const auto bytes = unescape_name(nic.id.name);
        // Its sysfs directory, walked to once for its queues and its
        // device's IRQs, which are one component below it (whole paths
        // before: two walks through kernfs and the class/net link).
        const bool irq_files = irq && !req.irq_readback_of(nic.id.name);
        const UniqueFd dir = bytes && (queues || irq_files)
                                 ? sysinfo::open_interface_dir(opts_.sysfs_root, *bytes)
                                 : UniqueFd{};
        if (rss && bytes) {
            auto r = sysinfo::rss::read(ioctl_, *bytes, nic.id.name);
            if (r)
                nic.rss = std::move(*r);
            else if (r.error().code != Errc::NoSuchInterface)
                nic.problems.push_back(
                    ReadProblem{Section::Rss, r.error().sys_errno, r.error().str()});
        }
        if (queues && bytes) {
            auto q = queue_files_.read_at(dir.get(), *bytes);
            if (q)
                nic.queues = std::move(*q);
            else
                nic.problems.push_back(
                    ReadProblem{Section::Rps, q.error().sys_errno, q.error().str()});
        }
        // A name that is no text form has no queues read, nor flags with them.
        if (flags && (bytes || !queues)) {
            auto f = flags_of(nic.id.ifindex);
            if (f) {
                nic.private_flags = std::move(*f);
            } else if (f.error().code != Errc::Unsupported &&
                       f.error().code != Errc::NoSuchInterface) {
                nic.problems.push_back(
                    ReadProblem{Section::PrivateFlags, f.error().sys_errno, f.error().str()});
            }
        }
        if (irq) irqs.read(nic, dir.get());
    }
    return {};
}

Result<SystemState> NetlinkBackend::read_system(const SystemQuery& query) {
    SystemState sys;
    if (query.tuned) sys.tuned = tuned::read_state(opts_.tuned);
    std::vector<std::string> names;
    if (query.audit_defaults)
        for (auto n : sysctl_audit_defaults())
            names.emplace_back(n);
    for (const auto& n : query.sysctls)
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    for (const auto& n : names) {
        // Unreadable counts as absent: audit reports it, nothing depends on it.
        auto v = procsys_.read(n);
        sys.sysctl.push_back(SysctlValue{n, v ? *v : std::nullopt});
    }
    return sys;
}

namespace {

// "p4p1: rings.rx=4096, rings.tx=4096: set", the context of a failed SET.
std::string set_context(const NicRef& nic, std::span<const std::pair<Key, uint64_t>> values) {
    std::string out = nic.name + ": ";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        out += key_path(values[i].first) + "=" +
               to_string(scalar_of(values[i].first, values[i].second));
    }
    return out + ": set";
}

Error with_context(Error e, const NicRef& nic, std::string context) {
    e.context = std::move(context);
    e.interface = nic.name;
    if (e.sys_errno == ENODEV) e.code = Errc::NoSuchInterface;
    return e;
}

}  // namespace

Result<void> NetlinkBackend::set_device(const NicRef& nic, Section section,
                                        std::span<const std::pair<Key, uint64_t>> values) {
    if (values.empty()) return {};
    if (section == Section::Link) {
        rtnl::LinkChange change;
        for (const auto& [k, v] : values) {
            if (k == Key::LinkMtu)
                change.mtu = static_cast<uint32_t>(v);
            else if (k == Key::LinkTxqueuelen)
                change.txqueuelen = static_cast<uint32_t>(v);
            else
                return fail(Errc::Internal, set_context(nic, values),
                            key_path(k) + " cannot be set");
        }
        auto r = rtnl_->change_link(nic.ifindex, change);
        if (!r) return std::unexpected(with_context(r.error(), nic, set_context(nic, values)));
        return {};
    }
    auto r = eth_->set(ethnl::set_cmd(section), nic.ifindex,
                       [&](nlmsghdr* nlh) { ethnl::encode_settings(nlh, section, values); });
    if (!r) return std::unexpected(with_context(r.error(), nic, set_context(nic, values)));
    return {};
}

Result<void> NetlinkBackend::set_private_flags(const NicRef& nic,
                                               std::span<const PrivateFlag> flags) {
    if (flags.empty()) return {};
    auto r = eth_->set(ETHTOOL_MSG_PRIVFLAGS_SET, nic.ifindex,
                       [&](nlmsghdr* nlh) { ethnl::encode_private_flags(nlh, flags); });
    if (!r) {
        std::string ctx = nic.name + ": ";
        for (std::size_t i = 0; i < flags.size(); ++i)
            ctx += (i ? ", " : "") + std::string("private_flags.") + flags[i].name + "=" +
                   (flags[i].on ? "true" : "false");
        return std::unexpected(with_context(r.error(), nic, ctx + ": set"));
    }
    return {};
}

Result<void> NetlinkBackend::set_queue(const NicRef& nic, Section section, std::size_t queue,
                                       std::string_view what, const Scalar& value) {
    auto bytes = unescape_name(nic.name);
    if (!bytes) return fail(Errc::InvalidArgument, nic.name, bytes.error().message);
    if (what == "cpus") {
        const auto* list = std::get_if<std::string>(&value);
        if (!list) return fail(Errc::Internal, nic.name, "a CPU list is a string");
        return queue_files_.write_cpus(*bytes, nic.name, section == Section::Rps, queue, *list);
    }
    const auto* n = std::get_if<uint64_t>(&value);
    if (section != Section::Rps || what != "flow_cnt" || !n)
        return fail(Errc::Internal, nic.name, "not a queue setting: " + std::string(what));
    return queue_files_.write_flow_cnt(*bytes, nic.name, queue, *n);
}

// [rss]
Result<void> NetlinkBackend::set_rss(const NicRef& nic, std::string_view what,
                                     const Scalar& value) {
    auto bytes = unescape_name(nic.name);
    if (!bytes) return fail(Errc::InvalidArgument, nic.name, bytes.error().message);
    const auto* text = std::get_if<std::string>(&value);
    if (!text)
        return fail(Errc::Internal, nic.name + ": rss." + std::string(what), "not a text form");
    if (what == "indirection")
        return sysinfo::rss::set_indirection(ioctl_, *bytes, nic.name, *text);
    if (what.starts_with("hash."))
        return sysinfo::rss::set_hash_fields(ioctl_, *bytes, nic.name, what.substr(5), *text);
    return fail(Errc::Internal, nic.name, "not an RSS setting: " + std::string(what));
}

Result<void> NetlinkBackend::set_irq_affinity(const NicRef& nic, unsigned irq,
                                              std::string_view cpus) {
    auto r = irq_files_.write_affinity(
        irq, cpus,
        nic.name + ": irq." + std::to_string(irq) + ".cpus=\"" + std::string(cpus) + "\": set");
    if (observer_) observer_->irqs.wrote(nic.ifindex, irq, r);
    if (!r) return std::unexpected(std::move(r.error()));
    return {};
}

Result<void> NetlinkBackend::set_irqbalance_banned(const NicRef& nic, std::string_view irqs) {
    const std::string context =
        nic.name + ": irq.irqbalance_banned=\"" + std::string(irqs) + "\": set";
    auto wanted = parse_cpulist(irqs);
    if (!wanted) return fail(Errc::InvalidArgument, context, "not a list of IRQs");
    auto bytes = unescape_name(nic.name);
    if (!bytes) return fail(Errc::InvalidArgument, context, bytes.error().message);
    if (observer_) observer_->irqs.unseen(nic.ifindex);  // the whole section to read back
    return irq_files_.ban_for_interface(*bytes, *wanted, context);
}

Result<void> NetlinkBackend::set_features(const NicRef& nic, uint32_t nbits,
                                          std::span<const std::pair<std::size_t, bool>> bits) {
    if (bits.empty()) return {};
    auto r = eth_->set(ETHTOOL_MSG_FEATURES_SET, nic.ifindex,
                       [&](nlmsghdr* nlh) { ethnl::encode_features(nlh, nbits, bits); });
    if (!r) {
        std::string ctx = nic.name + ": ";
        auto names = eth_->feature_names();
        for (std::size_t i = 0; i < bits.size(); ++i) {
            if (i) ctx += ", ";
            const bool named = names && bits[i].first < (*names)->size();
            ctx += "features." +
                   (named ? (**names)[bits[i].first] : std::to_string(bits[i].first)) + "=" +
                   (bits[i].second ? "on" : "off");
        }
        return std::unexpected(with_context(r.error(), nic, ctx + ": set"));
    }
    return {};
}

std::vector<Result<void>> NetlinkBackend::set_devices(std::span<const DeviceChange> changes) {
    std::vector<Result<void>> out(changes.size());
    // Link changes go over rtnetlink, the rest over ethtool, each pipelined
    // per message type; results go back to their places.
    std::vector<std::size_t> link_idx;
    std::vector<std::pair<int, rtnl::LinkChange>> links;
    std::map<Section, std::vector<std::size_t>> by_section;
    for (std::size_t i = 0; i < changes.size(); ++i) {
        const auto& c = changes[i];
        if (c.values.empty()) continue;
        if (c.section != Section::Link) {
            by_section[c.section].push_back(i);
            continue;
        }
        rtnl::LinkChange lc;
        bool ok = true;
        for (const auto& [k, v] : c.values) {
            if (k == Key::LinkMtu)
                lc.mtu = static_cast<uint32_t>(v);
            else if (k == Key::LinkTxqueuelen)
                lc.txqueuelen = static_cast<uint32_t>(v);
            else
                ok = false;
        }
        if (!ok) {
            out[i] = fail(Errc::Internal, set_context(c.nic, c.values), "not a settable link key");
            continue;
        }
        link_idx.push_back(i);
        links.emplace_back(c.nic.ifindex, lc);
    }
    if (!links.empty()) {
        auto rs = rtnl_->change_links(links);
        for (std::size_t j = 0; j < rs.size(); ++j) {
            const auto& c = changes[link_idx[j]];
            out[link_idx[j]] = rs[j] ? Result<void>{}
                                     : std::unexpected(with_context(rs[j].error(), c.nic,
                                                                    set_context(c.nic, c.values)));
        }
    }
    for (const auto& [section, idx] : by_section) {
        std::vector<ethnl::Socket::SetRequest> reqs;
        for (std::size_t i : idx) {
            const auto& c = changes[i];
            reqs.push_back({c.nic.ifindex, [&c, section = section](nlmsghdr* nlh) {
                                ethnl::encode_settings(nlh, section, c.values);
                            }});
        }
        auto rs = eth_->set_many(ethnl::set_cmd(section), reqs);
        for (std::size_t j = 0; j < rs.size(); ++j) {
            const auto& c = changes[idx[j]];
            out[idx[j]] = rs[j] ? Result<void>{}
                                : std::unexpected(with_context(rs[j].error(), c.nic,
                                                               set_context(c.nic, c.values)));
        }
    }
    drain_observer();
    return out;
}

std::vector<Result<void>> NetlinkBackend::set_features_many(
    std::span<const FeatureChange> changes) {
    std::vector<ethnl::Socket::SetRequest> reqs;
    for (const auto& c : changes)
        reqs.push_back(
            {c.nic.ifindex, [&c](nlmsghdr* nlh) { ethnl::encode_features(nlh, c.nbits, c.bits); }});
    auto rs = eth_->set_many(ETHTOOL_MSG_FEATURES_SET, reqs);
    drain_observer();
    std::vector<Result<void>> out(changes.size());
    for (std::size_t i = 0; i < changes.size(); ++i) {
        if (rs[i]) continue;
        std::string ctx = changes[i].nic.name + ": features: set";
        out[i] = std::unexpected(with_context(rs[i].error(), changes[i].nic, ctx));
    }
    return out;
}

bool NetlinkBackend::observe_changes(bool on) {
    if (!on) {
        if (observer_ && --observer_->depth <= 0) {
            // Its sockets are kept for the next transaction, out of the
            // groups and empty (a paused source); one that cannot leave
            // them is closed.
            if (observer_->events->pause()) spare_events_ = std::move(observer_->events);
            observer_.reset();
        }
        return observer_ != nullptr;
    }
    if (observer_) {
        ++observer_->depth;
        return true;
    }
    // Sockets of their own, joined before the first SET: every notification
    // they hold describes the state at some moment after that. Those of the
    // last transaction are joined again: paused, they hold nothing older.
    std::unique_ptr<EventSource> events = std::move(spare_events_);
    if (events && !events->resume()) events.reset();
    if (!events) {
        auto opened =
            EventSource::open(opts_.observe_queue_bytes, [this] { return eth_->feature_names(); });
        if (!opened) return false;
        events = std::move(*opened);
    }
    observer_ = std::make_unique<Observer>();
    observer_->events = std::move(events);
    observer_->depth = 1;
    return true;
}

// Observing costs per notification: each SET of a link makes the kernel
// build a full RTM_NEWLINK for every listener (an MTU and a features change
// make two), and each one is received on its own. A read-back of more than
// per_device_limit interfaces is one dump per family, whose cost is that of
// all the links. Measured with 512 veths in a namespace of 513 links (MTU,
// channels and features; CPU time of an apply, alternating 7-9 times each):
// reading back took 2.5 ms of 41 less for all 512, 1 ms less for 384, the
// same for 256, and 3 ms more for 64.
bool NetlinkBackend::read_back_is_cheaper(std::size_t interfaces) const {
    return opts_.read_back_many && interfaces > opts_.per_device_limit && links_dumped_ > 0 &&
           2 * interfaces >= links_dumped_;
}

void NetlinkBackend::drain_observer() {
    if (!observer_ || observer_->lost) return;
    // What the observer's sockets say, kept per interface: the newest state
    // of each family notified. Anything missed makes all of it unusable.
    class Keep final : public EventSink {
      public:
        explicit Keep(Observer& ob) : ob_(ob) {}

        void link(const LinkEvent& l) override {
            Seen& s = entry(l.ifindex, {});
            if (l.deleted) {
                s.gone = true;
                return;
            }
            s.state.id.name = l.name;
            s.state.id.mac = l.mac;
            merge_values(s.state.values, l.values, Section::Link);
            s.sections |= ReadRequest::bit(Section::Link);
        }
        void settings(int ifindex, const std::string& name, Section section,
                      const DeviceValues& values) override {
            Seen& s = entry(ifindex, name);
            merge_values(s.state.values, values, section);
            // LINKMODES is the Link section's ethtool part, not the rtnetlink link.
            s.sections |=
                section == Section::Link ? ReadRequest::kLinkModes : ReadRequest::bit(section);
        }
        void features(int ifindex, const std::string& name,
                      std::optional<FeatureSet> features) override {
            if (!features) {
                ob_.lost = true;
                return;
            }
            Seen& s = entry(ifindex, name);
            s.state.features = std::move(features);
            s.sections |= ReadRequest::bit(Section::Features);
        }
        void missed(const Error&, bool) override { ob_.lost = true; }

      private:
        Seen& entry(int ifindex, const std::string& name) {
            auto [it, fresh] = ob_.seen.try_emplace(ifindex, Seen{{}, 0, false});
            if (fresh) it->second.state.id.ifindex = ifindex;
            if (it->second.state.id.name.empty()) it->second.state.id.name = name;
            return it->second;
        }

        Observer& ob_;
    };
    Keep keep(*observer_);
    observer_->events->receive(keep);
}

Backend::Observed NetlinkBackend::observed(std::span<const ObserveRequest> wanted) {
    Observed out;
    drain_observer();
    const bool usable = observer_ && !observer_->lost;
    if (usable) out.nics.reserve(wanted.size());
    constexpr uint32_t kIrq = ReadRequest::bit(Section::Irq);
    for (const auto& w : wanted) {
        const Seen* s = nullptr;
        std::optional<IrqPlacement> irqs;  // [irq] as its writes read it back
        if (usable) {
            if (auto it = observer_->seen.find(w.nic.ifindex); it != observer_->seen.end())
                s = &it->second;
            if (w.sections & kIrq) irqs = observer_->irqs.placement(w.nic.ifindex);
        }
        // The rest as notified.
        const uint32_t notified = irqs ? w.sections & ~kIrq : w.sections;
        const bool covered =
            s ? !s->gone && (s->sections & notified) == notified : irqs && notified == 0;
        if (!covered) {
            out.missing.push_back(w.nic.name);
            continue;
        }
        NicState& n = out.nics.emplace_back(s ? s->state : NicState{});
        n.id.ifindex = w.nic.ifindex;
        if (n.id.name.empty()) n.id.name = w.nic.name;
        if (irqs) n.irq = std::move(*irqs);
    }
    return out;
}

HealthReader* NetlinkBackend::health() {
    if (!health_) health_ = std::make_unique<SystemHealthReader>(opts_.health);
    return health_.get();
}

void NetlinkBackend::release_buffers() noexcept {
    rtnl_->release_buffer();
    eth_->release_buffer();
    if (observer_) observer_->events->release_buffers();
    if (spare_events_) spare_events_->release_buffers();
    if (health_) health_->release_buffers();
}

Result<void> NetlinkBackend::set_sysctl(const std::string& name, const std::string& value) {
    return procsys_.write(name, value);
}

Result<void> NetlinkBackend::set_tuned_profile(const std::string& profile) {
    return tuned::switch_profile(opts_.tuned, profile);
}

}  // namespace nictune
