#include "util/heap.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace nictune {

HugeHeap tune_heap_for_one_command(std::size_t huge_stretch) {
    constexpr int kMmapThreshold = 32 << 20;
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;
    mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (huge_stretch < kHuge || huge_stretch > std::size_t{kMmapThreshold} / 2) return {};
    // A block of the stretch's size, below the mmap threshold, comes from
    // the heap: its free space if that has so much, else the heap grows.
    // malloc writes only its header, free() gives it back (kept: the trim
    // threshold), and the allocations after take it first.
    void* block = std::malloc(huge_stretch);
    if (!block) return {};
    const auto from = reinterpret_cast<uintptr_t>(block);
    const auto to = reinterpret_cast<uintptr_t>(sbrk(0));
    std::free(block);
    // Only a block of the main heap, below the break (not another
    // allocator's, as under a sanitizer, nor an mmap()ed one).
    if (to <= from || to - from < huge_stretch) return {};
    const uintptr_t begin = (from + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = std::min(to, from + huge_stretch) & ~(kHuge - 1);
    if (end <= begin) return {};
    if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) != 0) return {};
    return HugeHeap{begin, end};
}

}  // namespace nictune
