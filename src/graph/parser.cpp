// Graph IR parser: recursive descent over IrLexer tokens.
//
//   file   := graph*
//   graph  := 'graph' @NAME '(' [SYM '=' INT (',' SYM '=' INT)*] ')' '{' node* return '}'
//   node   := %NAME '=' KIND '(' [%NAME (',' %NAME)*] ')' ['{' attr (',' attr)* '}'] ':' type
//   attr   := KEY '=' VALUE
//   type   := DTYPE sizes ['strides' sizes] ['offset' SIZE-TO-END-OF-LINE]
//   return := 'return' [%NAME (',' %NAME)*]
#include "graph/parser.h"

#include <unordered_map>

#include "graph/lexer.h"
#include "graph/op_registry.h"
#include "support/error.h"

namespace af::graph {
namespace {

class GraphParser {
 public:
  explicit GraphParser(std::string_view text) : lex_(text) {}

  std::vector<Graph> parse_file() {
    std::vector<Graph> out;
    while (lex_.peek().kind != Token::End) out.push_back(parse_graph());
    return out;
  }

 private:
  Graph parse_graph() {
    Graph g;
    lex_.expect_word("graph");
    g.name = lex_.expect_kind(Token::GlobalName, "a graph name '@NAME'");
    lex_.expect('(');
    if (!lex_.accept(')')) {
      do {
        Token t = lex_.next();
        if (t.kind != Token::Ident) lex_.fail(t, "a size symbol name");
        for (const auto& s : g.symbols)
          if (s.name == t.text)
            IrLexer::fail_at(t.line, t.col, "size symbol '" + t.text + "' declared twice");
        lex_.expect('=');
        g.symbols.push_back({t.text, lex_.expect_int("an integer hint")});
      } while (lex_.accept(','));
      lex_.expect(')');
    }
    lex_.expect('{');
    values_.clear();
    for (;;) {
      Token t = lex_.peek();
      if (t.kind == Token::ValueName) {
        parse_node(g);
      } else if (t.kind == Token::Ident && t.text == "return") {
        lex_.next();
        if (lex_.peek().kind == Token::ValueName) {
          do g.outputs.push_back(value_ref());
          while (lex_.accept(','));
        }
        lex_.expect('}');
        return g;
      } else {
        lex_.fail(t, "a node '%NAME = ...' or 'return'");
      }
    }
  }

  void parse_node(Graph& g) {
    Token name = lex_.next();
    Node n;
    n.name = name.text;
    lex_.expect('=');
    Token kind = lex_.next();
    if (kind.kind != Token::Ident) lex_.fail(kind, "an op kind");
    if (!find_op(kind.text))
      IrLexer::fail_at(kind.line, kind.col, "unknown op kind '" + kind.text + "'");
    n.kind = kind.text;
    lex_.expect('(');
    if (!lex_.accept(')')) {
      do n.operands.push_back(value_ref());
      while (lex_.accept(','));
      lex_.expect(')');
    }
    if (lex_.accept('{')) {
      do {
        Token key = lex_.next();
        if (key.kind != Token::Ident) lex_.fail(key, "an attribute name");
        lex_.expect('=');
        Attr v = lex_.attr_value();
        if (!n.attrs.emplace(key.text, std::move(v)).second)
          IrLexer::fail_at(key.line, key.col, "attribute '" + key.text + "' given twice");
      } while (lex_.accept(','));
      lex_.expect('}');
    }
    lex_.expect(':');
    n.type = parse_type();
    if (!values_.emplace(n.name, static_cast<int>(g.nodes.size())).second)
      IrLexer::fail_at(name.line, name.col, "value %" + n.name + " defined twice");
    g.add(std::move(n));
  }

  TensorType parse_type() {
    Token d = lex_.next();
    if (d.kind != Token::Ident) lex_.fail(d, "a dtype (f32, f16, bf16, i64, bool, ...)");
    auto dtype = parse_dtype(d.text);
    if (!dtype) IrLexer::fail_at(d.line, d.col, "unknown dtype '" + d.text + "'");
    TensorType t;
    t.dtype = *dtype;
    t.shape = lex_.size_list();
    t.strides = lex_.accept_word("strides") ? lex_.size_list() : contiguous_strides(t.shape);
    if (lex_.accept_word("offset")) t.offset = lex_.size_to_eol();
    return t;
  }

  /// A %NAME operand that must already be defined in the current graph.
  int value_ref() {
    Token t = lex_.next();
    if (t.kind != Token::ValueName) lex_.fail(t, "a value '%NAME'");
    auto it = values_.find(t.text);
    if (it == values_.end()) IrLexer::fail_at(t.line, t.col, "use of undefined value %" + t.text);
    return it->second;
  }

  IrLexer lex_;
  std::unordered_map<std::string, int> values_;
};

}  // namespace

std::vector<Graph> parse_graphs(std::string_view text) {
  return GraphParser(text).parse_file();
}

Graph parse_graph(std::string_view text) {
  std::vector<Graph> gs = parse_graphs(text);
  if (gs.size() != 1)
    throw ParseError("line 1:1: expected exactly one graph, found " + std::to_string(gs.size()));
  return std::move(gs[0]);
}

}  // namespace af::graph
