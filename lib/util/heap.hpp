// glibc's allocator set up for a program that lives for one command
// (nictunectl), where first touches of fresh memory are most of what the
// heap costs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nictune {

struct HugeHeap {
    uintptr_t begin = 0, end = 0;  // the advised stretch, 2 MiB aligned; empty: none
    [[nodiscard]] bool advised() const { return end > begin; }
};

// Process-wide, called once at the start:
// - Blocks up to 32 MiB come from the heap, and freed memory stays there
//   (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD). glibc's defaults serve blocks
//   from 128 KiB up (a vector of 512 interfaces' state, their report) with
//   fresh mmap()s that it unmaps on free, and give the heap's top back
//   past 128 KiB: every such block is faulted in page by page, again and
//   again. Kept: an audit of 512 interfaces took 1,005 page faults instead
//   of 1,453, an apply 3,280 instead of 3,890.
// - With huge_stretch of 2 MiB to 16 MiB, a block that large is taken from
//   the heap (which grows when it has no such free space) and given back
//   untouched but for malloc's header, and its 2 MiB-aligned part is
//   advised for transparent huge pages (MADV_HUGEPAGE): one fault maps
//   2 MiB, and the allocations that follow use that memory. glibc does this
//   for its whole heap with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which a
//   process cannot set for itself. A fault costs 11-15 us on a VM whose
//   hypervisor handles each one (BENCHMARKS.md, stop 44): an apply of 512
//   interfaces touches 6.6 MiB of heap, 1,749 faults, a third of its time.
//   Nothing is advised when malloc is not glibc's main heap (a sanitizer's)
//   or the kernel has no transparent huge pages (madvise fails); where
//   none is free and none can be compacted, the kernel uses small pages.
//   The first allocation past a 2 MiB boundary of the stretch makes 2 MiB
//   resident: for programs that live for one command.
HugeHeap tune_heap_for_one_command(std::size_t huge_stretch);

}  // namespace nictune
