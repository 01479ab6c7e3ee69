#include "model/irq.hpp"

#include <algorithm>

namespace nictune {

std::string irqbalance_ban_message(std::vector<unsigned> irqs) {
    std::string out = "settings ban irqs";
    std::sort(irqs.begin(), irqs.end());
    irqs.erase(std::unique(irqs.begin(), irqs.end()), irqs.end());
    std::erase(irqs, 0U);
    if (irqs.empty()) return out + " NONE";
    for (unsigned n : irqs)
        out += " " + std::to_string(n);
    return out;
}

}  // namespace nictune
