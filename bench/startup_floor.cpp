// nictune_bench_startup_floor: a program that does nothing, linked like
// nictunectl (the same shared libraries in the same order; bench/CMakeLists.txt
// and bench.py check it). bench/run's start-up scenario times it next to
// `nictunectl --version`: the difference is nictune's own start-up (its
// relocations, static initialisers, the command table), not the libraries'.
int main() {
    return 0;
}
