// An error's fields on the wire (dbus/error_details.hpp): the dictionary
// nictuned sends after an error reply's message reads back as the same
// Error, and the reader takes nothing it does not know.
#include "dbus/error_details.hpp"

#include <gtest/gtest.h>

#include <string>

#include "report/plan_report.hpp"
#include "util/error.hpp"

namespace nictune {
namespace {

// What the client starts from: the code from the error's name, the message
// string as the message.
Error from_name_and_text(const Error& sent) {
    Error e;
    e.code = sent.code;
    e.message = sent.str();
    return e;
}

TEST(ErrorDetails, CarryEveryFieldAndReadBackAsTheSameError) {
    Error sent{Errc::Kernel,
               22,
               "p4p1: rings.rx=8192: set",
               "Invalid argument",
               "requested ring size exceeds maximum",
               "p4p1",
               "rings.rx"};
    Error got = from_name_and_text(sent);
    dbus::read_error_details(dbus::error_details(sent), got);
    EXPECT_EQ(got.sys_errno, 22);
    EXPECT_EQ(got.context, sent.context);
    EXPECT_EQ(got.message, sent.message);
    EXPECT_EQ(got.kernel_message, sent.kernel_message);
    EXPECT_EQ(got.interface, "p4p1");
    EXPECT_EQ(got.setting, "rings.rx");
    EXPECT_EQ(report::error_json(got), report::error_json(sent));
}

TEST(ErrorDetails, AnEmptyFieldReadsBackEmptyNotAsTheMessageString) {
    Error sent{Errc::NoSuchInterface, 0, "nt9", "no such interface", {}, "nt9", {}};
    Error got = from_name_and_text(sent);
    dbus::read_error_details(dbus::error_details(sent), got);
    EXPECT_EQ(got.message, "no such interface");
    EXPECT_EQ(got.setting, "");
    EXPECT_EQ(got.kernel_message, "");
    EXPECT_EQ(report::error_json(got), report::error_json(sent));
}

TEST(ErrorDetails, LeaveAloneWhatIsOfAnotherTypeOrUnknown) {
    Error got{Errc::InvalidProfile, 0, "", "p.toml:1:1: bad", {}};
    dbus::read_error_details({{"interface", sdbus::Variant(int32_t{7})},
                              {"errno", sdbus::Variant(std::string("22"))},
                              {"setting", sdbus::Variant(std::string("link.mtu"))},
                              {"from_the_future", sdbus::Variant(true)}},
                             got);
    EXPECT_EQ(got.interface, "");
    EXPECT_EQ(got.sys_errno, 0);
    EXPECT_EQ(got.setting, "link.mtu");
    EXPECT_EQ(got.message, "p.toml:1:1: bad");
}

// sd-bus refuses a string that is not UTF-8 (the variant would throw): a
// profile's file name need not be.
TEST(ErrorDetails, AreValidUtf8WhateverTheErrorHolds) {
    Error sent{Errc::InvalidProfile, 0, "/etc/nictune/profiles/\xff.toml:2:7", "bad", {}};
    dbus::ErrorDetails details;
    ASSERT_NO_THROW(details = dbus::error_details(sent));
    EXPECT_EQ(details.at("context").get<std::string>(),
              "/etc/nictune/profiles/\xef\xbf\xbd.toml:2:7");
}

}  // namespace
}  // namespace nictune
