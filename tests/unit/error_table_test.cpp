// The error table (issue 16 §5): every Errc has one name, one D-Bus error and
// one exit status, and what nictuned sends comes back to the client as the
// same code (Unsupported, Io and Internal used to arrive as Failed, then
// Kernel).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dbus/client.hpp"
#include "report/plan_report.hpp"
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

// Issue 16 §5: what an error is about is a field of its own, not only a
// part of the context string.
TEST(ErrorFields, AnErrorAboutAnInterfaceNamesItAsAField) {
    auto e = fail_on(Errc::NoSuchInterface, "nt9", "no such interface").error();
    EXPECT_EQ(e.interface, "nt9");
    EXPECT_EQ(e.setting, "");
    EXPECT_EQ(e.str(), "nt9: no such interface") << "the text stays as it was";
}

TEST(ErrorFields, WithinAnInterfacePrefixesTheContextAndKeepsAnInterfaceAlreadyNamed) {
    Error e = fail(Errc::Kernel, "link", "Invalid argument").error();
    e = std::move(e).within_interface("p4p1");
    EXPECT_EQ(e.context, "p4p1: link");
    EXPECT_EQ(e.interface, "p4p1");
    // An alternative name the caller used prefixes the text, the device's
    // own name found below stays the field.
    e = std::move(e).within_interface("altname0");
    EXPECT_EQ(e.context, "altname0: p4p1: link");
    EXPECT_EQ(e.interface, "p4p1");
    // within() is for steps, not interfaces.
    Error s = std::move(fail(Errc::Io, "", "gone").error()).within("link events");
    EXPECT_EQ(s.interface, "");
}

TEST(ErrorFields, AboutSetsOnlyWhatItIsGiven) {
    Error e = fail(Errc::Kernel, "p4p1: rings.rx=8192: set", "Invalid argument").error();
    e = std::move(e).about("p4p1", "rings.rx");
    EXPECT_EQ(e.interface, "p4p1");
    EXPECT_EQ(e.setting, "rings.rx");
    e = std::move(e).about("", "rings.tx");
    EXPECT_EQ(e.interface, "p4p1");
    EXPECT_EQ(e.setting, "rings.tx");
    EXPECT_EQ(e.context, "p4p1: rings.rx=8192: set");
}

TEST(ErrorFields, TheJsonObjectHasInterfaceAndSettingOnlyWhenTheErrorNamesThem) {
    Error e{Errc::Kernel, 22, "p4p1: rings.rx=8192: set", "Invalid argument", "too big"};
    auto plain = report::error_json(e);
    EXPECT_FALSE(plain.contains("interface")) << plain.dump();
    EXPECT_FALSE(plain.contains("setting")) << plain.dump();
    e = std::move(e).about("p4p1", "rings.rx");
    auto j = report::error_json(e);
    EXPECT_EQ(j.at("interface"), "p4p1");
    EXPECT_EQ(j.at("setting"), "rings.rx");
    EXPECT_EQ(j.at("code"), "Kernel");
    EXPECT_EQ(j.at("errno"), 22);
    EXPECT_EQ(j.at("context"), "p4p1: rings.rx=8192: set");
    EXPECT_EQ(j.at("text"), "p4p1: rings.rx=8192: set: Invalid argument (kernel: too big)");
}

}  // namespace
}  // namespace nictune
