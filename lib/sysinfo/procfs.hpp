// The procfs tables the health checks read once per audit:
// /proc/interrupts (per-IRQ counts per CPU and the action names),
// /proc/net/softnet_stat (per-CPU backlog drops and time squeezes) and the
// affinity files of /proc/irq/N. Parsers are pure functions on text so that
// fixtures and the fuzzer drive them; the root is a parameter.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/health.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace nictune::sysinfo {

struct InterruptLine {
    unsigned irq = 0;
    std::vector<uint64_t> per_cpu;  // by column of the header
    std::string chip;               // "PCI-MSIX-0000:03:00.0"
    std::string name;               // action name(s): "p4p1-TxRx-0"
};

struct InterruptTable {
    std::vector<unsigned> cpus;  // the header's CPU numbers, by column
    std::vector<InterruptLine> lines;
    std::unordered_map<unsigned, std::size_t> by_irq;  // irq -> index in lines
    [[nodiscard]] const InterruptLine* find(unsigned irq) const;
};

// /proc/interrupts. Rows that are not numbered IRQs (NMI, LOC, ERR, ...) are
// skipped; a malformed header or numbered row is an error naming its line.
Result<InterruptTable> parse_interrupts(std::string_view text);

// /proc/net/softnet_stat: one row of hex columns per online CPU. Since
// Linux 5.10 column 13 is the CPU number; before that the row's position
// is (which is wrong once a CPU is offline, and the caller says so).
struct SoftnetTable {
    std::vector<SoftnetCpu> cpus;
    bool cpu_column = false;  // the CPU numbers came from the kernel
};
Result<SoftnetTable> parse_softnet(std::string_view text);

// The queue number an IRQ name carries ("p4p1-TxRx-3" -> 3,
// "virtio2-input.0" -> 0), nullopt for the link or config vector.
std::optional<int> queue_of_irq_name(std::string_view name);

class ProcFs {
  public:
    explicit ProcFs(std::filesystem::path root = "/proc");
    Result<InterruptTable> interrupts() const;
    Result<SoftnetTable> softnet() const;
    // /proc/irq/N/smp_affinity_list and effective_affinity_list; absent when
    // the IRQ went away (or never existed).
    struct Affinity {
        std::optional<std::string> affinity;
        std::optional<std::string> effective;
    };
    [[nodiscard]] Affinity irq_affinity(unsigned irq) const;
    [[nodiscard]] const std::filesystem::path& root() const { return root_; }

  private:
    std::filesystem::path root_;
    // ROOT/irq, opened at the first irq_affinity(): the files of each IRQ
    // are then two components below it, not a whole path each (a device's
    // vectors are read by the hundred). Left empty when it did not open
    // (then whole paths).
    mutable UniqueFd irq_dir_;
    mutable bool irq_dir_tried_ = false;
};

}  // namespace nictune::sysinfo
