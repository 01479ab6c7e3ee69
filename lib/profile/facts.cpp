#include "profile/facts.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "profile/driver_facts_data.hpp"
#include "profile/toml.hpp"
#include "profile/toml_util.hpp"
#include "util/enum_names.hpp"
#include "util/strings.hpp"

namespace nictune {
namespace {

// Where the text being parsed comes from: a file, or one driver's piece of
// it whose lines map back to the file's.
struct Origin {
    const std::string& name;
    std::span<const LineRun> runs;  // empty: the text's lines are the file's
};

std::unexpected<Error> invalid(const toml::source_region& r, const Origin& file, std::string msg) {
    SourceLoc loc = tomlutil::loc_of(r, file.name);
    if (!file.runs.empty() && loc.line > 0) loc.line = file_line_of(file.runs, loc.line);
    return tomlutil::invalid(loc, std::move(msg));
}

Result<std::string> get_string(const toml::node& n, const Origin& file, const std::string& what) {
    if (auto s = n.as_string()) return s->get();
    return invalid(n.source(), file, what + ": expected a string");
}

Result<std::vector<std::string>> get_strings(const toml::node& n, const Origin& file,
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

Result<BadVersion> parse_bad(const toml::node& n, const Origin& file, const std::string& what) {
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

Result<uint64_t> get_u32(const toml::node& n, const Origin& file, const std::string& what) {
    auto i = n.as_integer();
    if (!i || i->get() < 0 || i->get() > std::numeric_limits<uint32_t>::max())
        return invalid(n.source(), file, what + ": expected a number in 0..4294967295");
    return static_cast<uint64_t>(i->get());
}

// The device sections a driver's SET covers; [link] goes through rtnetlink
// and features through their own bitmaps.
constexpr std::array<Section, 4> kSetSections = {Section::Coalesce, Section::Rings,
                                                 Section::Channels, Section::Pause};

bool is_set_section(Section s) {
    return std::find(kSetSections.begin(), kSetSections.end(), s) != kSetSections.end();
}

// Reads a table's keys in file order into `row` with `field(key, node)`;
// unknown keys are errors, and so is a missing or empty `source`.
template <class Field>
Result<void> read_row(const toml::node& n, const Origin& file, const std::string& what,
                      std::string_view shape, std::string& source, Field field) {
    auto t = n.as_table();
    if (!t) return invalid(n.source(), file, what + ": expected a table " + std::string(shape));
    for (const auto& [k, v] : tomlutil::in_file_order(*t)) {
        const std::string key(k->str());
        if (key == "source") {
            auto s = get_string(*v, file, what + ".source");
            if (!s) return std::unexpected(s.error());
            source = *s;
            continue;
        }
        auto known = field(key, *v);
        if (!known) return std::unexpected(known.error());
        if (!*known) return invalid(k->source(), file, what + ": unknown key " + quote(key));
    }
    if (source.empty())
        return invalid(n.source(), file,
                       what + ": 'source' is required (the driver code it reads)");
    return {};
}

Result<SectionAccepts> parse_accepts(const toml::node& n, const Origin& file,
                                     const std::string& what) {
    SectionAccepts row;
    std::optional<Section> section;
    const toml::node* keys = nullptr;
    auto ok = read_row(n, file, what, "{section, keys, source}", row.source,
                       [&](const std::string& key, const toml::node& v) -> Result<bool> {
                           if (key == "section") {
                               auto s = get_string(v, file, what + ".section");
                               if (!s) return std::unexpected(s.error());
                               section = find_section(*s);
                               if (!section || !is_set_section(*section))
                                   return invalid(v.source(), file,
                                                  what + ".section: " + quote(*s) +
                                                      " is not one of coalesce, rings, channels, "
                                                      "pause");
                               return true;
                           }
                           if (key == "keys") {
                               keys = &v;
                               return true;
                           }
                           return false;
                       });
    if (!ok) return std::unexpected(ok.error());
    if (!section) return invalid(n.source(), file, what + ": 'section' is required");
    if (!keys) return invalid(n.source(), file, what + ": 'keys' is required (may be empty)");
    auto arr = keys->as_array();
    if (!arr) return invalid(keys->source(), file, what + ".keys: expected an array of key names");
    row.section = *section;
    for (const auto& el : *arr) {
        auto s = el.as_string();
        const std::string name = s ? s->get() : std::string();
        const auto k = find_key(*section, name);
        const KeyInfo* info = k ? &key_info(*k) : nullptr;
        if (!s || !info || !info->writable)
            return invalid(el.source(), file,
                           what + ".keys: " + (s ? quote(name) : std::string("a non-string")) +
                               " is not a settable key of [" +
                               std::string(section_info(*section).name) + "]");
        if (std::find(row.keys.begin(), row.keys.end(), info->key) != row.keys.end())
            return invalid(el.source(), file, what + ".keys: " + quote(name) + " twice");
        row.keys.push_back(info->key);
    }
    return row;
}

Result<Key> device_key_path(const toml::node& n, const Origin& file, const std::string& what) {
    auto s = get_string(n, file, what);
    if (!s) return std::unexpected(s.error());
    const auto bad = [&] {
        return invalid(n.source(), file,
                       what + ": " + quote(*s) +
                           " is not a settable device key (section.key, e.g. coalesce.rx_usecs)");
    };
    const auto dot = s->find('.');
    if (dot == std::string::npos) return bad();
    const auto sec = find_section(s->substr(0, dot));
    if (!sec) return bad();
    const auto k = find_key(*sec, s->substr(dot + 1));
    if (!k) return bad();
    const KeyInfo& info = key_info(*k);
    if (!info.writable || info.type == ValueType::String) return bad();
    return info.key;
}

Result<ValueRule> parse_value_rule(const toml::node& n, const Origin& file,
                                   const std::string& what) {
    ValueRule row;
    bool have_key = false;
    auto ok =
        read_row(n, file, what, "{key, values, min, max, step, round, source}", row.source,
                 [&](const std::string& key, const toml::node& v) -> Result<bool> {
                     if (key == "key") {
                         auto k = device_key_path(v, file, what + ".key");
                         if (!k) return std::unexpected(k.error());
                         row.key = *k;
                         have_key = true;
                     } else if (key == "values") {
                         auto arr = v.as_array();
                         if (!arr)
                             return invalid(v.source(), file,
                                            what + ".values: expected an array of numbers");
                         for (const auto& el : *arr) {
                             auto x = get_u32(el, file, what + ".values");
                             if (!x) return std::unexpected(x.error());
                             row.values.push_back(*x);
                         }
                     } else if (key == "min" || key == "max" || key == "step") {
                         auto x = get_u32(v, file, what + "." + key);
                         if (!x) return std::unexpected(x.error());
                         if (key == "min")
                             row.min = *x;
                         else if (key == "max")
                             row.max = *x;
                         else if (*x == 0)
                             return invalid(v.source(), file, what + ".step: must be at least 1");
                         else
                             row.step = *x;
                     } else if (key == "round") {
                         auto s = get_string(v, file, what + ".round");
                         if (!s) return std::unexpected(s.error());
                         constexpr std::array<Rounding, 4> all = {
                             Rounding::None, Rounding::Up, Rounding::Down, Rounding::E1000eItr};
                         auto it = std::find_if(all.begin(), all.end(),
                                                [&](Rounding r) { return *s == rounding_name(r); });
                         if (it == all.end())
                             return invalid(v.source(), file,
                                            what + ".round: " + quote(*s) +
                                                " is not one of none, up, down, e1000e_itr");
                         row.round = *it;
                     } else {
                         return false;
                     }
                     return true;
                 });
    if (!ok) return std::unexpected(ok.error());
    if (!have_key) return invalid(n.source(), file, what + ": 'key' is required");
    if (row.values.empty() && !row.min && !row.max)
        return invalid(n.source(), file, what + ": give 'values', 'min' or 'max'");
    if (row.min && row.max && *row.min > *row.max)
        return invalid(n.source(), file, what + ": min is above max");
    if ((row.round == Rounding::Up || row.round == Rounding::Down) && row.step == 1)
        return invalid(n.source(), file, what + ": round up/down needs a 'step' above 1");
    return row;
}

Result<ResetRow> parse_reset(const toml::node& n, const Origin& file, const std::string& what) {
    ResetRow row;
    auto ok = read_row(n, file, what, "{what, source}", row.source,
                       [&](const std::string& key, const toml::node& v) -> Result<bool> {
                           if (key != "what") return false;
                           auto l = get_strings(v, file, what + ".what");
                           if (!l) return std::unexpected(l.error());
                           row.what = *l;
                           return true;
                       });
    if (!ok) return std::unexpected(ok.error());
    if (row.what.empty()) return invalid(n.source(), file, what + ": 'what' lists nothing");
    for (const auto& w : row.what) {
        const auto dot = w.find('.');
        auto sec = find_section(w.substr(0, dot));
        bool good = sec && section_info(*sec).device;
        if (good && dot != std::string::npos && *sec != Section::Features) {
            auto k = find_key(*sec, w.substr(dot + 1));
            good = k && key_info(*k).writable;
        } else if (good && dot == std::string::npos) {
            good = *sec != Section::Features;  // a feature is named
        } else if (good) {
            good = dot + 1 < w.size();
        }
        if (!good)
            return invalid(n.source(), file,
                           what + ".what: " + quote(w) +
                               " is not a device section (rings) or setting (link.mtu, "
                               "features.rx-lro)");
    }
    return row;
}

template <class T, class Parse>
Result<void> parse_rows(const toml::node& v, const Origin& file, const std::string& what,
                        std::vector<T>& out, Parse parse) {
    auto arr = v.as_array();
    if (!arr) return invalid(v.source(), file, what + ": expected an array of tables");
    for (const auto& el : *arr) {
        auto row = parse(el, file, what);
        if (!row) return std::unexpected(row.error());
        out.push_back(std::move(*row));
    }
    return {};
}

// [[DRIVER.counters]] {name, kind, meaning, source}: the health checks'
// table, parsed apart from the settings' keys.
Result<std::vector<CounterFact>> parse_counters(const toml::node& n, const Origin& file,
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

// A `*` in a counter's name is a queue (or priority, buffer) number: one or
// more digits. A shell glob would let "rx_queue_*_drops" also take
// virtio_net's "rx_queue_0_xdp_drops", which "rx_queue_0_drops" already
// counts.
bool counter_name_matches(std::string_view pattern, std::string_view name) {
    std::size_t i = 0;
    for (std::size_t p = 0; p < pattern.size(); ++p) {
        if (pattern[p] != '*') {
            if (i >= name.size() || name[i] != pattern[p]) return false;
            ++i;
            continue;
        }
        const std::size_t start = i;
        while (i < name.size() && name[i] >= '0' && name[i] <= '9')
            ++i;
        if (i == start) return false;
    }
    return i == name.size();
}

const CounterFact* DriverFacts::counter(std::string_view name) const {
    for (const auto& c : counters)
        if (counter_name_matches(c.name, name)) return &c;
    return nullptr;
}

const char* rounding_name(Rounding r) {
    static constexpr EnumNames<Rounding> kNames{"none", "up", "down", "e1000e_itr"};
    return kNames[r];
}

bool ValueRule::accepts(uint64_t v) const {
    if (std::find(values.begin(), values.end(), v) != values.end()) return true;
    if (!min && !max) return false;
    return (!min || v >= *min) && (!max || v <= *max);
}

uint64_t ValueRule::settles_on(uint64_t v) const {
    // Listed values are modes, stored as given.
    if (std::find(values.begin(), values.end(), v) != values.end()) return v;
    switch (round) {
        case Rounding::None:
            return v;
        case Rounding::Up:
            return (v + step - 1) / step * step;
        case Rounding::Down:
            return v / step * step;
        case Rounding::E1000eItr: {
            if (v == 0) return v;
            const uint64_t rate = (1000000 / v) & ~uint64_t{3};
            return rate == 0 ? v : 1000000 / rate;
        }
    }
    return v;
}

std::string ValueRule::describe() const {
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out += (i + 1 == values.size() && !min && !max) ? " or " : ", ";
        out += std::to_string(values[i]);
    }
    if (min || max) {
        if (!values.empty()) out += " or ";
        out += (min ? std::to_string(*min) : std::string("0")) + ".." +
               (max ? std::to_string(*max) : std::string("the device's maximum"));
    }
    if (round == Rounding::Up || round == Rounding::Down)
        out += " (rounded " + std::string(rounding_name(round)) + " to a multiple of " +
               std::to_string(step) + ")";
    else if (round == Rounding::E1000eItr)
        out += " (stored as the rate 1000000/us rounded down to a multiple of 4)";
    return out;
}

const SectionAccepts* DriverFacts::accepts_row(Key k) const {
    const Section s = key_info(k).section;
    for (const auto& a : accepts)
        if (a.section == s) return &a;
    return nullptr;
}

bool DriverFacts::settable(Key k) const {
    if (!is_set_section(key_info(k).section)) return true;
    const auto* row = accepts_row(k);
    if (!row) return !knows_settable();
    return std::find(row->keys.begin(), row->keys.end(), k) != row->keys.end();
}

const ValueRule* DriverFacts::value_rule(Key k) const {
    for (const auto& v : values)
        if (v.key == k) return &v;
    return nullptr;
}

std::optional<bool> DriverFacts::resets(std::string_view setting_path) const {
    // A driver's table is complete: what its rows do not name does not reset.
    if (resets_link.empty() && !knows_settable()) return std::nullopt;
    const std::string_view section = setting_path.substr(0, setting_path.find('.'));
    for (const auto& row : resets_link)
        for (const auto& w : row.what)
            if (w == setting_path || w == section) return true;
    return false;
}

std::string DriverFacts::accepts_text(Section s) const {
    const std::string sec(section_info(s).name);
    for (const auto& a : accepts) {
        if (a.section != s) continue;
        if (a.keys.empty()) return driver + " has no " + sec + " SET (" + a.source + ")";
        std::vector<std::string> names;
        for (Key k : a.keys)
            names.emplace_back(key_info(k).name);
        return driver + " accepts only " + join(names, ", ") + " in [" + sec + "] (" + a.source +
               ")";
    }
    return driver + ": nictune's driver table says nothing about [" + sec + "]";
}

namespace {

// The drivers of a facts text, in toml++'s order (by name).
Result<std::vector<DriverFacts>> parse_drivers(std::string_view text, const Origin& file) {
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(file.name));
    } catch (const toml::parse_error& e) {
        return invalid(e.source(), file, std::string(e.description()));
    }
    std::vector<DriverFacts> drivers;
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
            } else if (key == "accepts") {
                auto ok = parse_rows(v, file, what, f.accepts, parse_accepts);
                if (!ok) return std::unexpected(ok.error());
            } else if (key == "values") {
                auto ok = parse_rows(v, file, what, f.values, parse_value_rule);
                if (!ok) return std::unexpected(ok.error());
            } else if (key == "resets_link") {
                auto ok = parse_rows(v, file, what, f.resets_link, parse_reset);
                if (!ok) return std::unexpected(ok.error());
            } else if (key == "counters") {
                auto c = parse_counters(v, file, what);
                if (!c) return std::unexpected(c.error());
                f.counters = std::move(*c);
            } else if (key == "bad_versions") {
                auto arr = v.as_array();
                if (!arr) return invalid(v.source(), file, what + ": expected an array of tables");
                for (const auto& el : *arr) {
                    auto bv = parse_bad(el, file, what);
                    if (!bv) return std::unexpected(bv.error());
                    f.bad_versions.push_back(std::move(*bv));
                }
            } else {
                return invalid(k.source(), file,
                               "unknown key " + quote(key) + " in [" + f.driver + "]");
            }
        }
        // A table of what the driver accepts covers every section with a
        // SET, once each, so that each refusal can cite its row.
        if (!f.accepts.empty()) {
            for (Section sec : kSetSections) {
                auto n = std::count_if(f.accepts.begin(), f.accepts.end(),
                                       [&](const SectionAccepts& a) { return a.section == sec; });
                if (n != 1)
                    return invalid(t->source(), file,
                                   "[" + f.driver + "]: 'accepts' must have one row for [" +
                                       std::string(section_info(sec).name) + "] (" +
                                       std::to_string(n) + " found)");
            }
            for (const auto& v : f.values)
                if (!f.settable(v.key))
                    return invalid(t->source(), file,
                                   "[" + f.driver + "]: a value rule for " + key_path(v.key) +
                                       ", which 'accepts' does not list");
        }
        drivers.push_back(std::move(f));
    }
    return drivers;
}

const std::string kBuiltinFile = "driver-facts.toml (built in)";

// The built-in pieces, each parsed once per process on first use.
struct BuiltinSlot {
    std::once_flag once;
    std::shared_ptr<const DriverFacts> facts;
};

const DriverFacts& builtin_piece(std::size_t i) {
    static std::array<BuiltinSlot, builtin_facts::kPieces.size()> slots;
    BuiltinSlot& slot = slots[i];
    std::call_once(slot.once, [&] {
        const auto& piece = builtin_facts::kPieces[i];
        auto f = parse_facts_piece(piece.text, piece.runs, kBuiltinFile);
        if (!f) {
            // The file is validated by a unit test; a broken build must not run.
            std::fprintf(stderr, "nictune: built-in %s\n", f.error().str().c_str());
            std::abort();
        }
        slot.facts = std::make_shared<const DriverFacts>(std::move(*f));
    });
    return *slot.facts;
}

}  // namespace

Result<DriverFacts> parse_facts_piece(std::string_view text, std::span<const LineRun> runs,
                                      const std::string& file) {
    auto drivers = parse_drivers(text, Origin{file, runs});
    if (!drivers) return std::unexpected(drivers.error());
    // split_facts puts exactly one driver's tables in a piece.
    if (drivers->size() != 1)
        return fail(
            Errc::InvalidProfile, file,
            "a piece of the facts holds " + std::to_string(drivers->size()) + " drivers, not one");
    return std::move(drivers->front());
}

Result<FactsBook> FactsBook::parse(std::string_view text, const std::string& file) {
    auto drivers = parse_drivers(text, Origin{file, {}});
    if (!drivers) return std::unexpected(drivers.error());
    FactsBook book;
    for (auto& f : *drivers) {
        std::string name = f.driver;
        book.entries_.push_back(
            Entry{std::move(name), std::make_shared<const DriverFacts>(std::move(f)), 0});
    }
    return book;
}

const FactsBook& FactsBook::builtin() {
    static const FactsBook book = [] {
        FactsBook b;
        b.entries_.reserve(builtin_facts::kPieces.size());
        for (std::size_t i = 0; i < builtin_facts::kPieces.size(); ++i)
            b.entries_.push_back(Entry{std::string(builtin_facts::kPieces[i].driver), nullptr, i});
        return b;
    }();
    return book;
}

const DriverFacts* FactsBook::facts_of(const Entry& e) {
    return e.facts ? e.facts.get() : &builtin_piece(e.piece);
}

const std::string* DriverFacts::rx_usecs_mode(uint64_t v) const {
    for (const auto& [value, meaning] : rx_usecs_modes)
        if (value == v) return &meaning;
    return nullptr;
}

const DriverFacts* FactsBook::find(std::string_view driver) const {
    for (const auto& e : entries_)
        if (e.driver == driver) return facts_of(e);
    return nullptr;
}

std::vector<const DriverFacts*> FactsBook::drivers() const {
    std::vector<const DriverFacts*> out;
    out.reserve(entries_.size());
    for (const auto& e : entries_)
        out.push_back(facts_of(e));
    return out;
}

void FactsBook::merge(const FactsBook& other) {
    for (const auto& e : other.entries_) {
        auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const Entry& d) { return d.driver == e.driver; });
        if (it != entries_.end())
            *it = e;
        else
            entries_.push_back(e);
    }
}

}  // namespace nictune
