// The driver on disk against the loaded one. libkmod (the library behind
// modprobe and modinfo) says which file modprobe would load now and its
// version and srcversion; /sys/module/<name> says what is loaded. The
// initramfs copy is looked at only as far as it can be read without running
// anything (nictune decompresses nothing).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "model/health.hpp"

struct kmod_ctx;

namespace nictune::sysinfo {

struct KmodOptions {
    // Empty: /lib/modules/<uname -r>.
    std::filesystem::path modules_dir;
    std::filesystem::path sysfs_root = "/sys";
    // Empty: /boot/initrd.img-<uname -r>.
    std::filesystem::path initramfs;
};

class ModuleFiles {
  public:
    explicit ModuleFiles(KmodOptions opts = {});
    ~ModuleFiles();
    ModuleFiles(const ModuleFiles&) = delete;
    ModuleFiles& operator=(const ModuleFiles&) = delete;

    // `module`: the kernel module's name (/sys/class/net/X/device/driver/module).
    Known<DriverFiles> read(const std::string& module);

  private:
    KmodOptions opts_;
    kmod_ctx* ctx_ = nullptr;
    bool tried_ = false;
    std::string why_no_ctx_;
};

// What the first bytes of an initramfs image say about reading it:
// "newc cpio", "gzip", "zstd", "xz", "lz4", "bzip2", "lzma" or "unknown".
std::string initramfs_format(std::string_view head);
// The module files named in the uncompressed newc cpio members at the start
// of an image (the early microcode archive, or a whole uncompressed image),
// and the offset where a compressed part starts (npos: none).
struct CpioScan {
    std::vector<std::string> modules;  // paths ending in <name>.ko[.xz|.zst|.gz]
    std::size_t compressed_at = std::string::npos;
    bool truncated = false;
};
CpioScan scan_cpio(std::string_view image, const std::string& module);

}  // namespace nictune::sysinfo
