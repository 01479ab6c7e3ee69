// The error table (issue 16 §5): every Errc has one name, one D-Bus error and
// one exit status, and what nictuned sends comes back to the client as the
// same code (Unsupported, Io and Internal used to arrive as Failed, then
// Kernel).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dbus/client.hpp"
#include "util/error.hpp"

namespace nictune {
namespace {

TEST(ErrorTable, EveryCodeOnceInEnumOrderWithADistinctName) {
    const auto table = errc_table();
    ASSERT_EQ(table.size(), static_cast<std::size_t>(Errc::Internal) + 1);
    std::set<std::string> names;
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(static_cast<std::size_t>(table[i].code), i);
        EXPECT_FALSE(table[i].name.empty());
        EXPECT_TRUE(names.insert(std::string(table[i].name)).second) << table[i].name;
        EXPECT_EQ(errc_name(table[i].code), table[i].name);
    }
}

TEST(ErrorTable, NamesAndDbusNamesRoundTrip) {
    for (const ErrcInfo& e : errc_table()) {
        EXPECT_EQ(errc_from_name(e.name), e.code) << e.name;
        const std::string dbus_name = dbus_error_name(e.code);
        EXPECT_EQ(dbus_name, "org.nictune1.Error." + std::string(e.name));
        EXPECT_EQ(errc_from_dbus_name(dbus_name), e.code) << dbus_name;
        // The client's mapping, which nictunectl's exit status follows.
        EXPECT_EQ(dbus::errc_from_dbus(dbus_name), e.code) << dbus_name;
    }
}

TEST(ErrorTable, CodesThatUsedToCollapseIntoFailedStayApart) {
    EXPECT_EQ(dbus::errc_from_dbus(dbus_error_name(Errc::Unsupported)), Errc::Unsupported);
    EXPECT_EQ(dbus::errc_from_dbus(dbus_error_name(Errc::Io)), Errc::Io);
    EXPECT_EQ(dbus::errc_from_dbus(dbus_error_name(Errc::Internal)), Errc::Internal);
    EXPECT_NE(dbus_error_name(Errc::Unsupported), dbus_error_name(Errc::Kernel));
}

TEST(ErrorTable, UnknownNamesOfOursAreKernelAndForeignNamesAreNone) {
    // An older nictuned's catch-all.
    EXPECT_EQ(errc_from_dbus_name("org.nictune1.Error.Failed"), Errc::Kernel);
    EXPECT_EQ(errc_from_dbus_name("org.freedesktop.DBus.Error.NoReply"), std::nullopt);
    EXPECT_EQ(dbus::errc_from_dbus("org.freedesktop.DBus.Error.NoReply"), Errc::Io);
    EXPECT_EQ(errc_from_name("NoSuch"), std::nullopt);
    EXPECT_EQ(errc_from_name(""), std::nullopt);
}

TEST(ErrorTable, UserErrorsAreExitTwoAndNothingElseIs) {
    for (const ErrcInfo& e : errc_table()) {
        Error err;
        err.code = e.code;
        EXPECT_EQ(err.is_user_error(), e.user_error) << e.name;
        EXPECT_EQ(e.exit_status, e.user_error ? 2 : 5) << e.name;
    }
    EXPECT_TRUE(errc_info(Errc::NoSuchProfile).user_error);
    EXPECT_FALSE(errc_info(Errc::Busy).user_error);
}

}  // namespace
}  // namespace nictune
