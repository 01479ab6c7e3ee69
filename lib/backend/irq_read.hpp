// [irq] of the interfaces one read returns (NetlinkBackend::read_interfaces,
// Section::Irq), apart so that tests drive it on fixture trees: the sysfs
// and procfs files are per interface, /proc/interrupts and irqbalance
// (a /proc/*/comm scan and a "setup" request on its socket) are read once
// for all of them, and only when an interface has queue IRQs.
#pragma once

#include <vector>

#include "backend/backend.hpp"
#include "model/nic_state.hpp"
#include "sysinfo/irq.hpp"

namespace nictune {

// Fills nic.irq of each of `nics` (by its name), or a ReadProblem of
// Section::Irq. Honours req.irq_effective and req.irq_readback.
void read_irq_placements(const sysinfo::IrqFiles& files, std::vector<NicState>& nics,
                         const ReadRequest& req);

}  // namespace nictune
