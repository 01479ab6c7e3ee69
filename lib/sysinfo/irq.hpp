// [irq]: the queue IRQs of an interface, where they may run, and irqbalance.
//
// Which IRQs: the MSI/MSI-X vectors of the interface's PCI function
// (/sys/class/net/IF/device/msi_irqs) that /proc/interrupts names as queue
// vectors: ixgbe "IF-TxRx-N" (or IF-rx-N / IF-tx-N when a vector has one
// ring), i40e "i40e-IF-TxRx-N", e1000e "IF-rx-0" and "IF-tx-0",
// virtio "virtioK-input.N". The link/"other" vector (named IF on e1000e and
// ixgbe, i40e's misc vector, i40e's fdir "IF:fdir") carries no queue number
// and stays where it is, as Intel's set_irq_affinity leaves it.
//
// irqbalance (1.9, Debian 12's 1.9.2) listens on a unix socket,
// /run/irqbalance/irqbalance<PID>.sock, for root only (SO_PASSCRED): "setup"
// answers "SLEEP s IRQ n LOAD l DIFF d CLASS c ... BANNED mask", where the
// IRQ entries are the IRQs it leaves alone; "settings ban irqs N M ..."
// *replaces* that list ("NONE" empties it), including the --banirq ones, and
// makes it rescan. A ban lasts until irqbalance restarts. irqbalance reads one
// message of at most 500 bytes (sock_handle's buffer), which bounds the list.
//
// Roots are parameters so that tests run on fixture trees and a stand-in
// socket.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/nic_state.hpp"
#include "sysinfo/procfs.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune::sysinfo {

// Whether an action name of /proc/interrupts is a queue vector.
bool is_queue_irq_name(std::string_view name);

// The IRQ numbers irqbalance's "setup" answer lists as banned.
std::vector<unsigned> parse_irqbalance_setup(std::string_view reply);
// The ban message itself is model/irq.hpp's (the plan checks its length).

struct IrqRoots {
    std::filesystem::path sysfs = "/sys";
    std::filesystem::path proc = "/proc";
    std::filesystem::path run = "/run";
};

class IrqFiles {
  public:
    explicit IrqFiles(IrqRoots roots = {});

    // The interface's queue IRQs with their affinity (and effective_affinity_list
    // when `effective`: audits show it, plans compare smp_affinity_list only) and
    // its NUMA node's CPUs; nullopt when it has no queue IRQs (no device, no MSI
    // vectors, or none requested: the interface is down). /proc/interrupts is
    // the caller's, read once for many interfaces, and so is irqbalance (machine
    // wide: irqbalance(), once per read of many interfaces).
    [[nodiscard]] Result<std::optional<IrqPlacement>> read(std::string_view ifname,
                                                           const InterruptTable& table,
                                                           bool effective = true) const;
    // The same below the interface's open directory (open_interface_dir in
    // sysfs.hpp; -1: by the whole path, as read()).
    [[nodiscard]] Result<std::optional<IrqPlacement>> read_at(int ifdir, std::string_view ifname,
                                                              const InterruptTable& table,
                                                              bool effective = true) const;
    // A transaction's read-back of the IRQs it wrote: only their
    // smp_affinity_list (absent when the IRQ went away), one open and one read
    // each. The plan's read had the rest (names, node, irqbalance).
    [[nodiscard]] IrqPlacement read_back(std::span<const unsigned> irqs) const;
    [[nodiscard]] Result<InterruptTable> interrupts() const;
    // Only the queue IRQ numbers (what a ban covers): msi_irqs and
    // /proc/interrupts, no affinity file.
    [[nodiscard]] std::vector<unsigned> queue_irqs(std::string_view ifname) const;

    // Writes /proc/irq/N/smp_affinity_list and reads it back on the same
    // descriptor: the CPU list the kernel shows from then on (procfs makes
    // the text at the first read, after the write: the mask set, or the one
    // pending until the IRQ next fires), in read()'s form; nullopt when the
    // file could be opened for writing only. One open for both, where a
    // read-back that opens the file again would be two. A managed IRQ (EIO)
    // and a gone one are Errc::Unsupported, naming the IRQ. `context` names
    // the setting.
    [[nodiscard]] Result<std::optional<std::string>> write_affinity(
        unsigned irq, std::string_view cpulist, const std::string& context) const;

    // The running irqbalance: a process whose comm is "irqbalance", and its
    // socket; banned IRQs asked over the socket. nullopt: not running.
    [[nodiscard]] std::optional<IrqBalance> irqbalance() const;
    // Of the interface's queue IRQs (those it has now and those in
    // `wanted`), irqbalance leaves exactly `wanted` alone afterwards; every
    // other ban (--banirq, another interface's) stays as it is.
    [[nodiscard]] Result<void> ban_for_interface(std::string_view ifname,
                                                 const std::vector<unsigned>& wanted,
                                                 const std::string& context) const;

    [[nodiscard]] const IrqRoots& roots() const { return roots_; }

  private:
    IrqRoots roots_;
    // ROOT/irq, opened once: the per-IRQ files are opened relative to it,
    // two path components to walk instead of the whole path, twice a placed
    // IRQ (the plan's read; the write and its read-back). Empty when it did
    // not open (then full paths).
    UniqueFd irq_dir_;
};

// One request to irqbalance's socket and its whole answer (irqbalance closes
// the connection after answering; "settings" get no answer). `deadline`
// bounds all of it, connect, send and the whole answer: a peer that trickles
// bytes (or never closes) is an error when it runs out, not a wait per recv().
inline constexpr std::chrono::milliseconds kIrqbalanceDeadline{2000};
Result<std::string> irqbalance_request(const std::filesystem::path& socket, std::string_view msg,
                                       std::chrono::milliseconds deadline = kIrqbalanceDeadline);

}  // namespace nictune::sysinfo
