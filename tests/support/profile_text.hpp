// Profiles from TOML text for unit tests. Defined once here: the test
// binaries are unity builds, where two files' definitions would meet in one
// translation unit.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "profile/loader.hpp"

namespace nictune::test {

// The profile `text` parses to, named `name` (file name.toml); a parse error
// fails the test.
inline Profile profile_of(const std::string& name, const std::string& text) {
    auto p = profile::parse(text, name + ".toml");
    EXPECT_TRUE(p) << p.error().str();
    p->name = name;
    return *p;
}

// The same, named "p".
inline Profile profile_of(const std::string& text) {
    return profile_of("p", text);
}

}  // namespace nictune::test
