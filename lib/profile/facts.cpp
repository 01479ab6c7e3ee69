#include "profile/facts.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "profile/driver_facts_data.hpp"
#include "profile/toml_util.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

std::unexpected<Error> invalid(const toml::source_region& r, const std::string& file,
                               std::string msg) {
    return tomlutil::invalid(tomlutil::loc_of(r, file), std::move(msg));
}

Result<std::string> get_string(const toml::node& n, const std::string& file,
                               const std::string& what) {
    if (auto s = n.as_string()) return s->get();
    return invalid(n.source(), file, what + ": expected a string");
}

Result<std::vector<std::string>> get_strings(const toml::node& n, const std::string& file,
                                             const std::string& what) {
    std::vector<std::string> out;
    auto arr = n.as_array();
    if (!arr) return invalid(n.source(), file, what + ": expected an array of strings");
    for (const auto& el : *arr) {
        auto s = el.as_string();
        if (!s) return invalid(el.source(), file, what + ": expected an array of strings");
        out.push_back(to_lower(s->get()));
    }
    return out;
}

Result<BadVersion> parse_bad(const toml::node& n, const std::string& file,
                             const std::string& what) {
    auto t = n.as_table();
    if (!t) return invalid(n.source(), file, what + ": expected a table {version, reason, fix}");
    BadVersion bv;
    for (auto&& [k, v] : *t) {
        auto s = get_string(v, file, what + "." + std::string(k.str()));
        if (!s) return std::unexpected(s.error());
        if (k.str() == "version")
            bv.version = *s;
        else if (k.str() == "reason")
            bv.reason = *s;
        else if (k.str() == "fix")
            bv.fix = *s;
        else
            return invalid(k.source(), file, what + ": unknown key " + quote(k.str()));
    }
    if (bv.version.empty()) return invalid(n.source(), file, what + ": 'version' is required");
    return bv;
}

// [[DRIVER.counters]] {name, kind, meaning, source}: the health checks'
// table, parsed apart from the settings' keys.
Result<std::vector<CounterFact>> parse_counters(const toml::node& n, const std::string& file,
                                                const std::string& what) {
    auto arr = n.as_array();
    if (!arr)
        return invalid(n.source(), file,
                       what + ": expected an array of tables {name, kind, meaning, source}");
    std::vector<CounterFact> out;
    for (const auto& el : *arr) {
        auto t = el.as_table();
        if (!t)
            return invalid(el.source(), file,
                           what + ": expected a table {name, kind, meaning, source}");
        CounterFact c;
        for (auto&& [k, v] : *t) {
            auto str = get_string(v, file, what + "." + std::string(k.str()));
            if (!str) return std::unexpected(str.error());
            if (k.str() == "name")
                c.name = *str;
            else if (k.str() == "kind")
                c.kind = *str;
            else if (k.str() == "meaning")
                c.meaning = *str;
            else if (k.str() == "source")
                c.source = *str;
            else
                return invalid(k.source(), file, what + ": unknown key " + quote(k.str()));
        }
        if (c.name.empty()) return invalid(el.source(), file, what + ": 'name' is required");
        if (!valid_counter_kind(c.kind))
            return invalid(el.source(), file,
                           what + ": kind " + quote(c.kind) +
                               " is not one of rx_no_buffer, rx_dropped, crc, pause_rx, "
                               "pause_tx, tx_timeout, alloc_fail");
        if (c.source.empty())
            return invalid(el.source(), file,
                           what + ": 'source' is required (cite where it comes from)");
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace

bool valid_counter_kind(std::string_view kind) {
    for (std::string_view k :
         {"rx_no_buffer", "rx_dropped", "crc", "pause_rx", "pause_tx", "tx_timeout", "alloc_fail"})
        if (kind == k) return true;
    return false;
}

const CounterFact* DriverFacts::counter(std::string_view name) const {
    for (const auto& c : counters)
        if (glob_match(c.name, name)) return &c;
    return nullptr;
}

Result<FactsBook> FactsBook::parse(std::string_view text, const std::string& file) {
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(file));
    } catch (const toml::parse_error& e) {
        return invalid(e.source(), file, std::string(e.description()));
    }
    FactsBook book;
    for (auto&& [name, node] : root) {
        auto t = node.as_table();
        if (!t)
            return invalid(name.source(), file,
                           "[" + std::string(name.str()) + "] must be a table");
        DriverFacts f;
        f.driver = name.str();
        for (auto&& [k, v] : *t) {
            const std::string key(k.str());
            const std::string what = f.driver + "." + key;
            if (key == "description" || key == "recommended_version" || key == "coalesce_note") {
                auto s = get_string(v, file, what);
                if (!s) return std::unexpected(s.error());
                if (key == "description")
                    f.description = *s;
                else if (key == "recommended_version")
                    f.recommended_version = *s;
                else
                    f.coalesce_note = *s;
            } else if (key == "max_mtu") {
                auto i = v.as_integer();
                if (!i || i->get() < 68 || i->get() > 65535)
                    return invalid(v.source(), file, what + ": expected a number in 68..65535");
                f.max_mtu = static_cast<uint32_t>(i->get());
            } else if (key == "pci_ids") {
                auto l = get_strings(v, file, what);
                if (!l) return std::unexpected(l.error());
                f.pci_ids = *l;
            } else if (key == "rx_usecs_modes") {
                auto t2 = v.as_table();
                if (!t2)
                    return invalid(v.source(), file,
                                   what + ": expected a table of \"value\" = \"meaning\"");
                for (auto&& [mk, mv] : *t2) {
                    const std::string num(mk.str());
                    if (num.empty() || num.size() > 9 ||
                        num.find_first_not_of("0123456789") != std::string::npos)
                        return invalid(mk.source(), file,
                                       what + ": " + quote(num) + " is not a number");
                    auto meaning = get_string(mv, file, what + "." + num);
                    if (!meaning) return std::unexpected(meaning.error());
                    f.rx_usecs_modes.emplace_back(std::stoull(num), *meaning);
                }
            } else if (key == "bad_versions") {
                auto arr = v.as_array();
                if (!arr) return invalid(v.source(), file, what + ": expected an array of tables");
                for (const auto& el : *arr) {
                    auto bv = parse_bad(el, file, what);
                    if (!bv) return std::unexpected(bv.error());
                    f.bad_versions.push_back(std::move(*bv));
                }
            } else if (key == "counters") {
                auto c = parse_counters(v, file, what);
                if (!c) return std::unexpected(c.error());
                f.counters = std::move(*c);
            } else {
                return invalid(k.source(), file,
                               "unknown key " + quote(key) + " in [" + f.driver + "]");
            }
        }
        book.drivers_.push_back(std::move(f));
    }
    return book;
}

const FactsBook& FactsBook::builtin() {
    static const FactsBook book = [] {
        auto b = parse(kDriverFactsToml, "driver-facts.toml (built in)");
        if (!b) {
            // The file is validated by a unit test; a broken build must not start.
            std::fprintf(stderr, "nictune: built-in %s\n", b.error().str().c_str());
            std::abort();
        }
        return std::move(*b);
    }();
    return book;
}

const std::string* DriverFacts::rx_usecs_mode(uint64_t v) const {
    for (const auto& [value, meaning] : rx_usecs_modes)
        if (value == v) return &meaning;
    return nullptr;
}

const DriverFacts* FactsBook::find(std::string_view driver) const {
    for (const auto& f : drivers_)
        if (f.driver == driver) return &f;
    return nullptr;
}

void FactsBook::merge(const FactsBook& other) {
    for (const auto& f : other.drivers_) {
        auto it = std::find_if(drivers_.begin(), drivers_.end(),
                               [&](const DriverFacts& d) { return d.driver == f.driver; });
        if (it != drivers_.end())
            *it = f;
        else
            drivers_.push_back(f);
    }
}

}  // namespace nictune
