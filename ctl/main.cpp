#include "cli.hpp"

int main(int argc, char** argv) {
    return nictune::ctl::run(argc, argv);
}
