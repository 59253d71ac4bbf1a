// IrLexer: tokens, raw symbolic-size scanning and attribute values for the textual IRs.
#include "graph/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "graph/attr_parse.h"
#include "support/error.h"

namespace af::graph {
namespace {
bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
}  // namespace

void IrLexer::advance() {
  if (pos_ >= s_.size()) return;
  if (s_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void IrLexer::skip_space() {
  for (;;) {
    char c = cur();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
    } else if (c == '/' && at(pos_ + 1) == '/') {
      while (pos_ < s_.size() && s_[pos_] != '\n') advance();
    } else {
      return;
    }
  }
}

Token IrLexer::lex() {
  skip_space();
  Token t;
  t.line = line_;
  t.col = col_;
  if (pos_ >= s_.size()) return t;
  char c = cur();
  if (c == '%' || c == '@') {
    advance();
    t.kind = c == '%' ? Token::ValueName : Token::GlobalName;
    while (is_name_char(cur())) t.text += cur(), advance();
    if (t.text.empty()) fail_at(t.line, t.col, std::string("expected a name after '") + c + "'");
    return t;
  }
  if (is_ident_start(c)) {
    t.kind = Token::Ident;
    while (is_name_char(cur())) t.text += cur(), advance();
    return t;
  }
  if (is_digit(c)) {
    t.kind = Token::Int;
    while (is_digit(cur())) t.text += cur(), advance();
    if (cur() == '.') {
      t.kind = Token::Float;
      t.text += cur(), advance();
      while (is_digit(cur())) t.text += cur(), advance();
    }
    if ((cur() == 'e' || cur() == 'E') &&
        (is_digit(at(pos_ + 1)) ||
         ((at(pos_ + 1) == '+' || at(pos_ + 1) == '-') && is_digit(at(pos_ + 2))))) {
      t.kind = Token::Float;
      t.text += cur(), advance();
      if (cur() == '+' || cur() == '-') t.text += cur(), advance();
      while (is_digit(cur())) t.text += cur(), advance();
    }
    return t;
  }
  if (c == '"') {
    t.kind = Token::String;
    advance();
    for (;;) {
      char d = cur();
      if (pos_ >= s_.size() || d == '\n') fail_at(t.line, t.col, "unterminated string");
      advance();
      if (d == '"') break;
      if (d != '\\') {
        t.text += d;
        continue;
      }
      char e = cur();
      advance();
      switch (e) {
        case '"': t.text += '"'; break;
        case '\\': t.text += '\\'; break;
        case 'n': t.text += '\n'; break;
        case 't': t.text += '\t'; break;
        case 'r': t.text += '\r'; break;
        case 'x': {
          std::string hex;
          for (int i = 0; i < 2 && std::isxdigit(static_cast<unsigned char>(cur())); ++i)
            hex += cur(), advance();
          if (hex.size() != 2) fail_at(line_, col_, "expected two hex digits after \\x");
          t.text += static_cast<char>(std::strtol(hex.c_str(), nullptr, 16));
          break;
        }
        default: fail_at(line_, col_ - 1, std::string("unknown escape '\\") + e + "' in string");
      }
    }
    return t;
  }
  t.kind = Token::Punct;
  t.text = std::string(1, c);
  advance();
  return t;
}

Token IrLexer::peek() {
  size_t pos = pos_;
  int line = line_, col = col_;
  Token t = lex();
  pos_ = pos, line_ = line, col_ = col;
  return t;
}

Token IrLexer::next() {
  return lex();
}

bool IrLexer::accept(char c) {
  Token t = peek();
  if (t.kind != Token::Punct || t.text[0] != c) return false;
  next();
  return true;
}

bool IrLexer::accept_word(std::string_view word) {
  Token t = peek();
  if (t.kind != Token::Ident || t.text != word) return false;
  next();
  return true;
}

void IrLexer::expect(char c) {
  Token t = next();
  if (t.kind != Token::Punct || t.text[0] != c) fail(t, std::string("'") + c + "'");
}

std::string IrLexer::expect_kind(Token::Kind kind, std::string_view what) {
  Token t = next();
  if (t.kind != kind) fail(t, what);
  return t.text;
}

void IrLexer::expect_word(std::string_view word) {
  Token t = next();
  if (t.kind != Token::Ident || t.text != word) fail(t, "'" + std::string(word) + "'");
}

int64_t IrLexer::expect_int(std::string_view what) {
  bool neg = accept('-');
  Token t = next();
  if (t.kind != Token::Int) fail(t, what);
  std::string text = (neg ? "-" : "") + t.text;
  errno = 0;
  long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) fail_at(t.line, t.col, "integer " + text + " out of range");
  return v;
}

sym::Expr IrLexer::parse_size(size_t begin, size_t end, int line, int col) const {
  std::string_view text = s_.substr(begin, end - begin);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  try {
    return sym::parse_expr(text);
  } catch (const ParseError& e) {
    fail_at(line, col, std::string("bad size: ") + e.what());
  }
}

std::vector<sym::Expr> IrLexer::size_list() {
  expect('[');
  std::vector<sym::Expr> out;
  if (accept(']')) return out;
  for (;;) {
    skip_space();
    size_t begin = pos_;
    int line = line_, col = col_, depth = 0;
    for (;;) {
      char c = cur();
      if (pos_ >= s_.size() || c == '\n' || (c == '/' && at(pos_ + 1) == '/') || c == '{' ||
          c == '}' || c == '[' || (depth == 0 && (c == ',' || c == ']')))
        break;
      if (c == '(') ++depth;
      if (c == ')' && --depth < 0) break;
      advance();
    }
    if (pos_ == begin) fail(peek(), "a size");
    out.push_back(parse_size(begin, pos_, line, col));
    Token t = next();
    if (t.kind == Token::Punct && t.text == "]") return out;
    if (t.kind != Token::Punct || t.text != ",") fail(t, "',' or ']' in size list");
  }
}

sym::Expr IrLexer::size_to_eol() {
  skip_space();
  size_t begin = pos_;
  int line = line_, col = col_;
  while (pos_ < s_.size() && cur() != '\n' && !(cur() == '/' && at(pos_ + 1) == '/')) advance();
  if (pos_ == begin) fail(peek(), "a size");
  return parse_size(begin, pos_, line, col);
}

// Attribute values are read by the reader the AscIR parser shares (graph/attr_parse.h), so both
// IRs accept exactly the same value syntax.
Attr IrLexer::attr_value() {
  skip_space();
  char c = cur();
  if (pos_ >= s_.size() || c == '}' || c == ',' || c == ')' || c == '{')
    fail(peek(), "an attribute value (int, float, \"string\" or [sizes])");
  auto [value, end] = parse_attr_value(s_, pos_);
  while (pos_ < end) advance();
  return value;
}

std::string IrLexer::describe(const Token& t) {
  switch (t.kind) {
    case Token::End: return "end of input";
    case Token::ValueName: return "'%" + t.text + "'";
    case Token::GlobalName: return "'@" + t.text + "'";
    case Token::String: return "string \"" + t.text + "\"";
    default: return "'" + t.text + "'";
  }
}

void IrLexer::fail(const Token& at, std::string_view expected) const {
  fail_at(at.line, at.col, "expected " + std::string(expected) + ", found " + describe(at));
}

void IrLexer::fail_at(int line, int col, const std::string& message) {
  throw ParseError("line " + std::to_string(line) + ":" + std::to_string(col) + ": " + message);
}

}  // namespace af::graph
