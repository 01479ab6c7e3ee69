#include <gtest/gtest.h>

#include "profile/loader.hpp"

namespace nictune::profile {
namespace {

Store shipped() {
    StoreOptions o;
    o.search_path = {std::string(NICTUNE_SOURCE_DIR) + "/profiles"};
    o.require_root_owned = false;
    return Store(o);
}

TEST(ShippedProfiles, AllLoadAndValidate) {
    auto list = shipped().list();
    std::vector<std::string> names;
    for (const auto& e : list) {
        EXPECT_FALSE(e.error) << e.name << ": " << e.error->str();
        EXPECT_FALSE(e.description.empty()) << e.name;
        names.push_back(e.name);
    }
    EXPECT_EQ(names,
              (std::vector<std::string>{"10g-lowlatency", "jumbo-9014", "x520-lowlatency",
                                        "x520-throughput", "x710-lowlatency", "x710-throughput"}));
}

TEST(ShippedProfiles, EncodeTheFieldRecipes) {
    auto lat = shipped().load("x520-lowlatency");
    ASSERT_TRUE(lat);
    EXPECT_EQ(lat->setting(Key::CoalAdaptiveRx)->value, 1U);
    EXPECT_EQ(lat->tuned_profile, "latency-performance");
    EXPECT_EQ(lat->driver.bad_versions, std::vector<std::string>{"4.0.1-k"});
    auto jumbo = shipped().load("jumbo-9014");
    ASSERT_TRUE(jumbo);
    EXPECT_EQ(jumbo->setting(Key::LinkMtu)->value, 9014U);
    auto x710 = shipped().load("x710-throughput");
    ASSERT_TRUE(x710);
    EXPECT_EQ(x710->driver.bad_versions, std::vector<std::string>{"2.13.10"});
    // Never a default: tcp_timestamps=0 costs PAWS and RTT estimation.
    for (const auto& e : shipped().list())
        for (const auto& s : e.profile->sysctl)
            EXPECT_NE(s.name, "net.ipv4.tcp_timestamps") << e.name;
}

}  // namespace
}  // namespace nictune::profile
