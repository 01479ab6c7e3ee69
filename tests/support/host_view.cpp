#include "support/host_view.hpp"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace nictune::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNoSystemBus = "unix:path=/run/dbus/nictune-test-no-system-bus";

bool g_in_view = false;

std::string errno_text(const std::string& what) {
    return what + ": " + std::strerror(errno);
}

bool under_etc(const fs::path& p) {
    const std::string s = p.lexically_normal().string();
    return s == "/etc" || s.starts_with("/etc/");
}

// An empty, read-only tmpfs over `dir` when it exists (absent is already
// what a machine without nictune installed has).
std::string hide_dir(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return {};
    if (mount("nictune-test-empty", dir.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV,
              "mode=0755,size=4k") != 0)
        return errno_text("mount an empty tmpfs over " + dir.string());
    return {};
}

// /etc as an overlay: the host's /etc below, a tmpfs of our own above, so
// that files under /etc can be removed or created in this view only.
std::string overlay_etc() {
    char tmpl[] = "/tmp/nictune-host-view-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return errno_text("mkdtemp /tmp/nictune-host-view-XXXXXX");
    const fs::path top = tmpl;
    std::string why;
    if (mount("nictune-test-etc", tmpl, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
        why = errno_text("mount a tmpfs on " + top.string());
    } else {
        std::error_code ec;
        fs::create_directory(top / "upper", ec);
        fs::create_directory(top / "work", ec);
        const std::string opts = "lowerdir=/etc,upperdir=" + (top / "upper").string() +
                                 ",workdir=" + (top / "work").string();
        if (mount("nictune-test-etc", "/etc", "overlay", 0, opts.c_str()) != 0)
            why = errno_text("mount an overlay over /etc (" + opts + ")");
        // The overlay holds its upper layer; the tmpfs needs no name in the
        // tree, and the directory goes, so nothing is left on the host.
        umount2(tmpl, MNT_DETACH);
    }
    rmdir(tmpl);
    return why;
}

}  // namespace

std::string enter_host_view() {
    setenv("DBUS_SYSTEM_BUS_ADDRESS", kNoSystemBus, 1);
    if (geteuid() != 0)
        return "not root: the host's /etc/tuned and nictune's installed files stay visible";
    if (unshare(CLONE_NEWNS) != 0) return errno_text("unshare(CLONE_NEWNS)");
    // Mounts made below must not propagate back to the host. EINVAL: "/" is
    // not a mount point, as in a chroot into a plain directory; bind-mount
    // the root onto itself before chrooting (scripts/fresh-machine-test does).
    if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
        return errno_text(
            "make / a slave mount (in a chroot, / must be a mount point: bind-mount the root "
            "onto itself first)");
    if (auto why = overlay_etc(); !why.empty()) return why;
    std::error_code ec;
    fs::remove_all("/etc/tuned", ec);
    if (ec) return "remove /etc/tuned in the view: " + ec.message();
    const fs::path sysconf = NICTUNE_SYSCONFDIR;
    if (under_etc(sysconf)) {
        fs::remove_all(sysconf, ec);
        if (ec) return "remove " + sysconf.string() + " in the view: " + ec.message();
    } else if (auto why = hide_dir(sysconf); !why.empty()) {
        return why;
    }
    if (auto why = hide_dir(NICTUNE_DATADIR); !why.empty()) return why;
    if (auto why = hide_dir("/run/dbus"); !why.empty()) return why;
    g_in_view = true;
    return {};
}

bool in_host_view() {
    return g_in_view;
}

std::string set_tuned(HostTuned state, const std::optional<std::string>& active_profile) {
    if (!g_in_view) return "not in the test's host view (needs root; see enter_host_view)";
    std::error_code ec;
    fs::remove_all("/etc/tuned", ec);
    if (ec) return "remove /etc/tuned: " + ec.message();
    if (state == HostTuned::NotInstalled) return {};
    fs::create_directory("/etc/tuned", ec);
    if (ec) return "create /etc/tuned: " + ec.message();
    chmod("/etc/tuned", 0755);
    if (active_profile) {
        std::ofstream out("/etc/tuned/active_profile");
        out << *active_profile << "\n";
        if (!out) return "write /etc/tuned/active_profile failed";
    }
    return {};
}

}  // namespace nictune::test
