// The set-up of the integration tests that run `nictunectl --direct` inside
// a network namespace they create: the namespace, the test's links made by a
// shell command in it, and a profiles directory of its own (root-owned,
// 0755, as nictune requires), all removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "support/netns.hpp"

namespace nictune::test {

class CtlNetnsTest : public ::testing::Test {
  protected:
    // Call from SetUp: skips when namespaces cannot be made (not root);
    // `links` runs in the namespace; `tag` names the temporary directory.
    void make(const std::string& links, const std::string& tag) {
        ns_ = TestNetns::create(&why_);
        if (!ns_) GTEST_SKIP() << why_;
        auto r = ns_->exec(links);
        ASSERT_EQ(r.status, 0) << r.err;
        std::string tmpl = "/tmp/nictune-" + tag + "-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
        chmod(tmpl.c_str(), 0755);
        std::filesystem::create_directory(dir_ / "profiles");
        chmod((dir_ / "profiles").c_str(), 0755);
    }
    void TearDown() override {
        if (!dir_.empty()) std::filesystem::remove_all(dir_);
    }
    void profile(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / "profiles" / (name + ".toml")) << text;
    }
    // nictunectl with the test's profiles and state directories, in the namespace.
    CommandResult ctl(const std::vector<std::string>& args) {
        std::vector<std::string> argv = {NICTUNECTL_PATH, "--profiles-dir",
                                         (dir_ / "profiles").string(), "--state-dir",
                                         (dir_ / "state").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return ns_->exec_argv(argv, 60000);
    }

    std::string why_;
    std::unique_ptr<TestNetns> ns_;
    std::filesystem::path dir_;
};

}  // namespace nictune::test
