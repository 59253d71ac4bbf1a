// Reading IR text shared by the Graph IR and AscIR parsers: attribute values, `//` comments and
// line:column positions.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "graph/attr.h"

namespace af {

/// "L:C" (1-based) of byte `pos` in `text`.
std::string line_col(std::string_view text, size_t pos);

/// A copy of `text` with every `//` comment (outside string literals) blanked to spaces, so byte
/// positions, lines and columns stay those of the original.
std::string blank_comments(std::string_view text);

/// Reads one attribute value as attr_str prints it, starting at `pos` (leading whitespace
/// skipped): integer `3` / `-1`, float `2.5` / `1e-05` / `inf` / `-inf` / `nan`, string `"floor"`
/// (escapes \" \\ \n \t \r \xNN), size list `[1, s0 + 2, floordiv(s0, 4)]` (items split at depth-0
/// commas). Returns the value and the position just past it. `text` is the whole document: a
/// ParseError reads "line L:C: ...".
std::pair<Attr, size_t> parse_attr_value(std::string_view text, size_t pos);

/// Reads a double-quoted string literal at `pos` (which must hold '"'); returns the unescaped
/// contents and the position past the closing quote. Throws ParseError "line L:C: ...".
std::pair<std::string, size_t> parse_string_literal(std::string_view text, size_t pos);

/// Reads a size list `[e, ...]` at `pos` (leading whitespace skipped); returns the expressions and
/// the position past ']'. Throws ParseError "line L:C: ...".
std::pair<std::vector<sym::Expr>, size_t> parse_expr_list(std::string_view text, size_t pos);

}  // namespace af
