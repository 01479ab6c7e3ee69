#include "cli.hpp"
#include "util/heap.hpp"

int main(int argc, char** argv) {
    // nictunectl lives for one command: glibc's thresholds for that, and the
    // heap's next 8 MiB on huge pages (util/heap.hpp). An apply of 512
    // interfaces then takes 380 page faults instead of 1,749, and 39.7 ms of
    // CPU instead of 58.9 (medians), on this project's AMD EPYC machines
    // (BENCHMARKS.md, stop 44). A small command (--version, one interface)
    // costs two system calls more, and a huge page only if it allocates
    // past the stretch's first 2 MiB boundary. nictuned (long-lived,
    // trimmed when idle, an RSS target) keeps glibc's defaults and small
    // pages.
    nictune::tune_heap_for_one_command(std::size_t{8} << 20);
    return nictune::ctl::run(argc, argv);
}
