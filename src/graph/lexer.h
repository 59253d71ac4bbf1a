// IrLexer: the hand-written tokenizer shared by the textual IR parsers (Graph IR, and any IR
// that uses the same names, attribute values and symbolic size lists).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "graph/attr.h"
#include "sym/expr.h"

namespace af::graph {

/// One token with its 1-based position.
struct Token {
  enum Kind { End, Ident, ValueName, GlobalName, Int, Float, String, Punct };
  Kind kind = End;
  std::string text;  // identifier / name without sigil / number text / unescaped string / char
  int line = 1, col = 1;
};

/// Tokenizer over IR text. Skips whitespace and `//` comments. Identifiers are
/// [A-Za-z_][A-Za-z0-9_.]*, %names and @names [A-Za-z0-9_.]+. Size expressions are not
/// tokenized but read raw (size_list, size_to_eol) and handed to sym::parse_expr.
/// Every error is a ParseError "line L:C: expected X, found Y".
class IrLexer {
 public:
  explicit IrLexer(std::string_view text) : s_(text) {}

  /// The next token without consuming it.
  Token peek();
  /// Consumes and returns the next token.
  Token next();
  /// True (and consumed) when the next token is punctuation `c`.
  bool accept(char c);
  /// True (and consumed) when the next token is the identifier `word`.
  bool accept_word(std::string_view word);
  /// Consumes punctuation `c` or fails naming `c`.
  void expect(char c);
  /// Consumes a token of `kind` and returns its text, or fails with "expected <what>".
  std::string expect_kind(Token::Kind kind, std::string_view what);
  /// Consumes the identifier `word` or fails.
  void expect_word(std::string_view word);
  /// A signed integer literal.
  int64_t expect_int(std::string_view what);
  /// "[e, e, ...]" of symbolic sizes; each element runs to the next ',' or ']' at bracket
  /// depth 0, so it may hold spaces and parentheses.
  std::vector<sym::Expr> size_list();
  /// One symbolic size running to the end of the line (or a `//` comment).
  sym::Expr size_to_eol();
  /// An attribute value: int, float (with '.', 'e', inf, nan, optional '-'), "string" or a
  /// size list.
  Attr attr_value();

  /// Throws ParseError "line L:C: expected <expected>, found <tok>".
  [[noreturn]] void fail(const Token& at, std::string_view expected) const;
  /// Throws ParseError "line L:C: <message>".
  [[noreturn]] static void fail_at(int line, int col, const std::string& message);
  /// Human-readable description of a token for error messages.
  static std::string describe(const Token& t);

 private:
  void skip_space();
  Token lex();  // lexes at pos_ (after skip_space) and advances
  char cur() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  char at(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }
  void advance();
  sym::Expr parse_size(size_t begin, size_t end, int line, int col) const;

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace af::graph
