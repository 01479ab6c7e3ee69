#include <malloc.h>

#include "cli.hpp"

int main(int argc, char** argv) {
    // nictunectl lives for one command. glibc serves blocks from 128 KiB up
    // (a vector of 512 interfaces' state, their report) with fresh mmap()s
    // that it unmaps on free, and gives the heap's top back past 128 KiB:
    // every such block is faulted in page by page, again and again. Kept
    // instead: an audit of 512 interfaces takes 1,005 page faults instead of
    // 1,453, an apply 3,280 instead of 3,890. nictuned (long-lived, trimmed
    // when idle) keeps glibc's defaults.
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    return nictune::ctl::run(argc, argv);
}
