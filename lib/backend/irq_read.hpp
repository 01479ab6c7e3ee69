// [irq] of the interfaces one read returns (NetlinkBackend::read_interfaces,
// Section::Irq), apart so that tests drive it on fixture trees: the sysfs
// and procfs files are per interface, /proc/interrupts and irqbalance
// (a /proc/*/comm scan and a "setup" request on its socket) are read once
// for all of them, and only when an interface has queue IRQs.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.hpp"
#include "model/nic_state.hpp"
#include "sysinfo/irq.hpp"

namespace nictune {

// Fills nic.irq of each of `nics` (by its name), or a ReadProblem of
// Section::Irq. Honours req.irq_effective and req.irq_readback.
void read_irq_placements(const sysinfo::IrqFiles& files, std::vector<NicState>& nics,
                         const ReadRequest& req);

// The same one interface at a time, for a reader that visits each
// interface's sysfs directory once for all it reads there
// (NetlinkBackend: queues, then IRQs): /proc/interrupts and irqbalance are
// read at the first interface that needs them and kept for the others.
class IrqPlacementReader {
  public:
    IrqPlacementReader(const sysinfo::IrqFiles& files, const ReadRequest& req)
        : files_(files), req_(req) {}
    // `ifdir`: the interface's open directory (sysinfo::open_interface_dir),
    // -1 to find it by its name. Not needed for an interface whose IRQs are
    // read back (req.irq_readback_of).
    void read(NicState& nic, int ifdir = -1);

  private:
    const sysinfo::IrqFiles& files_;
    const ReadRequest& req_;
    std::optional<Result<sysinfo::InterruptTable>> table_;
    std::optional<std::optional<IrqBalance>> irqbalance_;
};

// [irq] as the writes read it back (IrqFiles::write_affinity reads each
// smp_affinity_list on the descriptor it wrote through): what a backend
// that observes a transaction (Backend::observe_changes) answers its
// read-back of [irq] from, instead of opening every written file again.
// The newest write of an IRQ counts. An interface is answered only when
// everything written of its [irq] was read back so: a write that could not
// read back, or irqbalance's list (its value is the whole section), makes
// it one to read.
class IrqWritesSeen {
  public:
    // A write's result: its read-back (nullopt: none, read the interface
    // again). A failed write leaves nothing to verify (the transaction
    // judges it by its error), so the IRQ is dropped.
    void wrote(int ifindex, unsigned irq, const Result<std::optional<std::string>>& result);
    // Written in a way no read-back here covers.
    void unseen(int ifindex);
    // The written IRQs of `ifindex` with their read-backs (IrqFiles::read_back's
    // form), or nullopt when it must be read: unseen, or nothing written.
    [[nodiscard]] std::optional<IrqPlacement> placement(int ifindex) const;
    void clear() { by_ifindex_.clear(); }

  private:
    struct Seen {
        std::vector<QueueIrq> irqs;                    // in the order first written
        std::unordered_map<unsigned, std::size_t> at;  // irq -> index in irqs
        std::vector<bool> dropped;                     // by index: its last write failed
        bool unseen = false;
    };
    std::unordered_map<int, Seen> by_ifindex_;
};

}  // namespace nictune
