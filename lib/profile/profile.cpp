#include "profile/profile.hpp"

#include <algorithm>

namespace nictune {

std::string SourceLoc::str() const {
    if (line == 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

bool Profile::empty() const {
    return std::none_of(settings.begin(), settings.end(),
                        [](const auto& s) { return s.has_value(); }) &&
           features.empty() && sysctl.empty() && private_flags.empty() && !rps_cpus &&
           !rps_flow_cnt && !xps_cpus && !rss_queues && rss_hash.empty() && !irq && !tuned_profile;
}

}  // namespace nictune
