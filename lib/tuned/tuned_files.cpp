// tuned's state from its files, when its D-Bus answer is not to be had: a
// core source, so that nictunectl reads them without loading the bus
// module (tuned_client.cpp is part of that module).
#include <system_error>

#include "sysinfo/text_file.hpp"
#include "tuned/tuned_client.hpp"

namespace nictune::tuned {

TunedState read_files(const Options& opts, std::string why_not_dbus) {
    TunedState st;
    const auto f = sysinfo::detail::read_text_file(opts.active_profile_file);
    if (f.content) {
        st.source = TunedSource::File;
        const auto name = sysinfo::detail::trim(*f.content);
        if (!name.empty()) st.active_profile = std::string(name);
        st.detail = why_not_dbus + "; read " + opts.active_profile_file.string() +
                    (name.empty() ? " (empty: no active profile)" : "");
        return st;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(opts.config_dir, ec)) {
        st.source = TunedSource::File;
        st.detail = why_not_dbus + "; tuned installed, no active profile";
        if (f.sys_errno != 0)
            st.detail += " (" + opts.active_profile_file.string() + ": " +
                         std::generic_category().message(f.sys_errno) + ")";
        return st;
    }
    st.source = TunedSource::NotInstalled;
    st.detail = why_not_dbus + "; no " + opts.config_dir.string();
    return st;
}

}  // namespace nictune::tuned
