// tuned's state from its files, when its D-Bus answer is not to be had: a
// core source, so that nictunectl reads them without loading the bus
// module (tuned_client.cpp is part of that module).
#include <system_error>

#include "tuned/tuned_client.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

namespace nictune::tuned {

TunedState read_files(const Options& opts, std::string why_not_dbus) {
    TunedState st;
    // A name, not a document: what is past 64 KiB is not read.
    const auto f = read_file(opts.active_profile_file, 64 * 1024);
    if (f && *f) {
        st.source = TunedSource::File;
        const auto name = trim(**f);
        if (!name.empty()) st.active_profile = std::string(name);
        st.detail = why_not_dbus + "; read " + opts.active_profile_file.string() +
                    (name.empty() ? " (empty: no active profile)" : "");
        return st;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(opts.config_dir, ec)) {
        st.source = TunedSource::File;
        st.detail = why_not_dbus + "; tuned installed, no active profile";
        if (!f)
            st.detail += " (" + opts.active_profile_file.string() + ": " +
                         std::generic_category().message(f.error().sys_errno) + ")";
        return st;
    }
    st.source = TunedSource::NotInstalled;
    st.detail = why_not_dbus + "; no " + opts.config_dir.string();
    return st;
}

}  // namespace nictune::tuned
