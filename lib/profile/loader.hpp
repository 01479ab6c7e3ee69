// Finding, reading and validating profiles.
//
// Search path: directories given by the caller (--profiles-dir, config), then
// /etc/nictune/profiles (admin), then the shipped directory; a name found
// earlier shadows later ones. Names are plain names, never paths.
//
// Everything is validated before anything is touched: unknown sections and
// keys, wrong types, values out of range, unknown feature names and sysctls
// outside the allowlist are errors "file:line:column: message".
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/nic_state.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace nictune::profile {

inline constexpr std::size_t kMaxFileSize = 1 << 20;  // 1 MiB
inline constexpr std::size_t kMaxNameLength = 64;

struct ParseOptions {
    // Feature names of the running kernel, accepted in addition to the
    // built-in list (newer kernels know more).
    const FeatureNames* runtime_features = nullptr;
};

// The keys of a section that has a table of them ([profile], [match],
// [driver], [tuned], [rps], [xps], [rss], [irq]), in the table's order; empty
// for the device sections (the schema's keys) and the open ones.
std::vector<std::string_view> section_keys(Section sec);

// Parses one profile document; includes are recorded, not resolved.
Result<Profile> parse(std::string_view text, const std::string& file,
                      const ParseOptions& opts = {});

// A profile name: 1..64 of [A-Za-z0-9._-], not starting with '.' or '-'.
Result<void> validate_name(std::string_view name);

// The default search path: extra dirs first, then /etc/nictune/profiles, then
// the shipped profiles directory.
std::vector<std::filesystem::path> default_search_path(
    const std::vector<std::filesystem::path>& extra_dirs);

// Reads a file for nictune to trust: regular file, at most kMaxFileSize, and,
// when `require_root_owned`, owned by root and not writable by group or others
// (with its directory). Errors name the path and say why.
Result<std::string> read_trusted_file(const std::filesystem::path& path, bool require_root_owned);

struct StoreOptions {
    std::vector<std::filesystem::path> search_path;
    // Refuse files or directories a non-root user could modify. Defaults to
    // "running as root": a root daemon must not execute an unprivileged
    // user's profile.
    bool require_root_owned;
    ParseOptions parse;
    StoreOptions();
};

struct ProfileEntry {
    std::string name;
    std::filesystem::path path;
    std::vector<std::filesystem::path> shadows;  // same name further down the path
    std::string description;
    std::optional<Error> error;              // the profile does not load
    std::shared_ptr<const Profile> profile;  // loaded, when it loads
};

class Store {
  public:
    explicit Store(StoreOptions opts);

    // Finds, reads, validates and resolves includes (cycles rejected).
    [[nodiscard]] Result<Profile> load(std::string_view name) const;
    // Path of the profile file that `name` resolves to.
    [[nodiscard]] Result<std::filesystem::path> find(std::string_view name) const;
    // Every profile on the search path (first occurrence of each name).
    [[nodiscard]] std::vector<ProfileEntry> list() const;
    // Loads every profile that loads; errors are skipped (see list()).
    [[nodiscard]] std::vector<Profile> load_all() const;

    [[nodiscard]] const StoreOptions& options() const { return opts_; }

  private:
    Result<Profile> load_recursive(std::string_view name, std::vector<std::string>& stack,
                                   const SourceLoc* included_from) const;
    StoreOptions opts_;
};

// Merges `over` onto `base`: values set in `over` win, lists are replaced.
void merge_into(Profile& base, const Profile& over);

}  // namespace nictune::profile
