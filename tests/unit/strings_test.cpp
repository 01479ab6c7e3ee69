#include "util/strings.hpp"

#include <gtest/gtest.h>

namespace nictune {
namespace {

TEST(VersionCompare, OrdersDriverVersionsNumerically) {
    EXPECT_LT(compare_versions("3.15.1-k", "4.0.1-k"), 0);
    EXPECT_LT(compare_versions("4.0.1-k", "5.3.6"), 0);
    EXPECT_LT(compare_versions("2.9.21", "2.13.10"), 0);
    EXPECT_EQ(compare_versions("5.3.6", "5.3.6"), 0);
    EXPECT_GT(compare_versions("5.3.6.1", "5.3.6"), 0);
    EXPECT_EQ(compare_versions("05.3", "5.3"), 0);
}

TEST(IfName, AcceptsWhatTheKernelAccepts) {
    EXPECT_TRUE(valid_ifname("p4p1"));
    EXPECT_TRUE(valid_ifname("enp3s0f0np0"));
    EXPECT_FALSE(valid_ifname(""));
    EXPECT_FALSE(valid_ifname("a/b"));
    EXPECT_FALSE(valid_ifname("1234567890123456"));
    EXPECT_FALSE(valid_ifname(".."));
    EXPECT_FALSE(valid_ifname("a b"));
}

TEST(Quote, EscapesNonPrintables) {
    EXPECT_EQ(quote("p4p1"), "'p4p1'");
    EXPECT_EQ(quote(std::string("a\0b\n", 4)), "'a\\x00b\\x0a'");
}

TEST(ClosestMatch, SuggestsOnlyPlausibleTypos) {
    EXPECT_EQ(closest_match("rx_usec", {"rx_usecs", "tx_usecs"}), "rx_usecs");
    EXPECT_FALSE(closest_match("banana", {"rx_usecs", "tx_usecs"}));
}

}  // namespace
}  // namespace nictune
