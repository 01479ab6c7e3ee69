#include "sysinfo/foreign_config.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <system_error>

#include "sysinfo/ini.hpp"
#include "sysinfo/text_file.hpp"

namespace nictune::sysinfo {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxFile = 1024 * 1024;
constexpr int kMaxDepth = 4;

std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t')
            ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

std::optional<uint64_t> number(std::string_view s) {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::optional<std::string> boolean(std::string_view v) {
    std::string l;
    for (char c : v)
        l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l == "yes" || l == "true" || l == "on" || l == "1") return "true";
    if (l == "no" || l == "false" || l == "off" || l == "0") return "false";
    return std::nullopt;
}

// systemd sizes: "9000", "9K" (1024-based), "1M".
std::optional<std::string> bytes(std::string_view v) {
    uint64_t mult = 1;
    if (!v.empty()) {
        switch (v.back()) {
            case 'K':
                mult = 1024;
                break;
            case 'M':
                mult = 1024 * 1024;
                break;
            case 'G':
                mult = 1024ULL * 1024 * 1024;
                break;
            default:
                break;
        }
        if (mult != 1) v.remove_suffix(1);
    }
    auto n = number(v);
    if (!n) return std::nullopt;
    return std::to_string(*n * mult);
}

// systemd time spans in microseconds: "50us", "1ms", "0.5ms" is not
// accepted here (rare), "2s", a bare number is seconds.
std::optional<std::string> usecs(std::string_view v) {
    struct Unit {
        std::string_view suffix;
        uint64_t us;
    };
    static constexpr Unit kUnits[] = {{"usec", 1},  {"us", 1},        {"µs", 1},     {"msec", 1000},
                                      {"ms", 1000}, {"sec", 1000000}, {"s", 1000000}};
    for (const auto& u : kUnits)
        if (v.ends_with(u.suffix)) {
            auto n = number(detail::trim(v.substr(0, v.size() - u.suffix.size())));
            if (!n) return std::nullopt;
            return std::to_string(*n * u.us);
        }
    auto n = number(v);
    if (!n) return std::nullopt;
    return std::to_string(*n * 1000000);
}

std::optional<std::string> count_or_max(std::string_view v) {
    if (v == "max") return "max";
    if (auto n = number(v)) return std::to_string(*n);
    return std::nullopt;
}

struct LinkKey {
    std::string_view name;
    std::string_view key;  // nictune's
    std::optional<std::string> (*norm)(std::string_view);
};

std::optional<std::string> as_is(std::string_view v) {
    return std::string(v);
}

constexpr LinkKey kLinkKeys[] = {
    {"MTUBytes", "link.mtu", bytes},
    {"TransmitQueueLength", "link.txqueuelen", count_or_max},
    {"BitsPerSecond", "link.speed", bytes},
    {"Duplex", "link.duplex", as_is},
    {"AutoNegotiation", "link.autoneg", boolean},
    {"RxBufferSize", "rings.rx", count_or_max},
    {"RxMiniBufferSize", "rings.rx_mini", count_or_max},
    {"RxJumboBufferSize", "rings.rx_jumbo", count_or_max},
    {"TxBufferSize", "rings.tx", count_or_max},
    {"RxChannels", "channels.rx", count_or_max},
    {"TxChannels", "channels.tx", count_or_max},
    {"OtherChannels", "channels.other", count_or_max},
    {"CombinedChannels", "channels.combined", count_or_max},
    {"RxFlowControl", "pause.rx", boolean},
    {"TxFlowControl", "pause.tx", boolean},
    {"AutoNegotiationFlowControl", "pause.autoneg", boolean},
    {"UseAdaptiveRxCoalesce", "coalesce.adaptive_rx", boolean},
    {"UseAdaptiveTxCoalesce", "coalesce.adaptive_tx", boolean},
    {"RxCoalesceSec", "coalesce.rx_usecs", usecs},
    {"RxCoalesceIrqSec", "coalesce.rx_usecs_irq", usecs},
    {"RxCoalesceLowSec", "coalesce.rx_usecs_low", usecs},
    {"RxCoalesceHighSec", "coalesce.rx_usecs_high", usecs},
    {"TxCoalesceSec", "coalesce.tx_usecs", usecs},
    {"TxCoalesceIrqSec", "coalesce.tx_usecs_irq", usecs},
    {"TxCoalesceLowSec", "coalesce.tx_usecs_low", usecs},
    {"TxCoalesceHighSec", "coalesce.tx_usecs_high", usecs},
    {"RxMaxCoalescedFrames", "coalesce.rx_frames", count_or_max},
    {"TxMaxCoalescedFrames", "coalesce.tx_frames", count_or_max},
    {"CoalescePacketRateLow", "coalesce.pkt_rate_low", count_or_max},
    {"CoalescePacketRateHigh", "coalesce.pkt_rate_high", count_or_max},
    {"CoalescePacketRateSampleIntervalSec", "coalesce.sample_interval", usecs},
    {"StatisticsBlockCoalesceSec", "coalesce.stats_block_usecs", usecs},
    {"GenericReceiveOffload", "features.rx-gro", boolean},
    {"GenericReceiveOffloadHardware", "features.rx-gro-hw", boolean},
    {"LargeReceiveOffload", "features.rx-lro", boolean},
    {"TCPSegmentationOffload", "features.tx-tcp-segmentation", boolean},
    {"TCP6SegmentationOffload", "features.tx-tcp6-segmentation", boolean},
    {"GenericSegmentationOffload", "features.tx-generic-segmentation", boolean},
    {"ReceiveChecksumOffload", "features.rx-checksum", boolean},
    {"TransmitChecksumOffload", "features.tx-checksum-ip-generic", boolean},
    {"ReceiveVLANCTAGHardwareAcceleration", "features.rx-vlan-hw-parse", boolean},
    {"TransmitVLANCTAGHardwareAcceleration", "features.tx-vlan-hw-insert", boolean},
};

void put(std::vector<ForeignSetting>& out, ForeignSetting s) {
    // Later assignments win, as in systemd and shell scripts.
    std::erase_if(out, [&](const ForeignSetting& o) { return o.key == s.key; });
    out.push_back(std::move(s));
}

// ethtool's command-line names per option.
struct EthtoolOpt {
    std::string_view flag, long_flag, section;
};
constexpr EthtoolOpt kEthtoolOpts[] = {{"-G", "--set-ring", "rings"},
                                       {"-C", "--coalesce", "coalesce"},
                                       {"-L", "--set-channels", "channels"},
                                       {"-K", "--features", "features"},
                                       {"-A", "--pause", "pause"}};

std::string key_of(std::string_view section, std::string_view name) {
    std::string k(name);
    if (section != "features") std::replace(k.begin(), k.end(), '-', '_');
    if (section == "rings" && k == "rx_mini") return "rings.rx_mini";
    return std::string(section) + "." + k;
}

std::string onoff(std::string_view v) {
    if (v == "on") return "true";
    if (v == "off") return "false";
    return std::string(v);
}

}  // namespace

Result<ForeignConfig> parse_link_file(std::string_view text, const std::string& file) {
    auto entries = parse_ini(text, file);
    if (!entries) return std::unexpected(entries.error());
    ForeignConfig c;
    c.tool = "systemd.link";
    c.source = file;
    for (const auto& e : *entries) {
        if (e.section != "Link") continue;
        for (const auto& k : kLinkKeys) {
            if (e.key != k.name) continue;
            if (e.value.empty()) {
                std::erase_if(c.settings, [&](const ForeignSetting& s) { return s.key == k.key; });
                break;
            }
            auto v = k.norm(e.value);
            if (!v)
                return fail(Errc::InvalidProfile, file + ":" + std::to_string(e.line),
                            std::string(k.name) + "=" + e.value.substr(0, 64) +
                                " is not a value systemd accepts");
            put(c.settings, ForeignSetting{std::string(k.key), *v, std::string(k.name), e.line});
            break;
        }
    }
    return c;
}

std::vector<ForeignSetting> settings_of_command(std::string_view command,
                                                const std::string& ifname) {
    std::vector<ForeignSetting> out;
    auto w = words(command);
    for (std::size_t i = 0; i < w.size(); ++i) {
        const std::string_view tool =
            w[i].substr(w[i].rfind('/') == std::string_view::npos ? 0 : w[i].rfind('/') + 1);
        if (tool == "ethtool" && i + 2 < w.size()) {
            const EthtoolOpt* opt = nullptr;
            for (const auto& o : kEthtoolOpts)
                if (w[i + 1] == o.flag || w[i + 1] == o.long_flag) opt = &o;
            if (!opt || w[i + 2] != ifname) return out;
            const std::string src = "ethtool " + std::string(opt->flag);
            for (std::size_t j = i + 3; j + 1 < w.size(); j += 2) {
                if (w[j] == ";" || w[j] == "&&" || w[j] == "||") break;
                out.push_back(ForeignSetting{key_of(opt->section, w[j]), onoff(w[j + 1]),
                                             src + " " + std::string(w[j]), 0});
            }
            return out;
        }
        if (tool == "ip" && i + 2 < w.size() && w[i + 1] == "link" && w[i + 2] == "set") {
            bool ours = false;
            for (std::size_t j = i + 3; j < w.size(); ++j) {
                if (w[j] == ifname) ours = true;
                if (w[j] == "mtu" && j + 1 < w.size() && ours)
                    out.push_back(
                        ForeignSetting{"link.mtu", std::string(w[j + 1]), "ip link set mtu", 0});
                if ((w[j] == "txqueuelen" || w[j] == "txqlen") && j + 1 < w.size() && ours)
                    out.push_back(ForeignSetting{"link.txqueuelen", std::string(w[j + 1]),
                                                 "ip link set txqueuelen", 0});
            }
            return out;
        }
    }
    return out;
}

namespace {

// The Debian ethtool package's ifupdown options (if-pre-up.d/ethtool).
struct IfupdownOpt {
    std::string_view name, key;
};
constexpr IfupdownOpt kIfupdownOpts[] = {
    {"mtu", "link.mtu"},
    {"hardware-dma-ring-rx", "rings.rx"},
    {"hardware-dma-ring-rx-mini", "rings.rx_mini"},
    {"hardware-dma-ring-rx-jumbo", "rings.rx_jumbo"},
    {"hardware-dma-ring-tx", "rings.tx"},
    {"hardware-irq-coalesce-adaptive-rx", "coalesce.adaptive_rx"},
    {"hardware-irq-coalesce-adaptive-tx", "coalesce.adaptive_tx"},
    {"hardware-irq-coalesce-rx-usecs", "coalesce.rx_usecs"},
    {"hardware-irq-coalesce-rx-frames", "coalesce.rx_frames"},
    {"hardware-irq-coalesce-tx-usecs", "coalesce.tx_usecs"},
    {"hardware-irq-coalesce-tx-frames", "coalesce.tx_frames"},
    {"ethernet-pause-autoneg", "pause.autoneg"},
    {"ethernet-pause-rx", "pause.rx"},
    {"ethernet-pause-tx", "pause.tx"},
    {"offload-gro", "features.gro"},
    {"offload-lro", "features.lro"},
    {"offload-tso", "features.tso"},
    {"offload-gso", "features.gso"},
    {"offload-rx", "features.rx"},
    {"offload-tx", "features.tx"},
};

}  // namespace

// A `source` or `source-directory` pattern's files, in order, each with its
// text (nullopt: not a regular file, or unreadable), listed and read once.
struct IfupdownFiles::Cache {
    using Files = std::vector<std::pair<std::string, std::optional<std::string>>>;
    const Files& sourced(const fs::path& pattern, bool directory);
    std::map<std::string, Files> sources;
};

namespace {

struct IfupdownWalk {
    const std::string& ifname;
    ForeignConfig cfg;
    bool mentioned = false;
    std::vector<std::string> files;  // read, for loops
    IfupdownFiles::Cache& cache;
};

Result<void> walk_ifupdown(std::string_view text, const std::string& file, IfupdownWalk& st,
                           int depth);

Result<void> source_glob(const std::string& pattern, const fs::path& base, IfupdownWalk& st,
                         int depth, bool directory) {
    if (depth >= kMaxDepth) return {};
    fs::path p = pattern;
    if (p.is_relative()) p = base / p;
    for (const auto& [f, text] : st.cache.sourced(p, directory)) {
        if (std::find(st.files.begin(), st.files.end(), f) != st.files.end()) continue;
        if (!text) continue;
        if (auto r = walk_ifupdown(*text, f, st, depth + 1); !r) return r;
    }
    return {};
}

Result<void> walk_ifupdown(std::string_view text, const std::string& file, IfupdownWalk& st,
                           int depth) {
    st.files.push_back(file);
    bool in_ours = false;
    bool in_stanza = false;
    int lineno = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++lineno;
        if (line.find('\0') != std::string_view::npos)
            return fail(Errc::InvalidProfile, file + ":" + std::to_string(lineno),
                        "contains a NUL byte");
        const auto hash = line.find('#');
        if (hash != std::string_view::npos && detail::trim(line.substr(0, hash)).empty()) continue;
        auto w = words(line);
        if (w.empty()) continue;
        const std::string_view first = w[0];
        if (first == "iface") {
            in_ours = w.size() > 1 && w[1] == st.ifname;
            in_stanza = true;
            st.mentioned |= in_ours;
            continue;
        }
        if (first == "mapping" || first == "auto" || first.starts_with("allow-") ||
            first == "rename") {
            in_ours = in_stanza = false;
            continue;
        }
        if (first == "source" || first == "source-directory") {
            in_ours = in_stanza = false;
            if (w.size() > 1) {
                auto r = source_glob(std::string(w[1]), fs::path(file).parent_path(), st, depth,
                                     first == "source-directory");
                if (!r) return r;
            }
            continue;
        }
        // A command in any stanza may set this interface ("post-up ethtool
        // -G p4p2 ..." under p4p1); the options belong to their own stanza.
        if (in_stanza && (first == "pre-up" || first == "up" || first == "post-up")) {
            const auto cmd = line.substr(line.find(first) + first.size());
            for (auto& s : settings_of_command(cmd, st.ifname)) {
                s.source_key = std::string(first) + " " + s.source_key;
                s.line = lineno;
                s.file = file;
                st.mentioned = true;
                put(st.cfg.settings, std::move(s));
            }
        }
        if (!in_ours) continue;
        for (const auto& o : kIfupdownOpts)
            if (first == o.name && w.size() > 1)
                put(st.cfg.settings, ForeignSetting{std::string(o.key), onoff(w[1]),
                                                    std::string(o.name), lineno, file});
    }
    return {};
}

}  // namespace

const IfupdownFiles::Cache::Files& IfupdownFiles::Cache::sourced(const fs::path& p,
                                                                 bool directory) {
    const std::string key = (directory ? "d:" : "g:") + p.string();
    if (auto it = sources.find(key); it != sources.end()) return it->second;
    std::vector<fs::path> files;
    std::error_code ec;
    if (directory) {
        for (const auto& e : fs::directory_iterator(p, ec)) {
            // run-parts' rules: names of letters, digits, '_' and '-' only.
            const std::string n = e.path().filename().string();
            if (std::all_of(n.begin(), n.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
                }))
                files.push_back(e.path());
        }
    } else {
        for (const auto& e : fs::directory_iterator(p.parent_path(), ec))
            if (fnmatch(p.filename().c_str(), e.path().filename().c_str(), 0) == 0)
                files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    auto& out = sources[key];
    for (const auto& f : files) {
        // Regular files only: a FIFO or a device would block or never end.
        std::optional<std::string> text;
        if (fs::is_regular_file(f, ec)) text = detail::read_text_file(f, kMaxFile).content;
        out.emplace_back(f.string(), std::move(text));
    }
    return out;
}

namespace {

Result<std::optional<ForeignConfig>> parse_ifupdown_with(std::string_view text,
                                                         const std::string& file,
                                                         const std::string& ifname,
                                                         IfupdownFiles::Cache& cache) {
    IfupdownWalk st{ifname, {}, false, {}, cache};
    st.cfg.tool = "ifupdown";
    st.cfg.source = file;
    if (auto r = walk_ifupdown(text, file, st, 0); !r) return std::unexpected(r.error());
    if (!st.mentioned) return std::optional<ForeignConfig>{};
    return std::optional<ForeignConfig>{std::move(st.cfg)};
}

}  // namespace

IfupdownFiles::IfupdownFiles(fs::path file)
    : file_(std::move(file)), cache_(std::make_unique<Cache>()) {}
IfupdownFiles::~IfupdownFiles() = default;
IfupdownFiles::IfupdownFiles(IfupdownFiles&&) noexcept = default;
IfupdownFiles& IfupdownFiles::operator=(IfupdownFiles&&) noexcept = default;

Result<std::optional<ForeignConfig>> IfupdownFiles::settings_for(const std::string& ifname) {
    if (!top_) {
        const auto t = detail::read_text_file(file_, kMaxFile);
        if (t.sys_errno)
            top_ = fail_errno(t.sys_errno, file_.string() + ": read");
        else
            top_ = t.content;
    }
    if (!*top_) return std::unexpected(top_->error());
    if (!**top_) return std::optional<ForeignConfig>{};
    return parse_ifupdown_with(***top_, file_.string(), ifname, *cache_);
}

Result<std::optional<ForeignConfig>> parse_ifupdown(std::string_view text, const std::string& file,
                                                    const std::string& ifname) {
    IfupdownFiles::Cache cache;
    return parse_ifupdown_with(text, file, ifname, cache);
}

Result<std::optional<ForeignConfig>> read_ifupdown(const fs::path& file,
                                                   const std::string& ifname) {
    return IfupdownFiles(file).settings_for(ifname);
}

Result<std::optional<TunedProfileConf>> read_tuned_profile(const std::vector<fs::path>& dirs,
                                                           const std::string& name) {
    TunedProfileConf out;
    std::string current = name;
    std::vector<std::string> seen;
    for (int depth = 0; depth < kMaxDepth && !current.empty(); ++depth) {
        if (!detail::safe_component(current) ||
            std::find(seen.begin(), seen.end(), current) != seen.end())
            break;
        seen.push_back(current);
        std::optional<std::string> text;
        fs::path file;
        for (const auto& d : dirs) {
            file = d / current / "tuned.conf";
            const auto t = detail::read_text_file(file, kMaxFile);
            if (t.content) {
                text = t.content;
                break;
            }
        }
        if (!text) {
            if (depth == 0) return std::optional<TunedProfileConf>{};
            break;
        }
        if (out.file.empty()) out.file = file.string();
        auto entries = parse_ini(*text, file.string());
        if (!entries) return std::unexpected(entries.error());
        std::string include;
        for (const auto& e : *entries) {
            if (e.section == "main" && e.key == "include") include = e.value;
            const std::string src = file.string() + ": [" + e.section + "] " + e.key;
            if (e.section == "net") {
                if (e.key == "devices") {
                    if (!out.net_devices) out.net_devices = e.value;
                    continue;
                }
                if (e.key == "type") continue;
                // The profile that includes wins over the included one.
                if (std::none_of(out.net.begin(), out.net.end(), [&](const ForeignSetting& s) {
                        return s.source_key.ends_with("] " + e.key);
                    }))
                    out.net.push_back(ForeignSetting{"tuned.net." + e.key, e.value, src, e.line});
            }
            if (e.section == "cpu" &&
                (e.key == "governor" || e.key == "energy_perf_bias" || e.key == "force_latency" ||
                 e.key == "energy_performance_preference"))
                if (std::none_of(out.cpu.begin(), out.cpu.end(), [&](const ForeignSetting& s) {
                        return s.key == "tuned.cpu." + e.key;
                    }))
                    out.cpu.push_back(ForeignSetting{"tuned.cpu." + e.key, e.value, src, e.line});
        }
        // include= may list several, comma separated; the first is followed.
        current = include.substr(0, include.find(','));
        while (!current.empty() && current.back() == ' ')
            current.pop_back();
    }
    // A name that is not a plain profile name found nothing.
    if (out.file.empty()) return std::optional<TunedProfileConf>{};
    return std::optional<TunedProfileConf>{std::move(out)};
}

}  // namespace nictune::sysinfo
