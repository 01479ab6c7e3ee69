#include "profile/facts_split.hpp"

#include <algorithm>
#include <optional>

namespace nictune {

uint32_t file_line_of(std::span<const LineRun> runs, uint32_t piece_line) {
    auto it = std::upper_bound(runs.begin(), runs.end(), piece_line,
                               [](uint32_t l, const LineRun& r) { return l < r.piece_line; });
    if (it == runs.begin()) return piece_line;
    --it;
    return it->file_line + (piece_line - it->piece_line);
}

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

bool is_bare_key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

constexpr std::string_view kBasic3 = "\"\"\"";
constexpr std::string_view kLiteral3 = "'''";

// What the lines read so far leave open at the end of a line.
struct Scan {
    enum class In : uint8_t { Nothing, MultiBasic, MultiLiteral } in = In::Nothing;
    int depth = 0;  // open arrays and inline tables of a value
    uint32_t opened_at = 0;

    [[nodiscard]] bool at_top() const { return in == In::Nothing && depth == 0; }

    // Follows `line` from `p`; false when a single-line string does not end
    // on it (toml++ would refuse the file; the splitter must not guess).
    bool follow(std::string_view line, std::size_t p, uint32_t line_no) {
        while (p < line.size()) {
            if (in == In::MultiBasic || in == In::MultiLiteral) {
                const char q = in == In::MultiBasic ? '"' : '\'';
                if (in == In::MultiBasic && line[p] == '\\') {
                    p += 2;
                    continue;
                }
                if (line.substr(p, 3) == (q == '"' ? kBasic3 : kLiteral3)) {
                    p += 3;
                    // Up to two more quotes belong to the string's content.
                    for (int i = 0; i < 2 && p < line.size() && line[p] == q; ++i)
                        ++p;
                    in = In::Nothing;
                    continue;
                }
                ++p;
                continue;
            }
            const char c = line[p];
            if (c == '#') return true;
            if (c == '"' || c == '\'') {
                if (line.substr(p, 3) == (c == '"' ? kBasic3 : kLiteral3)) {
                    in = c == '"' ? In::MultiBasic : In::MultiLiteral;
                    opened_at = line_no;
                    p += 3;
                    continue;
                }
                ++p;
                while (p < line.size() && line[p] != c) {
                    if (c == '"' && line[p] == '\\') ++p;
                    ++p;
                }
                if (p >= line.size()) return false;
                ++p;
                continue;
            }
            if (c == '[' || c == '{') {
                if (depth == 0) opened_at = line_no;
                ++depth;
            } else if ((c == ']' || c == '}') && depth > 0) {
                --depth;
            }
            ++p;
        }
        return true;
    }
};

// The first key of a table header ("[ixgbe.values]" -> "ixgbe"), nullopt
// when it cannot be read without a TOML parser.
std::optional<std::string> header_driver(std::string_view line, std::size_t p) {
    ++p;  // '['
    if (p < line.size() && line[p] == '[') ++p;
    while (p < line.size() && is_space(line[p]))
        ++p;
    std::string name;
    if (p < line.size() && (line[p] == '"' || line[p] == '\'')) {
        const char q = line[p++];
        const auto end = line.find(q, p);
        if (end == std::string_view::npos) return std::nullopt;
        name = line.substr(p, end - p);
        if (q == '"' && name.find('\\') != std::string::npos) return std::nullopt;
        p = end + 1;
    } else {
        while (p < line.size() && is_bare_key_char(line[p]))
            name += line[p++];
    }
    while (p < line.size() && is_space(line[p]))
        ++p;
    if (name.empty() || p >= line.size() || (line[p] != '.' && line[p] != ']')) return std::nullopt;
    return name;
}

}  // namespace

FactsSplit split_facts(std::string_view text) {
    FactsSplit out;
    const auto fail = [&](uint32_t line, std::string why) {
        out.error = std::move(why);
        out.error_line = line;
        return out;
    };
    std::vector<FactsPiece> pieces;
    struct Fill {
        uint32_t lines = 0;      // in the piece
        uint32_t last_line = 0;  // of the file, appended last
    };
    std::vector<Fill> fill;
    std::optional<std::size_t> current;
    Scan scan;
    uint32_t line_no = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto nl = text.find('\n', pos);
        const auto end = nl == std::string_view::npos ? text.size() : nl;
        const std::string_view line = text.substr(pos, end - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++line_no;

        std::size_t p = 0;
        if (scan.at_top()) {
            while (p < line.size() && is_space(line[p]))
                ++p;
            const bool blank = p == line.size() || line[p] == '#' || line[p] == '\r';
            if (!blank && line[p] == '[') {
                auto driver = header_driver(line, p);
                if (!driver)
                    return fail(line_no, "cannot read the driver's name in this table header");
                auto it = std::find_if(pieces.begin(), pieces.end(),
                                       [&](const FactsPiece& f) { return f.driver == *driver; });
                current = static_cast<std::size_t>(it - pieces.begin());
                if (it == pieces.end()) {
                    pieces.push_back(FactsPiece{*driver, {}, {}});
                    fill.emplace_back();
                }
                // Nothing of a header line stays open: the rest is a comment.
                p = line.size();
            } else if (!blank && !current) {
                return fail(line_no, "a key before the first driver's table");
            }
            // Comments and blank lines between the tables stay out of the
            // pieces: toml++ reads every byte it is given, and the shipped
            // file's commentary (the counters' preamble sits in veth's
            // piece) was most of what a one-driver parse read. The line
            // runs keep the rows at their file lines.
            if (blank || !current) continue;
        }
        FactsPiece& piece = pieces[*current];
        Fill& f = fill[*current];
        ++f.lines;
        if (f.lines == 1 || f.last_line + 1 != line_no)
            piece.runs.push_back(LineRun{f.lines, line_no});
        f.last_line = line_no;
        piece.text.append(line);
        piece.text.push_back('\n');
        if (!scan.follow(line, p, line_no)) return fail(line_no, "a string that does not end");
    }
    if (scan.in != Scan::In::Nothing)
        return fail(scan.opened_at, "a multi-line string that does not end");
    if (scan.depth > 0) return fail(scan.opened_at, "an array or inline table that does not end");
    std::sort(pieces.begin(), pieces.end(),
              [](const FactsPiece& a, const FactsPiece& b) { return a.driver < b.driver; });
    out.pieces = std::move(pieces);
    return out;
}

}  // namespace nictune
