#include <gtest/gtest.h>

#include "support/netns.hpp"

namespace nictune::test {
namespace {

TEST(TestNetns, CreatesAnIsolatedNamespaceAndRemovesIt) {
    std::string name;
    {
        NICTUNE_REQUIRE_NETNS(ns);
        name = ns->name();
        auto r =
            ns->exec("ip link add name ntt0 type veth peer name ntt1 && ip -br link show ntt0");
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find("ntt0"), std::string::npos);
        // The host namespace does not see it.
        EXPECT_NE(run({"ip", "link", "show", "ntt0"}).status, 0);
    }
    EXPECT_NE(run({"ip", "netns", "exec", name, "true"}).status, 0) << "namespace left behind";
}

}  // namespace
}  // namespace nictune::test
