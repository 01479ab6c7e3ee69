// nictunectl's argument parsing: the command table defines only the command
// being run (ctl/cli.cpp), so these pin that what a user types is read as
// before: global options' values are not taken for commands, every command
// is listed, and an error names what is wrong with every command's
// arguments known. None of them needs root or a kernel change.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace nictune {
namespace {

test::CommandResult ctl(std::vector<std::string> args) {
    args.insert(args.begin(), NICTUNECTL_PATH);
    return test::run(args);
}

TEST(CtlArgs, HelpListsEveryCommand) {
    const auto r = ctl({"--help"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* cmd : {"audit", "apply", "diff", "rollback", "profiles", "status", "reload",
                            "keys", "probe", "confirm"})
        EXPECT_NE(r.out.find(std::string("\n  ") + cmd), std::string::npos) << cmd << "\n" << r.out;
}

TEST(CtlArgs, ACommandsHelpShowsItsOwnOptions) {
    const auto apply = ctl({"apply", "--help"});
    ASSERT_EQ(apply.status, 0) << apply.err;
    EXPECT_NE(apply.out.find("--verify-peer"), std::string::npos) << apply.out;
    EXPECT_EQ(apply.out.find("--prometheus"), std::string::npos) << apply.out;
    const auto audit = ctl({"--color", "never", "audit", "--help"});
    ASSERT_EQ(audit.status, 0) << audit.err;
    EXPECT_NE(audit.out.find("--prometheus"), std::string::npos) << audit.out;
}

// "apply" here is the state directory's name, "diff" the colour's (refused
// as a colour): the command is the first word that is no option's value.
TEST(CtlArgs, AGlobalOptionsValueIsNotTakenForTheCommand) {
    const auto keys = ctl({"--direct", "--state-dir", "apply", "keys", "--json"});
    ASSERT_EQ(keys.status, 0) << keys.err;
    const auto j = nlohmann::json::parse(keys.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << keys.out.substr(0, 200);
    EXPECT_FALSE(j.empty());
    const auto same = ctl({"--state-dir=apply", "keys", "--json"});
    ASSERT_EQ(same.status, 0) << same.err;
    EXPECT_EQ(same.out, keys.out);

    const auto colour = ctl({"--color", "diff", "keys"});
    EXPECT_EQ(colour.status, 2);
    EXPECT_NE(colour.err.find("--color"), std::string::npos) << colour.err;
}

// Another command's option, a conflict and a missing argument are refused
// with exit 2 and CLI11's message.
TEST(CtlArgs, ErrorsNameTheArgumentWithExitTwo) {
    struct Case {
        std::vector<std::string> args;
        std::string said;
    };
    for (const auto& c : std::vector<Case>{
             {{"apply", "--prometheus", "p"}, "--prometheus"},
             {{"audit", "--json", "--prometheus"}, "excludes"},
             {{"apply"}, "profile"},
             {{"rollback"}, "interfaces"},
             {{"frobnicate"}, "subcommand is required"},
             {{}, "subcommand is required"},
         }) {
        std::string what;
        for (const auto& a : c.args)
            what += " " + a;
        SCOPED_TRACE("nictunectl" + what);
        const auto r = ctl(c.args);
        EXPECT_EQ(r.status, 2) << r.out << r.err;
        EXPECT_NE(r.err.find(c.said), std::string::npos) << r.err;
    }
}

}  // namespace
}  // namespace nictune
