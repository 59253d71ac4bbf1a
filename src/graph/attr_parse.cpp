// Attribute-value and comment handling for the IR text parsers.
#include "graph/attr_parse.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "support/error.h"

namespace af {
namespace {

[[noreturn]] void fail(std::string_view text, size_t pos, const std::string& what) {
  throw ParseError("line " + line_col(text, pos) + ": " + what);
}

size_t skip_ws(std::string_view text, size_t pos) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  return pos;
}

bool is_number_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' ||
         c == '-';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_int_token(std::string_view tok) {
  size_t i = (!tok.empty() && tok[0] == '-') ? 1 : 0;
  if (i == tok.size()) return false;
  for (; i < tok.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(tok[i]))) return false;
  return true;
}

}  // namespace

std::string line_col(std::string_view text, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

std::string blank_comments(std::string_view text) {
  std::string out(text);
  bool in_string = false;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (in_string) {
      if (c == '\\' && i + 1 < out.size() && out[i + 1] != '\n')
        ++i;
      else if (c == '"' || c == '\n')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
      --i;
    }
  }
  return out;
}

std::pair<std::string, size_t> parse_string_literal(std::string_view text, size_t pos) {
  if (pos >= text.size() || text[pos] != '"') fail(text, pos, "expected a string literal");
  std::string s;
  size_t i = pos + 1;
  for (;;) {
    if (i >= text.size() || text[i] == '\n') fail(text, pos, "unterminated string literal");
    char c = text[i];
    if (c == '"') return {s, i + 1};
    if (c == '\\') {
      if (i + 1 >= text.size()) fail(text, i, "unterminated string literal");
      char e = text[i + 1];
      if (e == 'x') {
        auto hex = [&](size_t k) {
          char h = k < text.size() ? text[k] : '\0';
          return std::isxdigit(static_cast<unsigned char>(h))
                     ? std::stoi(std::string(1, h), nullptr, 16)
                     : -1;
        };
        int hi = hex(i + 2), lo = hex(i + 3);
        if (hi < 0 || lo < 0) fail(text, i, "expected two hex digits after \\x");
        s += static_cast<char>(hi * 16 + lo);
        i += 4;
        continue;
      }
      s += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      i += 2;
      continue;
    }
    s += c;
    ++i;
  }
}

std::pair<std::vector<sym::Expr>, size_t> parse_expr_list(std::string_view text, size_t pos) {
  pos = skip_ws(text, pos);
  if (pos >= text.size() || text[pos] != '[') fail(text, pos, "expected '[' starting a size list");
  std::vector<sym::Expr> items;
  size_t i = pos + 1;
  if (skip_ws(text, i) < text.size() && text[skip_ws(text, i)] == ']')
    return {items, skip_ws(text, i) + 1};
  size_t item_start = i;
  int depth = 0;
  for (;; ++i) {
    if (i >= text.size()) fail(text, pos, "unterminated size list (missing ']')");
    char c = text[i];
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth < 0) fail(text, i, "unbalanced ')' in size list");
    } else if (depth == 0 && (c == ',' || c == ']')) {
      std::string_view item = trim(text.substr(item_start, i - item_start));
      size_t at = skip_ws(text, item_start);
      if (item.empty()) fail(text, at, "empty item in size list");
      try {
        items.push_back(sym::parse_expr(item));
      } catch (const ParseError& e) {
        fail(text, at, e.what());
      }
      if (c == ']') return {items, i + 1};
      item_start = i + 1;
    } else if (c == '\n' || c == '[' || c == '{' || c == '}') {
      fail(text, i,
           "unexpected '" + std::string(c == '\n' ? "end of line" : std::string(1, c)) +
               "' in size list");
    }
  }
}

std::pair<Attr, size_t> parse_attr_value(std::string_view text, size_t pos) {
  pos = skip_ws(text, pos);
  if (pos >= text.size()) fail(text, pos, "expected an attribute value, found end of text");
  if (text[pos] == '"') {
    auto [s, end] = parse_string_literal(text, pos);
    return {Attr(std::move(s)), end};
  }
  if (text[pos] == '[') {
    auto [list, end] = parse_expr_list(text, pos);
    return {Attr(std::move(list)), end};
  }
  size_t end = pos;
  while (end < text.size() && is_number_char(text[end])) ++end;
  std::string tok(text.substr(pos, end - pos));
  if (tok.empty())
    fail(text, pos, "expected an attribute value, found '" + std::string(1, text[pos]) + "'");
  if (is_int_token(tok)) {
    errno = 0;
    char* stop = nullptr;
    long long v = std::strtoll(tok.c_str(), &stop, 10);
    if (errno == ERANGE) fail(text, pos, "integer attribute '" + tok + "' out of range");
    return {Attr(static_cast<int64_t>(v)), end};
  }
  bool digit_start = std::isdigit(static_cast<unsigned char>(tok[0])) ||
                     ((tok[0] == '-' || tok[0] == '+' || tok[0] == '.') && tok.size() > 1);
  bool word = tok == "inf" || tok == "-inf" || tok == "+inf" || tok == "nan" || tok == "-nan";
  // strtod also reads hex floats, which the printers never write.
  bool hex = tok.find_first_of("xXpP") != std::string::npos;
  if ((digit_start && !hex) || word) {
    char* stop = nullptr;
    double v = std::strtod(tok.c_str(), &stop);
    if (stop == tok.c_str() + tok.size()) return {Attr(v), end};
  }
  fail(text, pos,
       "expected an attribute value (integer, float, \"string\" or [sizes]), found '" + tok + "'");
}

}  // namespace af
