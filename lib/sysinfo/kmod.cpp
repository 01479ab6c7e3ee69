#include "sysinfo/kmod.hpp"

#include <libkmod.h>
#include <sys/utsname.h>

#include <charconv>
#include <system_error>

#include "sysinfo/dynlib.hpp"
#include "sysinfo/text_file.hpp"

namespace nictune::sysinfo {
namespace {

namespace fs = std::filesystem;

std::string release() {
    utsname u{};
    uname(&u);
    return u.release;
}

std::optional<std::string> read_value(const fs::path& p) {
    const auto f = detail::read_text_file(p, 4096);
    if (!f.content) return std::nullopt;
    auto v = detail::trim(*f.content);
    if (v.empty()) return std::nullopt;
    return std::string(v);
}

// libkmod is opened on first use, not linked: Debian's libkmod2 pulls in
// libcrypto, and binding its symbols at every start of nictunectl cost more
// instructions than a whole one-interface apply (BENCHMARKS.md, "After the
// facts split": 7.84 M loader instructions for an empty program linked like
// nictunectl, 3.00 M without libkmod). Only the health checks' driver-file
// look-up needs it. The header gives the types; the table the functions.
struct KmodApi {
    decltype(&kmod_new) new_ctx = nullptr;
    decltype(&kmod_unref) unref = nullptr;
    decltype(&kmod_set_log_priority) set_log_priority = nullptr;
    decltype(&kmod_module_new_from_name) module_new_from_name = nullptr;
    decltype(&kmod_module_unref) module_unref = nullptr;
    decltype(&kmod_module_get_path) module_get_path = nullptr;
    decltype(&kmod_module_get_info) module_get_info = nullptr;
    decltype(&kmod_module_info_free_list) info_free_list = nullptr;
    decltype(&kmod_list_next) list_next = nullptr;
    decltype(&kmod_module_info_get_key) info_get_key = nullptr;
    decltype(&kmod_module_info_get_value) info_get_value = nullptr;
    std::string error;  // why the table is empty
};

const KmodApi& kmod_api() {
    static const KmodApi api = [] {
        KmodApi a;
        // Never closed: the table lives as long as the process.
        detail::DynLib lib("libkmod.so.2", "libkmod");
        lib.bind("kmod_new", a.new_ctx)
            .bind("kmod_unref", a.unref)
            .bind("kmod_set_log_priority", a.set_log_priority)
            .bind("kmod_module_new_from_name", a.module_new_from_name)
            .bind("kmod_module_unref", a.module_unref)
            .bind("kmod_module_get_path", a.module_get_path)
            .bind("kmod_module_get_info", a.module_get_info)
            .bind("kmod_module_info_free_list", a.info_free_list)
            .bind("kmod_list_next", a.list_next)
            .bind("kmod_module_info_get_key", a.info_get_key)
            .bind("kmod_module_info_get_value", a.info_get_value);
        a.error = lib.error();
        if (!a.error.empty()) a.new_ctx = nullptr;  // unusable: read() reports a.error
        return a;
    }();
    return api;
}

struct ModuleRef {
    kmod_module* m = nullptr;
    ~ModuleRef() {
        if (m) kmod_api().module_unref(m);
    }
};
struct ListRef {
    kmod_list* l = nullptr;
    ~ListRef() {
        if (l) kmod_api().info_free_list(l);
    }
};

// Image files are read at most this far (an initramfs is tens of MB).
constexpr std::size_t kMaxImage = 128 * 1024 * 1024;

std::optional<uint32_t> hex8(std::string_view s) {
    uint32_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + 8, v, 16);
    if (ec != std::errc() || end != s.data() + 8) return std::nullopt;
    return v;
}

bool names_module(std::string_view path, const std::string& module) {
    const auto slash = path.rfind('/');
    std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
    for (const char* ext : {".ko", ".ko.xz", ".ko.zst", ".ko.gz"}) {
        if (!base.ends_with(ext)) continue;
        std::string_view stem = base.substr(0, base.size() - std::string_view(ext).size());
        // Module names treat '-' and '_' alike.
        if (stem.size() != module.size()) continue;
        bool same = true;
        for (std::size_t i = 0; i < stem.size() && same; ++i) {
            char a = stem[i] == '-' ? '_' : stem[i];
            char b = module[i] == '-' ? '_' : module[i];
            same = a == b;
        }
        if (same) return true;
    }
    return false;
}

}  // namespace

std::string initramfs_format(std::string_view h) {
    auto starts = [&](std::string_view m) { return h.substr(0, m.size()) == m; };
    if (starts("070701") || starts("070702")) return "newc cpio";
    if (starts("\x1f\x8b")) return "gzip";
    if (starts("\x28\xb5\x2f\xfd")) return "zstd";
    if (starts("\xfd"
               "7zXZ"))
        return "xz";
    if (starts("\x02\x21\x4c\x18") || starts("\x04\x22\x4d\x18")) return "lz4";
    if (starts("BZh")) return "bzip2";
    if (starts("\x5d\x00\x00")) return "lzma";
    return "unknown";
}

CpioScan scan_cpio(std::string_view image, const std::string& module) {
    CpioScan out;
    std::size_t at = 0;
    constexpr std::size_t kHeader = 110;
    while (at < image.size()) {
        // Archives are padded with zeros to a 512-byte (or 4-byte) boundary.
        while (at < image.size() && image[at] == '\0')
            ++at;
        if (at >= image.size()) break;
        const std::string_view rest = image.substr(at);
        if (!(rest.starts_with("070701") || rest.starts_with("070702"))) {
            out.compressed_at = at;
            break;
        }
        if (rest.size() < kHeader) {
            out.truncated = true;
            break;
        }
        auto filesize = hex8(rest.substr(54, 8));
        auto namesize = hex8(rest.substr(94, 8));
        if (!filesize || !namesize || *namesize == 0 || kHeader + *namesize > rest.size()) {
            out.truncated = true;
            break;
        }
        std::string_view name = rest.substr(kHeader, *namesize - 1);
        const std::size_t data = (kHeader + *namesize + 3) & ~std::size_t{3};
        const std::size_t next = (data + std::size_t{*filesize} + 3) & ~std::size_t{3};
        if (name != "TRAILER!!!" && names_module(name, module)) out.modules.emplace_back(name);
        if (next > rest.size()) {
            out.truncated = true;
            break;
        }
        at += next;
    }
    return out;
}

ModuleFiles::ModuleFiles(KmodOptions opts) : opts_(std::move(opts)) {}

ModuleFiles::~ModuleFiles() {
    if (ctx_) kmod_api().unref(ctx_);
}

Known<DriverFiles> ModuleFiles::read(const std::string& module) {
    if (!detail::safe_component(module)) return Known<DriverFiles>::none("no module name");
    DriverFiles d;
    d.module = module;
    const fs::path sys = opts_.sysfs_root / "module" / module;
    d.loaded_version = read_value(sys / "version");
    d.loaded_srcversion = read_value(sys / "srcversion");
    std::error_code ec;
    // A loaded module has an initstate file; a built-in one has none.
    d.builtin = fs::exists(sys, ec) && !fs::exists(sys / "initstate", ec);

    if (!tried_) {
        tried_ = true;
        const fs::path dir =
            opts_.modules_dir.empty() ? fs::path("/lib/modules") / release() : opts_.modules_dir;
        if (!fs::is_directory(dir, ec)) {
            // libkmod is not opened: it would have nothing to read, and its
            // dlopen (libcrypto with it) cost 1.5 ms of a 41 ms audit.
            why_no_ctx_ = dir.string() + " does not exist (modules not installed for this kernel)";
        } else if (const KmodApi& k = kmod_api(); !k.new_ctx) {
            why_no_ctx_ = k.error;
        } else {
            ctx_ = k.new_ctx(dir.c_str(), nullptr);
            if (!ctx_) why_no_ctx_ = "libkmod could not open " + dir.string();
            // Quiet: libkmod logs to stderr by default.
            if (ctx_) k.set_log_priority(ctx_, 0);
        }
    }
    if (ctx_) {
        const KmodApi& api = kmod_api();
        ModuleRef mod;
        if (api.module_new_from_name(ctx_, module.c_str(), &mod.m) == 0 && mod.m) {
            if (const char* p = api.module_get_path(mod.m)) d.disk_path = p;
            ListRef info;
            if (d.disk_path && api.module_get_info(mod.m, &info.l) >= 0) {
                for (kmod_list* e = info.l; e; e = api.list_next(info.l, e)) {
                    const std::string_view k = api.info_get_key(e);
                    const char* v = api.info_get_value(e);
                    if (!v) continue;
                    if (k == "version") d.disk_version = v;
                    if (k == "srcversion") d.disk_srcversion = v;
                }
            }
        }
    } else if (!d.builtin) {
        d.initramfs = "not read";
        return Known<DriverFiles>::none(why_no_ctx_);
    }

    const fs::path image =
        opts_.initramfs.empty() ? fs::path("/boot") / ("initrd.img-" + release()) : opts_.initramfs;
    const auto f = detail::read_text_file(image, kMaxImage);
    if (!f.content) {
        d.initramfs = f.sys_errno
                          ? image.string() + ": " + std::generic_category().message(f.sys_errno)
                          : "no " + image.string();
    } else {
        const CpioScan scan = scan_cpio(*f.content, module);
        std::string tail;
        if (scan.compressed_at != std::string::npos)
            tail = "; the rest is " +
                   initramfs_format(std::string_view(*f.content).substr(scan.compressed_at)) +
                   "-compressed and was not read (nictune decompresses nothing)";
        if (!scan.modules.empty())
            d.initramfs = image.string() + " holds " + scan.modules.front() + tail;
        else if (scan.compressed_at == 0)
            d.initramfs = image.string() + " is " + initramfs_format(*f.content) +
                          "-compressed: not read (nictune decompresses nothing; lsinitramfs " +
                          image.string() + " lists it)";
        else
            d.initramfs = image.string() + ": no " + module + ".ko in its uncompressed part" + tail;
    }
    return Known<DriverFiles>::of(std::move(d));
}

}  // namespace nictune::sysinfo
