#include "service/log.hpp"

#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "util/enum_names.hpp"

namespace nictune::service {
namespace {

bool g_journal = false;
bool g_debug = false;

// JOURNAL_STREAM is "device:inode" of the stream systemd connected stderr
// to; it only counts if stderr is still that stream.
bool stderr_is_journal() {
    const char* js = std::getenv("JOURNAL_STREAM");
    if (!js) return false;
    unsigned long long dev = 0, ino = 0;
    if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
    struct stat st {};
    if (fstat(STDERR_FILENO, &st) != 0) return false;
    return st.st_dev == dev && st.st_ino == ino;
}

// Each Level's syslog priority and the prefix of its line on stderr, in the
// enum's order (held to it below).
struct LevelInfo {
    int priority;
    const char* prefix;
};
constexpr LevelInfo kLevels[] = {
    {LOG_DEBUG, "debug: "},     {LOG_INFO, ""},       {LOG_NOTICE, ""},
    {LOG_WARNING, "warning: "}, {LOG_ERR, "error: "},
};
static_assert(std::size(kLevels) == enum_count<Level>, "one row for each Level, in its order");

int priority(Level l) {
    return kLevels[static_cast<std::size_t>(l)].priority;
}

const char* prefix(Level l) {
    return kLevels[static_cast<std::size_t>(l)].prefix;
}

}  // namespace

std::string_view message_id(Event e) {
    // Made with `systemd-id128 new`; never change one (operators' queries
    // and alerts select by them). systemd/nictune.catalog has the same IDs.
    switch (e) {
        case Event::None:
            return "";
        case Event::Applied:
            return "049c911bfe3d4497be65b67ac0d9bcb4";
        case Event::RolledBack:
            return "477e00f0624b42d9802a3657e8045ef5";
        case Event::Drift:
            return "8433f0fc3d4c4448ba84f4e29cd04d30";
        case Event::Failed:
            return "3d9d2c31b9d94f13b96ecc170f2492e6";
    }
    return "";
}

void init_log(bool debug) {
    g_debug = debug;
    g_journal = stderr_is_journal();
}

void log(Level level, std::string_view message, const LogFields& f) {
    if (level == Level::Debug && !g_debug) return;
    if (!g_journal) {
        std::string line = "nictuned: ";
        line += prefix(level);
        if (!f.interface.empty()) line += f.interface + ": ";
        line += message;
        line += '\n';
        // One write of the whole line (stderr is unbuffered: fprintf made
        // the same write through a formatting pass, 6% of nictuned's CPU
        // in a paced hotplug burst logged to a file).
        for (std::string_view left = line; !left.empty();) {
            const ssize_t n = ::write(STDERR_FILENO, left.data(), left.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;  // nowhere to log: the line is dropped
            left.remove_prefix(static_cast<std::size_t>(n));
        }
        return;
    }
    std::vector<std::string> fields = {"MESSAGE=" + std::string(message),
                                       "PRIORITY=" + std::to_string(priority(level)),
                                       "SYSLOG_IDENTIFIER=nictuned"};
    if (!f.interface.empty()) fields.push_back("INTERFACE=" + f.interface);
    if (!f.profile.empty()) fields.push_back("PROFILE=" + f.profile);
    if (!f.setting.empty()) fields.push_back("SETTING=" + f.setting);
    if (!f.transaction.empty()) fields.push_back("NICTUNE_TRANSACTION=" + f.transaction);
    if (f.event != Event::None) fields.push_back("MESSAGE_ID=" + std::string(message_id(f.event)));
    if (!f.result.empty()) fields.push_back("NICTUNE_RESULT=" + f.result);
    if (!f.reason.empty()) fields.push_back("NICTUNE_REASON=" + f.reason);
    if (!f.expected.empty()) fields.push_back("NICTUNE_EXPECTED=" + f.expected);
    if (!f.actual.empty()) fields.push_back("NICTUNE_ACTUAL=" + f.actual);
    std::vector<iovec> iov;
    for (auto& x : fields)
        iov.push_back(iovec{x.data(), x.size()});
    sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

}  // namespace nictune::service
