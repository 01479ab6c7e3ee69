#include "util/boxed.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "util/error.hpp"

namespace nictune {
namespace {

Error sample(const char* context) {
    return Error{Errc::Kernel, 22, context, "refused", {}};
}

// As std::optional for what a step's error needs: empty by default and from
// nullopt, set from a value or an optional, copied deep.
TEST(Boxed, HoldsAnOptionalValueAndCopiesItDeep) {
    const Boxed<Error> none;
    EXPECT_FALSE(none);
    EXPECT_FALSE(none.has_value());
    EXPECT_FALSE(Boxed<Error>(std::nullopt));

    Boxed<Error> a = sample("p4p1");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->context, "p4p1");
    EXPECT_EQ((*a).sys_errno, 22);

    Boxed<Error> b = a;  // deep: changing the copy leaves a as it was
    b->context = "p4p2";
    EXPECT_EQ(a->context, "p4p1");
    EXPECT_EQ(b->context, "p4p2");
    b = a;
    EXPECT_EQ(b->context, "p4p1");
    EXPECT_NE(&*b, &*a) << "a copy of its own";

    const std::optional<Error> some = sample("eth0");
    b = some;
    EXPECT_EQ(b->context, "eth0");
    b = std::optional<Error>();
    EXPECT_FALSE(b);

    Boxed<Error> moved = std::move(a);
    EXPECT_EQ(moved->context, "p4p1");
    moved.reset();
    EXPECT_FALSE(moved);
    b = moved;  // copying an empty box
    EXPECT_FALSE(b);
}

}  // namespace
}  // namespace nictune
