// A streaming JSON writer for the large documents nictune prints (an audit
// of hundreds of interfaces): it appends straight to a string, with the same
// layout as nlohmann::json::dump(2), instead of building a document tree
// first (which cost more than reading the kernel at 512 interfaces).
// Strings that are not valid UTF-8 (a driver's version string might be;
// names never are, being in their text form, util/strings.hpp) get U+FFFD
// for the bad bytes, so the output is always valid JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nictune {

class JsonWriter {
  public:
    // indent 0: compact, on one line.
    explicit JsonWriter(std::string& out, int indent = 2) : out_(out), indent_(indent) {}

    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    void key(std::string_view k);
    // A key already quoted and followed by ": " (":" in a compact writer; see
    // quote_key), for keys written many times over (feature names, schema
    // keys, a record's saved values).
    void quoted_key(std::string_view q);

    void value(std::string_view s);
    void value(const char* s) { value(std::string_view(s)); }
    void value(const std::string& s) { value(std::string_view(s)); }
    void value(bool b);
    void value(uint64_t n);
    void value(int64_t n);
    void value(int n) { value(static_cast<int64_t>(n)); }
    void value(unsigned n) { value(static_cast<uint64_t>(n)); }
    // Finite numbers with up to 6 significant digits; NaN and inf as null.
    void value(double d);
    void null();
    template <class T>
    void value(const std::optional<T>& v) {
        if (v)
            value(*v);
        else
            null();
    }

    template <class T>
    void field(std::string_view k, const T& v) {
        key(k);
        value(v);
    }

    // k: an array of the items as values.
    template <class Range>
    void values(std::string_view k, const Range& items) {
        key(k);
        begin_array();
        for (const auto& x : items)
            value(x);
        end_array();
    }
    // k: an array of one object per item, filled by fill(item) between the
    // braces.
    template <class Range, class Fill>
    void objects(std::string_view k, const Range& items, Fill&& fill) {
        key(k);
        begin_array();
        for (const auto& x : items) {
            begin_object();
            fill(x);
            end_object();
        }
        end_array();
    }
    // The same, or null when the source could not be read (`known` false).
    template <class Range, class Fill>
    void objects_or_null(std::string_view k, bool known, const Range& items, Fill&& fill) {
        if (known)
            objects(k, items, fill);
        else
            field(k, nullptr);
    }
    // k: one object filled by fill() between the braces.
    template <class Fill>
    void object(std::string_view k, Fill&& fill) {
        key(k);
        begin_object();
        fill();
        end_object();
    }
    // The same, or null when `known` is false.
    template <class Fill>
    void object_or_null(std::string_view k, bool known, Fill&& fill) {
        if (known)
            object(k, fill);
        else
            field(k, nullptr);
    }
    void value(std::nullptr_t) { null(); }
    // One whole value the caller writes itself, for values written many
    // times over in one compact shape (a record's saved values): writes the
    // separator and returns the output to append it to. The caller reports
    // a string it had to repair (append_json_string's false) with
    // note_replaced().
    std::string& raw_value() {
        item();
        return out_;
    }
    void note_replaced() { replaced_ = true; }

    // Whether a string written so far was not valid UTF-8 (and got U+FFFD):
    // for what must read back byte for byte, checked once it is written
    // instead of in a pass of its own.
    [[nodiscard]] bool replaced_invalid_utf8() const { return replaced_; }

  private:
    void item();  // separator and indentation before a value in a container
    void open(char c);
    void close(char c);

    // Items written so far in the open container at depth d (0: outermost).
    int& count(std::size_t d) { return d < kShallow ? shallow_[d] : deep_[d - kShallow]; }

    static constexpr std::size_t kShallow = 16;
    std::string& out_;
    int indent_;
    // The counts per open container: the first levels in place (a writer is
    // made per record, 1,024 of them in an apply of 512 interfaces), any
    // deeper ones in deep_.
    std::size_t depth_ = 0;
    int shallow_[kShallow] = {};
    std::vector<int> deep_;
    bool after_key_ = false;
    bool replaced_ = false;
};

// Appends s as a JSON string literal (quotes included). False when s was
// not valid UTF-8 (its bad bytes are written as U+FFFD).
bool append_json_string(std::string& out, std::string_view s);
// "\"name\": ", for JsonWriter::quoted_key.
std::string quote_key(std::string_view k);

// Whether s is valid UTF-8 (what must read back byte for byte is refused
// rather than written with replacements).
bool valid_utf8(std::string_view s);
// s with U+FFFD for each byte that is not valid UTF-8, as the writer does:
// for text bound for D-Bus, which refuses anything else. Names never need
// it (they are in text form, util/strings.hpp); a driver's or a file
// system's strings might.
std::string to_valid_utf8(std::string_view s);

}  // namespace nictune
