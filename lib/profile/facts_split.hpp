// The driver facts file cut into one piece per driver, so that a process
// parses only the drivers it looks up (profile/facts.hpp). The build cuts the
// shipped file with this code (profile/facts_embed/main.cpp) and compiles the
// pieces in; the tests cut other texts with it to check that a piece parses
// to what the whole file says, errors included.
//
// Standard library only: the build tool links this file alone.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nictune {

// Lines of a piece from `piece_line` on are the file's lines from
// `file_line` on (both counted from 1), up to the next run.
struct LineRun {
    uint32_t piece_line = 1;
    uint32_t file_line = 1;
};

// The file's line for a line of a piece (runs sorted by piece_line; none:
// the same line).
uint32_t file_line_of(std::span<const LineRun> runs, uint32_t piece_line);

// One driver's tables: every line from a header of that driver ([d],
// [d.x], [[d.x]]) up to the next header of another driver, in file order,
// but for the lines that hold only a comment or nothing outside a value
// (a comment inside a multi-line string or array stays where it is).
struct FactsPiece {
    std::string driver;
    std::string text;
    std::vector<LineRun> runs;
};

struct FactsSplit {
    std::vector<FactsPiece> pieces;  // sorted by driver name, as toml++ iterates a table
    std::string error;               // empty: cut; else the first line it cannot cut
    uint32_t error_line = 0;
};

// Cuts at the table headers. It reads TOML only as far as it must to find
// them (strings, multi-line strings, comments, arrays spanning lines), and
// refuses what it cannot attribute to a driver (a key before the first
// header, a quoted driver name with escapes, an unterminated multi-line
// string) rather than guess: such a file is for the whole-file parser.
FactsSplit split_facts(std::string_view text);

}  // namespace nictune
