#include "report/keys_doc.hpp"

#include <fmt/format.h>

#include <limits>
#include <string_view>
#include <vector>

#include "engine/translate.hpp"
#include "model/schema.hpp"
#include "profile/features.hpp"

namespace nictune::report {
namespace {

std::string type_text(ValueType t, bool accepts_max, bool string_or_list) {
    switch (t) {
        case ValueType::Bool:
            return "bool";
        case ValueType::U32:
            return accepts_max ? "integer or \"max\"" : "integer";
        case ValueType::Enum:
            return "name";
        case ValueType::String:
            return "string";
        case ValueType::StringList:
            return string_or_list ? "string or array of strings" : "array of strings";
    }
    return "string";
}

std::string range_text(const KeyInfo& k) {
    if (k.type != ValueType::U32) {
        if (k.type == ValueType::Enum) {
            std::string out;
            for (auto n : k.enum_names)
                out += (out.empty() ? "" : ", ") + std::string(n);
            return out;
        }
        return "";
    }
    std::string hi =
        k.max == std::numeric_limits<uint32_t>::max() ? "4294967295" : std::to_string(k.max);
    std::string r = std::to_string(k.min) + ".." + hi;
    if (k.limit != k.key) r += ", at most " + std::string(key_info(k.limit).name);
    if (k.key == Key::LinkMtu) r += ", within min_mtu..max_mtu";
    return r;
}

struct Row {
    std::string section, key, type, range, unit, access, doc;
};

std::vector<Row> rows() {
    std::vector<Row> out;
    for (const auto& s : sections()) {
        for (const auto& m : meta_keys()) {
            if (m.section != s.id) continue;
            out.push_back({std::string(s.name), std::string(m.name),
                           type_text(m.type, false, m.string_or_list), "", "", "profile",
                           std::string(m.doc)});
        }
        for (const auto& k : device_keys()) {
            if (k.section != s.id) continue;
            std::string doc(k.doc);
            if (k.resets_link) doc += " Changing it resets the device queues (a short link flap).";
            out.push_back({std::string(s.name), std::string(k.name),
                           type_text(k.type, k.accepts_max, false), range_text(k),
                           std::string(k.unit),
                           k.writable ? "profile, report" : "report (read only)", doc});
        }
    }
    return out;
}

}  // namespace

nlohmann::json keys_json() {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : rows())
        arr.push_back({{"section", r.section},
                       {"key", r.key},
                       {"type", r.type},
                       {"range", r.range},
                       {"unit", r.unit},
                       {"access", r.access},
                       {"doc", r.doc}});
    return {{"keys", arr}};
}

std::string keys_text() {
    std::string out;
    std::string cur;
    for (const auto& r : rows()) {
        if (r.section != cur) {
            cur = r.section;
            out += fmt::format("[{}]  {}\n", cur, section_info(*find_section(cur)).doc);
        }
        std::string meta = r.type;
        if (!r.range.empty()) meta += ", " + r.range;
        if (!r.unit.empty()) meta += ", " + r.unit;
        if (r.access.starts_with("report")) meta += ", read only";
        out += fmt::format("  {:<20} {}\n  {:<20} {}\n", r.key, meta, "", r.doc);
    }
    return out;
}

namespace {

// How [irq] finds the queue IRQs and what it does about irqbalance: the
// same paragraphs in docs/profiles.md and nictune-profile(5).
std::vector<std::string_view> irq_paragraphs() {
    return {
        "Queue IRQs are the MSI-X vectors of the interface's PCI function "
        "(/sys/class/net/IF/device/msi_irqs) that /proc/interrupts names as queues: ixgbe "
        "IF-TxRx-N, i40e i40e-IF-TxRx-N, e1000e IF-rx-0 and IF-tx-0, virtio virtioK-input.N. The "
        "link (\"other\") vector, named IF, is left where it is, as Intel's set_irq_affinity "
        "leaves it. Each IRQ is a step of its own (irq.N.cpus) with its own saved original; "
        "rollback puts each back. Drivers request their vectors when the interface comes up "
        "(e1000e), and again after a channel change or a link down and up, which resets their "
        "affinity: apply again then (nictuned does).",
        "policy = \"local\" is what Intel's ixgbe and i40e READMEs recommend (set_irq_affinity "
        "-x local): the NIC's NUMA node is device/numa_node, its CPUs "
        "/sys/devices/system/node/nodeN/cpulist (the online ones); a device without a node "
        "(numa_node -1, e.g. one socket or a VM) uses every online CPU and the plan says so.",
        "irqbalance moves IRQs about every 10 s and would undo the placement. nictune never stops "
        "it. irqbalance 1.9 (Debian 12 ships 1.9.2) has four ways to keep away from IRQs: "
        "--banirq=N on its command line and a --policyscript that answers ban=true (both read "
        "at its start, so they need its configuration changed and a restart), "
        "IRQBALANCE_BANNED_CPUS (CPUs, not IRQs), and its unix socket "
        "/run/irqbalance/irqbalancePID.sock, which takes \"settings ban irqs N M ...\" from "
        "root while it runs. nictune uses the socket: it finds irqbalance by a process named "
        "irqbalance in /proc, reads the IRQs already banned (\"setup\"), and sends the list "
        "with this interface's queue IRQs added (the command replaces the list, so the others, "
        "--banirq ones included, are sent again). This is the step irq.irqbalance_banned, "
        "before the IRQs are placed; rollback sends the list without them. irqbalance forgets "
        "the list when it restarts (nictuned applies again).",
        "When irqbalance runs but cannot be told (no socket, or the list would not fit in the "
        "500 bytes it reads from the socket), the step is unsupported and the plan says so: "
        "stop irqbalance (systemctl disable --now irqbalance, Intel's advice) or start it with "
        "--banirq. Managed IRQs (the kernel spreads them itself and answers EIO to a write) are "
        "skipped with a note naming the IRQ, not a failure.",
    };
}

// The driver rules in words, for both documents: the request
// ("adaptive_rx = true") and what becomes of it ("rx_usecs = 1", or "needs
// an explicit rx_usecs"), each key and value between `code` marks
// (markdown's backticks; roff has none) and a rewrite after `becomes`.
struct Translation {
    std::string_view driver;
    std::string request, result;
    std::string_view why;
};
std::vector<Translation> translations(std::string_view code, std::string_view becomes) {
    std::vector<Translation> out;
    for (const auto& r : driver_rules()) {
        const std::string_view to = key_info(r.to).name;
        out.push_back(
            {r.driver,
             fmt::format("{0}{1} = {2}{0}", code, key_info(r.key).name, r.when ? "true" : "false"),
             r.action == RuleAction::Rewrite
                 ? fmt::format("{0}{1}{2} = {3}{1}", becomes, code, to, r.to_value)
                 : fmt::format("needs an explicit {0}{1}{0}", code, to),
             r.why});
    }
    return out;
}

}  // namespace

std::string keys_markdown() {
    std::string out =
        "<!-- Generated by `nictunectl keys --markdown` from lib/model/schema.cpp; a unit test "
        "keeps it in "
        "sync. -->\n"
        "# Profile reference\n\n"
        "A profile is a TOML file named `NAME.toml` in a profiles directory (searched in order: "
        "`--profiles-dir`, `/etc/nictune/profiles`, the shipped `/usr/share/nictune/profiles`; a "
        "name found "
        "earlier shadows later ones). Every key is optional: a key that is not given is left "
        "alone.\n"
        "The same section and key names are used in `nictunectl audit --json`.\n"
        "Read-only keys are reported by audit and cannot be set.\n\n";
    std::string cur;
    for (const auto& r : rows()) {
        if (r.section != cur) {
            cur = r.section;
            out += fmt::format("\n## [{}]\n\n{}\n\n", cur, section_info(*find_section(cur)).doc);
            out += "| key | type | range | unit | use | meaning |\n|---|---|---|---|---|---|\n";
        }
        out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", r.key, r.type, r.range, r.unit,
                           r.access, r.doc);
    }
    out +=
        "\n## Feature aliases\n\nethtool's names, expanded to kernel feature names the way ethtool "
        "expands "
        "them (a `*` matches any text).\n\n| alias | long form | kernel names |\n|---|---|---|\n";
    for (const auto& a : features::aliases())
        out += fmt::format("| `{}` | `{}` | `{}` |\n", a.short_name, a.long_name, a.pattern);
    out += "\n## Sysctl allowlist\n\nOnly these names may appear under `[sysctl]`:\n\n";
    for (auto n : sysctl_allowlist())
        out += fmt::format("- `{}`\n", n);
    out +=
        "\n## Driver translations\n\nA profile states intent; on these drivers the plan expresses "
        "it "
        "differently and says so.\n\n| driver | request | becomes | why |\n|---|---|---|---|\n";
    for (const auto& t : translations("`", ""))
        out += fmt::format("| {} | {} | {} | {} |\n", t.driver, t.request, t.result, t.why);
    out += "\n## [irq] and irqbalance\n\n";
    for (const auto& p : irq_paragraphs())
        out += std::string(p) + "\n\n";
    out.pop_back();
    return out;
}

namespace {

// Text for a roff line: backslashes escaped, '-' as the ASCII minus (man
// pages render a bare '-' as a hyphen, which breaks copied options), and a
// leading '.' or '\'' made literal.
std::string roff(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
    }
    if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
    return out;
}

}  // namespace

std::string keys_man() {
    std::string out = fmt::format(
        ".\\\" Generated by `nictunectl keys --man` from lib/model/schema.cpp; a unit test keeps\n"
        ".\\\" docs/man/nictune-profile.5 in sync.\n"
        ".TH NICTUNE\\-PROFILE 5 \"\" \"nictune {}\" \"File Formats\"\n"
        ".SH NAME\n"
        "nictune\\-profile \\- nictune tuning profiles (TOML)\n"
        ".SH SYNOPSIS\n"
        ".IR DIR / NAME .toml\n"
        ".PP\n"
        "/etc/nictune/profiles/\n"
        ".br\n"
        "/usr/share/nictune/profiles/\n"
        ".SH DESCRIPTION\n"
        "A profile states how network cards should be set: MTU, interrupt coalescing, ring "
        "sizes, queue counts, offloads, flow control, network sysctls and the tuned profile. "
        "It is a TOML file named\n"
        ".IR NAME .toml\n"
        "in a profiles directory. Directories are searched in order:\n"
        ".B \\-\\-profiles\\-dir\n"
        "(nictunectl and nictuned),\n"
        ".I /etc/nictune/profiles\n"
        "(the administrator's), then\n"
        ".I /usr/share/nictune/profiles\n"
        "(shipped); a name found earlier shadows later ones. Names are plain names, never "
        "paths.\n"
        ".PP\n"
        "Every key is optional: a key that is not given is left alone. A profile states "
        "intent; nictune translates it per driver and the plan says so (see\n"
        ".B DRIVER TRANSLATIONS\n"
        "below). The same section and key names are used in\n"
        ".BR \"nictunectl audit \\-\\-json\" .\n"
        "Read\\-only keys are reported by audit and cannot be set.\n"
        ".PP\n"
        "Every error is reported as\n"
        ".IB file : line : column :\n"
        "message, and nothing is changed. When running as root, nictune refuses profile files "
        "and directories that a non\\-root user could modify.\n"
        ".SH SECTIONS AND KEYS\n",
        NICTUNE_VERSION);
    std::string cur;
    for (const auto& r : rows()) {
        if (r.section != cur) {
            cur = r.section;
            out += fmt::format(".SS [{}]\n{}\n", roff(cur),
                               roff(section_info(*find_section(cur)).doc));
        }
        std::string meta = r.type;
        if (!r.range.empty()) meta += "; " + r.range;
        if (!r.unit.empty()) meta += "; " + r.unit;
        if (r.access.starts_with("report")) meta += "; read only";
        out += fmt::format(".TP\n.B {}\n({})\n{}\n", roff(r.key), roff(meta), roff(r.doc));
    }
    out +=
        ".SH FEATURE ALIASES\n"
        "ethtool's names, expanded to kernel feature names the way ethtool expands them (a\n"
        ".B *\n"
        "matches any text).\n";
    for (const auto& a : features::aliases())
        out += fmt::format(".TP\n.BR {} \", \" {}\n{}\n", roff(a.short_name), roff(a.long_name),
                           roff(a.pattern));
    out += ".SH SYSCTL ALLOWLIST\nOnly these names may appear under\n.BR [sysctl] :\n";
    for (auto n : sysctl_allowlist())
        out += fmt::format(".IP \\(bu 2\n{}\n", roff(n));
    out +=
        ".SH DRIVER TRANSLATIONS\n"
        "A profile states intent; on these drivers the plan expresses it differently and says "
        "so.\n";
    for (const auto& t : translations("", "becomes "))
        out += fmt::format(".TP\n.B {}: {}\n{}: {}\n", roff(t.driver), roff(t.request),
                           roff(t.result), roff(t.why));
    out += ".SH IRQ PLACEMENT AND IRQBALANCE\n";
    for (const auto& p : irq_paragraphs())
        out += ".PP\n" + roff(p) + "\n";
    out +=
        ".SH EXAMPLES\n"
        "Jumbo frames, the largest rings and adaptive interrupt moderation on ixgbe cards:\n"
        ".PP\n"
        ".in +4n\n"
        ".EX\n"
        "[profile]\n"
        "description = \"X520: jumbo frames, large rings, adaptive moderation\"\n"
        "\n"
        "[match]\n"
        "drivers = [\"ixgbe\"]\n"
        "\n"
        "[link]\n"
        "mtu = 9014\n"
        "\n"
        "[rings]\n"
        "rx = \"max\"\n"
        "tx = \"max\"\n"
        "\n"
        "[coalesce]\n"
        "adaptive_rx = true\n"
        "\n"
        "[sysctl]\n"
        "\"net.core.rmem_max\" = { at_least = 16777216 }\n"
        ".EE\n"
        ".in\n"
        ".SH FILES\n"
        ".TP\n"
        ".I /etc/nictune/profiles/\n"
        "The administrator's profiles.\n"
        ".TP\n"
        ".I /usr/share/nictune/profiles/\n"
        "Profiles shipped with nictune.\n"
        ".SH SEE ALSO\n"
        ".BR nictunectl (1),\n"
        ".BR nictune.toml (5),\n"
        ".BR nictuned (8),\n"
        ".BR ethtool (8)\n";
    return out;
}

}  // namespace nictune::report
