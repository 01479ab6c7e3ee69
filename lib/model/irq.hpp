// [irq]: the message that tells irqbalance which IRQs to leave alone, shared
// by the plan (does it fit?) and sysinfo (which sends it).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nictune {

// What irqbalance reads of one message on its socket (irqbalance 1.9
// irqbalance.c sock_handle: char buff[500], one recvmsg).
inline constexpr std::size_t kIrqbalanceMessageLimit = 500;

// "settings ban irqs 34 35 36" (sorted, without duplicates), or
// "settings ban irqs NONE" for none. irqbalance's list parser stops at 0
// (strtoul's "nothing"): IRQ 0 is the timer and never a queue's, so it is
// left out.
std::string irqbalance_ban_message(std::vector<unsigned> irqs);

}  // namespace nictune
