#include "sysinfo/procfs.hpp"

#include <fcntl.h>

#include <cctype>
#include <charconv>

#include "sysinfo/text_file.hpp"

namespace nictune::sysinfo {
namespace {

// /proc/interrupts on a machine with thousands of IRQs and hundreds of CPUs
// is a few MB; more than this is not a real one.
constexpr std::size_t kMaxTable = 64 * 1024 * 1024;

// Into `out` (cleared first): a table's rows reuse one vector.
void split_ws(std::string_view s, std::vector<std::string_view>& out) {
    out.clear();
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
            ++i;
        std::size_t j = i;
        while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])))
            ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
}

std::vector<std::string_view> split_ws(std::string_view s) {
    std::vector<std::string_view> out;
    split_ws(s, out);
    return out;
}

template <class T>
std::optional<T> num(std::string_view s, int base = 10) {
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::unexpected<Error> bad_line(const char* file, std::size_t line, std::string why) {
    return fail(Errc::Io, std::string(file) + ":" + std::to_string(line), std::move(why));
}

}  // namespace

const InterruptLine* InterruptTable::find(unsigned irq) const {
    auto it = by_irq.find(irq);
    return it == by_irq.end() ? nullptr : &lines[it->second];
}

Result<InterruptTable> parse_interrupts(std::string_view text) {
    constexpr const char* kFile = "/proc/interrupts";
    InterruptTable t;
    std::size_t lineno = 0;
    bool header = false;
    std::vector<std::string_view> toks;  // a row's columns
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++lineno;
        if (detail::trim(line).empty()) continue;
        if (!header) {
            for (auto tok : split_ws(line)) {
                if (!tok.starts_with("CPU"))
                    return bad_line(kFile, lineno, "header is not CPUn...");
                auto n = num<unsigned>(tok.substr(3));
                if (!n) return bad_line(kFile, lineno, "header is not CPUn...");
                t.cpus.push_back(*n);
            }
            if (t.cpus.empty()) return bad_line(kFile, lineno, "header names no CPU");
            header = true;
            continue;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        auto irq = num<unsigned>(detail::trim(line.substr(0, colon)));
        if (!irq) continue;  // NMI, LOC, ERR, MIS, ...
        split_ws(line.substr(colon + 1), toks);
        if (toks.size() < t.cpus.size())
            return bad_line(kFile, lineno,
                            "IRQ " + std::to_string(*irq) + " has " + std::to_string(toks.size()) +
                                " columns for " + std::to_string(t.cpus.size()) + " CPUs");
        InterruptLine l;
        l.irq = *irq;
        l.per_cpu.reserve(t.cpus.size());
        for (std::size_t i = 0; i < t.cpus.size(); ++i) {
            auto c = num<uint64_t>(toks[i]);
            if (!c)
                return bad_line(kFile, lineno,
                                "IRQ " + std::to_string(*irq) + ": count " +
                                    std::string(toks[i].substr(0, 32)) + " is not a number");
            l.per_cpu.push_back(*c);
        }
        // After the counts: the chip, "hwirq-type", then the action names.
        if (toks.size() > t.cpus.size()) l.chip = std::string(toks[t.cpus.size()]);
        if (toks.size() > t.cpus.size() + 2) {
            const char* from = toks[t.cpus.size() + 2].data();
            const char* to = toks.back().data() + toks.back().size();
            l.name = std::string(from, static_cast<std::size_t>(to - from));
        }
        if (t.by_irq.contains(l.irq))
            return bad_line(kFile, lineno, "IRQ " + std::to_string(l.irq) + " listed twice");
        t.by_irq.emplace(l.irq, t.lines.size());
        t.lines.push_back(std::move(l));
    }
    if (!header) return fail(Errc::Io, kFile, "empty");
    return t;
}

Result<SoftnetTable> parse_softnet(std::string_view text) {
    constexpr const char* kFile = "/proc/net/softnet_stat";
    SoftnetTable t;
    std::size_t lineno = 0;
    bool all_have_cpu = true;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++lineno;
        auto toks = split_ws(line);
        if (toks.empty()) continue;
        if (toks.size() < 3) return bad_line(kFile, lineno, "fewer than 3 columns");
        std::vector<uint64_t> v;
        for (auto tok : toks) {
            auto n = num<uint64_t>(tok, 16);
            if (!n) return bad_line(kFile, lineno, "column is not hexadecimal");
            v.push_back(*n);
        }
        SoftnetCpu c;
        c.processed = v[0];
        c.dropped = v[1];
        c.time_squeeze = v[2];
        if (v.size() > 9) c.received_rps = v[9];
        if (v.size() > 10) c.flow_limit = v[10];
        if (v.size() > 12 && v[12] <= 65535) {
            c.cpu = static_cast<unsigned>(v[12]);
        } else {
            all_have_cpu = false;
            c.cpu = static_cast<unsigned>(t.cpus.size());
        }
        t.cpus.push_back(c);
    }
    t.cpu_column = all_have_cpu && !t.cpus.empty();
    return t;
}

std::optional<int> queue_of_irq_name(std::string_view name) {
    // Names are "<dev>-TxRx-<n>", "<dev>-rx-<n>", "i40e-<dev>-TxRx-<n>",
    // "virtioN-input.<n>", "mlx5_comp<n>@pci:...": digits at the end after
    // '-' or '.', and a name that says rx/tx/input/output/comp somewhere.
    const auto at = name.find('@');
    if (at != std::string_view::npos) name = name.substr(0, at);
    std::size_t end = name.size();
    std::size_t b = end;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(name[b - 1])))
        --b;
    if (b == end || end - b > 6) return std::nullopt;
    std::string lower;
    for (char c : name.substr(0, b))
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool queue_word =
        lower.find("rx") != std::string::npos || lower.find("tx") != std::string::npos ||
        lower.find("input") != std::string::npos || lower.find("output") != std::string::npos ||
        lower.find("comp") != std::string::npos || lower.find("queue") != std::string::npos;
    if (!queue_word) return std::nullopt;
    return num<int>(name.substr(b, end - b));
}

ProcFs::ProcFs(std::filesystem::path root) : root_(std::move(root)) {}

Result<InterruptTable> ProcFs::interrupts() const {
    const auto p = root_ / "interrupts";
    const auto f = detail::read_text_file(p, kMaxTable);
    if (f.sys_errno) return fail_errno(f.sys_errno, p.string() + ": read");
    if (!f.content) return fail(Errc::Unsupported, p.string(), "does not exist");
    return parse_interrupts(*f.content);
}

Result<SoftnetTable> ProcFs::softnet() const {
    const auto p = root_ / "net" / "softnet_stat";
    const auto f = detail::read_text_file(p, kMaxTable);
    if (f.sys_errno) return fail_errno(f.sys_errno, p.string() + ": read");
    if (!f.content) return fail(Errc::Unsupported, p.string(), "does not exist");
    return parse_softnet(*f.content);
}

ProcFs::Affinity ProcFs::irq_affinity(unsigned irq) const {
    if (!irq_dir_tried_) {
        irq_dir_tried_ = true;
        irq_dir_ = detail::open_dir(root_ / "irq");
    }
    Affinity a;
    const std::string dir =
        irq_dir_ ? std::to_string(irq) : (root_ / "irq" / std::to_string(irq)).string();
    const int at = irq_dir_ ? irq_dir_.get() : AT_FDCWD;
    if (auto f = detail::read_value_file_at(at, (dir + "/smp_affinity_list").c_str(), 4096);
        f.content)
        a.affinity = std::string(detail::trim(*f.content));
    if (auto f = detail::read_value_file_at(at, (dir + "/effective_affinity_list").c_str(), 4096);
        f.content)
        a.effective = std::string(detail::trim(*f.content));
    return a;
}

}  // namespace nictune::sysinfo
