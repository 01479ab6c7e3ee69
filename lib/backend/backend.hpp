// The narrow interface between nictune's logic and the kernel. The netlink
// implementation talks to the kernel; tests use an in-memory fake with
// failure injection. Planner, transaction and D-Bus layers never see netlink.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/nic_state.hpp"
#include "model/value.hpp"
#include "util/error.hpp"

namespace nictune {

class HealthReader;

// An interface as a transaction addresses it: by ifindex, with its name for
// messages (a rename between plan and apply is caught by the ifindex).
struct NicRef {
    int ifindex = 0;
    std::string name;
};

// What read_system() reads: only what the caller needs (a plan for a
// profile without [tuned] must not pay for a D-Bus round trip).
struct SystemQuery {
    std::vector<std::string> sysctls;
    bool audit_defaults = false;  // plus the sysctls an audit shows
    bool tuned = false;           // tuned's state
};

struct ReadRequest {
    // Interfaces to read, by name. Empty: every interface of the namespace
    // (only device-backed ones unless include_virtual).
    std::vector<std::string> names;
    bool include_virtual = false;
    // Named links whose rtnetlink part the caller has from their RTM_NEWLINK
    // (link_state(): identity and [link] values, nothing else): a read of a
    // few named links takes them as they are instead of asking for each
    // link again, and reads only the rest (ethtool, driver, queues). A
    // backend may ignore them and read those links whole.
    std::vector<NicState> linked = {};
    // The ethtool families to read (bit 1 << Section); the rtnetlink link
    // attributes always come. Verifying a transaction reads only what it
    // changed. bit(Section::Link) alone is the rtnetlink part: the link
    // modes (ETHTOOL_MSG_LINKMODES: speed, duplex, autoneg, read-only keys
    // that audits show and no profile sets) need kLinkModes as well.
    uint32_t sections = kAllSections;
    // Driver identity (GDRVINFO ioctl, sysfs, hwdb).
    bool identity = true;
    // [irq]: effective_affinity_list too (audits show it; plans and
    // read-backs compare smp_affinity_list only).
    bool irq_effective = true;
    // [irq] read-backs: a transaction verifying what it wrote names, per
    // interface, the IRQs it wrote (read_back_irq). Those interfaces get only
    // these IRQs' smp_affinity_list, not /proc/interrupts, msi_irqs,
    // effective_affinity_list, the NUMA node or irqbalance: the plan's read
    // had those. A write of irqbalance's list needs the whole section (its
    // value is which of the interface's queue IRQs irqbalance leaves alone).
    struct IrqReadback {
        std::vector<unsigned> irqs;
        bool whole = false;
    };
    std::map<std::string, IrqReadback> irq_readback = {};  // by interface name
    // `irq`: an IRQ's affinity was written; nullopt: irqbalance's list was.
    void read_back_irq(const std::string& nic, std::optional<unsigned> irq) {
        auto& r = irq_readback[nic];
        if (irq)
            r.irqs.push_back(*irq);
        else
            r.whole = true;
    }
    // The IRQs to read back of `nic`, or nullptr: the whole section.
    [[nodiscard]] const IrqReadback* irq_readback_of(const std::string& nic) const {
        const auto it = irq_readback.find(nic);
        return it == irq_readback.end() || it->second.whole ? nullptr : &it->second;
    }

    static constexpr uint32_t kAllSections = ~0U;
    static constexpr uint32_t kLinkModes = 1U << 31;
    static_assert(kSectionCount < 31, "kLinkModes must not be a section's bit");
    static constexpr uint32_t bit(Section s) { return 1U << static_cast<unsigned>(s); }
    [[nodiscard]] bool wants(Section s) const { return (sections & bit(s)) != 0; }
    // Whether the ethtool family of `s` is read (for Link: the link modes).
    [[nodiscard]] bool wants_ethtool(Section s) const {
        return wants(s) && (s != Section::Link || (sections & kLinkModes) != 0);
    }
};

// One SET for one interface (see Backend::set_device / set_features).
struct DeviceChange {
    NicRef nic;
    Section section = Section::Link;
    std::vector<std::pair<Key, uint64_t>> values;
};
struct FeatureChange {
    NicRef nic;
    uint32_t nbits = 0;
    std::vector<std::pair<std::size_t, bool>> bits;
};

class Backend {
  public:
    virtual ~Backend() = default;

    // Reads the named interfaces (Errc::NoSuchInterface naming the first one
    // missing) or all of them. Results follow ifindex order.
    virtual Result<std::vector<NicState>> read_interfaces(const ReadRequest& req) = 0;

    // tuned state and sysctls, as asked.
    virtual Result<SystemState> read_system(const SystemQuery& query) = 0;

    // One SET of device keys of one section (Link: MTU/txqueuelen over
    // rtnetlink; Coalesce, Rings, Channels, Pause: one ethtool message).
    // Errors carry errno and the kernel's extack text.
    virtual Result<void> set_device(const NicRef& nic, Section section,
                                    std::span<const std::pair<Key, uint64_t>> values) = 0;
    // Requests features by bit index (of the kernel's feature names); only the
    // given bits change.
    virtual Result<void> set_features(const NicRef& nic, uint32_t nbits,
                                      std::span<const std::pair<std::size_t, bool>> bits) = 0;
    // Sets the driver's private flags by name (only the named ones change).
    // Errc::Unsupported when this backend or driver has none.
    virtual Result<void> set_private_flags(const NicRef& nic, std::span<const PrivateFlag> flags) {
        (void)flags;
        return fail(Errc::Unsupported, nic.name + ": private_flags: set",
                    "this backend cannot set private flags");
    }
    // One queue setting: Rps "cpus" (a CPU list) or "flow_cnt" of rx-`queue`,
    // Xps "cpus" of tx-`queue` (sysfs queues/).
    virtual Result<void> set_queue(const NicRef& nic, Section section, std::size_t queue,
                                   std::string_view what, const Scalar& value) {
        (void)section, (void)queue, (void)what, (void)value;
        return fail(Errc::Unsupported, nic.name + ": queues: set",
                    "this backend cannot set queue steering");
    }
    // [rss]: "indirection" (a table's text form, model/rss.hpp:
    // "default", "equal N" or every entry's queue) or "hash.FLOW" (ethtool's
    // field letters), through the ETHTOOL_SRSSH / ETHTOOL_SRXFH ioctls.
    virtual Result<void> set_rss(const NicRef& nic, std::string_view what, const Scalar& value) {
        (void)what, (void)value;
        return fail(Errc::Unsupported, nic.name + ": rss: set", "this backend cannot set RSS");
    }
    // [irq]: one queue IRQ's CPUs (/proc/irq/N/smp_affinity_list, a CPU
    // list). A managed IRQ (EIO) is Errc::Unsupported.
    virtual Result<void> set_irq_affinity(const NicRef& nic, unsigned irq, std::string_view cpus) {
        (void)irq, (void)cpus;
        return fail(Errc::Unsupported, nic.name + ": irq: set",
                    "this backend cannot set IRQ affinity");
    }
    // [irq]: which of the interface's queue IRQs irqbalance leaves alone
    // (`irqs`, a list in CPU list form: "34-36"); the bans of other IRQs
    // stay as they are.
    virtual Result<void> set_irqbalance_banned(const NicRef& nic, std::string_view irqs) {
        (void)irqs;
        return fail(Errc::Unsupported, nic.name + ": irq.irqbalance_banned: set",
                    "this backend cannot talk to irqbalance");
    }
    virtual Result<void> set_sysctl(const std::string& name, const std::string& value) = 0;
    // Switches tuned's profile (Errc::Unsupported when tuned is not running).
    virtual Result<void> set_tuned_profile(const std::string& profile) = 0;

    // Many SETs of one phase across interfaces, one result each, in order.
    // Implementations may pipeline them; these defaults send one by one.
    virtual std::vector<Result<void>> set_devices(std::span<const DeviceChange> changes) {
        std::vector<Result<void>> out;
        out.reserve(changes.size());
        for (const auto& c : changes)
            out.push_back(set_device(c.nic, c.section, c.values));
        return out;
    }
    virtual std::vector<Result<void>> set_features_many(std::span<const FeatureChange> changes) {
        std::vector<Result<void>> out;
        out.reserve(changes.size());
        for (const auto& c : changes)
            out.push_back(set_features(c.nic, c.nbits, c.bits));
        return out;
    }

    // Verification from the kernel's change notifications. A SET that
    // changes something makes the kernel send the new state of that family
    // (RTM_NEWLINK for the link, ETHTOOL_MSG_*_NTF for the ethtool families),
    // built inside the SET's own RTNL section; a transaction that keeps them
    // need not read its interfaces again. observe_changes(true) starts
    // keeping the newest one per interface and family, (false) stops and
    // forgets. Returns whether it is observing; the default never does.
    virtual bool observe_changes(bool on) {
        (void)on;
        return false;
    }
    // Whether reading `interfaces` interfaces back after their SETs costs
    // less than observing their notifications; a transaction then does not
    // observe (tx::Observing). The default: never.
    virtual bool read_back_is_cheaper(std::size_t interfaces) const {
        (void)interfaces;
        return false;
    }
    // What was observed, for each interface (by ifindex) and the families
    // asked of it (bit(Section::Link): the rtnetlink link). An interface
    // comes in `nics` when every asked family of it was notified
    // since observing began (its state holds those families and its
    // identity's name and ifindex); otherwise, or when notifications were
    // lost, its name is in `missing`, to be read.
    struct Observed {
        std::vector<NicState> nics;
        std::vector<std::string> missing;
    };
    struct ObserveRequest {
        NicRef nic;
        uint32_t sections = 0;  // ReadRequest::bit() of each family
    };
    virtual Observed observed(std::span<const ObserveRequest> wanted) {
        Observed out;
        for (const auto& w : wanted)
            out.missing.push_back(w.nic.name);
        return out;
    }

    // What the health checks read beyond the six sections (backend/
    // health.hpp); nullptr: this backend has none (audits then leave
    // health out).
    virtual HealthReader* health() { return nullptr; }

    // Frees what it keeps only to read the kernel's answers (netlink
    // receive buffers); the next read allocates it again. The daemon calls
    // it when it goes idle, before it gives freed memory back.
    virtual void release_buffers() noexcept {}
};

// Reads the interfaces `req` names that are still there. One request for
// all; when it fails (one of them vanished, which fails a named read as a
// whole, or a dump that link changes kept interrupting), one request per
// name, leaving out those that are gone. Any other error is returned.
Result<std::vector<NicState>> read_present(Backend& backend, const ReadRequest& req);

}  // namespace nictune
