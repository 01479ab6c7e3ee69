// main() of the integration test binaries: the host view first
// (tests/support/host_view.hpp), then GoogleTest.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "support/host_view.hpp"

int main(int argc, char** argv) {
    // Listing the tests (gtest_discover_tests at build time) runs nothing.
    bool listing = false;
    for (int i = 1; i < argc; ++i)
        listing |= std::strcmp(argv[i], "--gtest_list_tests") == 0;
    if (!listing) {
        const std::string why = nictune::test::enter_host_view();
        // As root the view must exist: without it an outcome would depend on
        // the host. Not root, the tests that need root skip anyway.
        if (!why.empty() && geteuid() == 0) {
            std::fprintf(stderr, "cannot isolate the tests from the host: %s\n", why.c_str());
            return 1;
        }
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
