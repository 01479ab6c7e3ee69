// Helpers shared by nictune's TOML readers (profiles, driver facts, the
// daemon's configuration): positions, type names, suggestions, file order,
// and the key-to-parser tables both the profile loader and nictune.toml's
// reader are written as.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profile/profile.hpp"
#include "profile/toml.hpp"
#include "util/error.hpp"
#include "util/find.hpp"

namespace nictune::tomlutil {

SourceLoc loc_of(const toml::source_region& r, const std::string& file);

// An Errc::InvalidProfile error at `loc` ("file:line:column: message").
std::unexpected<Error> invalid(const SourceLoc& loc, std::string message);

// The document, or the error at the first problem: a NUL byte at its own
// line and column (toml++ would stop there, "file contains a NUL byte: not a
// text KIND"), or toml++'s parse error.
Result<toml::table> parse_document(std::string_view text, const std::string& file,
                                   std::string_view kind);

// "a string", "an integer", ... for messages.
const char* type_name(const toml::node& n);

// A string value; anything else is "WHAT: expected a string, got ...".
Result<std::string> string_value(const toml::node& n, const SourceLoc& loc, std::string_view what);

// "; did you mean 'x'?" when `word` is a plausible typo of an option, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& options);

// toml++ iterates a table in key order; errors must name the first problem
// in the file, so readers visit keys in the order they were written.
using Entry = std::pair<const toml::key*, const toml::node*>;
std::vector<Entry> in_file_order(const toml::table& t);

// A key-to-parser table (as systemd's link configuration has one): rows
// with a `name` and whatever reads that key's value. A new key is one row.
template <class Parser>
struct KeyRow {
    std::string_view name;
    Parser parse;
};

// A parser's last step: the value it read stored in its field, or the
// error of the read.
template <class T, class Field>
Result<void> store(Result<T> read, Field& field) {
    if (!read) return std::unexpected(std::move(read.error()));
    field = std::move(*read);
    return {};
}

// The row named `name`, or nullptr.
template <class Rows>
auto find_row(const Rows& rows, std::string_view name) {
    return find_first(rows, [&](const auto& r) { return r.name == name; });
}

// The rows' names, in the table's order: the keys a section takes, for
// "did you mean" and for the documentation's checks.
template <class Rows>
std::vector<std::string_view> row_names(const Rows& rows) {
    std::vector<std::string_view> out;
    for (const auto& r : rows)
        out.push_back(r.name);
    return out;
}

std::unexpected<Error> unknown_key(const toml::key& k, const std::string& file,
                                   std::string_view where,
                                   const std::vector<std::string_view>& names);

// Every key of `t` in file order, handed with its row to
// f(row, key, value) -> Result<void>; the first key no row names is
// "unknown key 'k' in WHERE; did you mean ...?" at that key.
template <class Rows, class F>
Result<void> for_each_key(const toml::table& t, const std::string& file, const Rows& rows,
                          std::string_view where, F&& f) {
    for (const auto& [k, v] : in_file_order(t)) {
        const auto* row = find_row(rows, k->str());
        if (!row) return unknown_key(*k, file, where, row_names(rows));
        if (auto r = f(*row, *k, *v); !r) return r;
    }
    return {};
}

}  // namespace nictune::tomlutil
