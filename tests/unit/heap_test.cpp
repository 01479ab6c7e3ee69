// util/heap.hpp: nictunectl's allocator settings and its heap stretch on
// transparent huge pages. The kernel's own account (/proc/self/smaps) is
// the oracle: the stretch lies in the heap's mapping, which carries
// MADV_HUGEPAGE's flag ("hg").
#include "util/heap.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace nictune {
namespace {

struct Mapping {
    uintptr_t begin = 0, end = 0;
    std::string name;     // "[heap]", a path, or empty
    std::string vmflags;  // "rd wr mr mw me ac hg ..."
};

// The mapping of /proc/self/smaps that contains `addr`.
std::optional<Mapping> mapping_of(uintptr_t addr) {
    std::ifstream in("/proc/self/smaps");
    std::string line;
    std::optional<Mapping> cur;
    while (std::getline(in, line)) {
        if (line.starts_with("VmFlags:")) {
            if (cur && addr >= cur->begin && addr < cur->end) {
                cur->vmflags = line.substr(8);
                return cur;
            }
            continue;
        }
        const auto dash = line.find('-');
        const auto space = line.find(' ');
        if (dash == std::string::npos || space == std::string::npos || dash > space) continue;
        const std::string first = line.substr(0, dash);
        if (first.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
        Mapping m;
        m.begin = std::stoull(first, nullptr, 16);
        m.end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
        std::istringstream rest(line.substr(space));
        std::string field;
        for (int i = 0; i < 4 && rest >> field; ++i) {  // perms, offset, device, inode
        }
        rest >> m.name;
        cur = m;
    }
    return std::nullopt;
}

bool has_flag(const std::string& vmflags, const std::string& flag) {
    std::istringstream in(vmflags);
    std::string f;
    while (in >> f)
        if (f == flag) return true;
    return false;
}

TEST(HeapOnHugePages, AdvisesAnAlignedStretchOfTheMainHeapOrNothing) {
    constexpr std::size_t kStretch = std::size_t{8} << 20;
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;
    const HugeHeap h = tune_heap_for_one_command(kStretch);
#if defined(__SANITIZE_ADDRESS__)
    // The sanitizer's allocator is not glibc's heap: nothing is advised.
    EXPECT_FALSE(h.advised());
    GTEST_SKIP() << "built with AddressSanitizer: malloc is not glibc's main heap here";
#endif
    if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
        EXPECT_FALSE(h.advised()) << "madvise(MADV_HUGEPAGE) fails without THP";
        GTEST_SKIP() << "this kernel has no transparent huge pages";
    }
    ASSERT_TRUE(h.advised());
    EXPECT_EQ(h.begin % kHuge, 0U);
    EXPECT_EQ(h.end % kHuge, 0U);
    // Of the 8 MiB, at least the aligned 6 MiB inside it.
    EXPECT_GE(h.end - h.begin, kStretch - kHuge);
    EXPECT_LE(h.end - h.begin, kStretch + kHuge);
    EXPECT_LE(h.end, reinterpret_cast<uintptr_t>(sbrk(0))) << "below the program break";
    for (const uintptr_t at : {h.begin, h.end - 1}) {
        const auto m = mapping_of(at);
        ASSERT_TRUE(m) << std::hex << at;
        EXPECT_EQ(m->name, "[heap]") << std::hex << at;
        EXPECT_TRUE(has_flag(m->vmflags, "hg")) << m->vmflags;
    }
}

// Blocks of a few MiB come from the heap afterwards (the mmap threshold),
// and a stretch smaller than a huge page is not advised.
TEST(HeapOnHugePages, ServesLargeBlocksFromTheHeapAndAdvisesNoStretchBelow2MiB) {
    EXPECT_FALSE(tune_heap_for_one_command(0).advised());
    EXPECT_FALSE(tune_heap_for_one_command(std::size_t{1} << 20).advised());
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "built with AddressSanitizer: malloc is not glibc's";
#endif
    void* block = std::malloc(std::size_t{4} << 20);
    ASSERT_NE(block, nullptr);
    const auto m = mapping_of(reinterpret_cast<uintptr_t>(block));
    std::free(block);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->name, "[heap]") << "a 4 MiB block, with glibc's default threshold its own mmap()";
}

}  // namespace
}  // namespace nictune
