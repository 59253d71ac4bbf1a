// Recursive-descent parser for the AscIR text format.
#include "ascir/parser.h"

#include <cctype>
#include <cstdlib>
#include <map>

#include "graph/attr_parse.h"
#include "support/error.h"

namespace af::ascir {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The kind named by a derived-axis suffix word, or nullopt.
std::optional<AxisKind> derived_kind(std::string_view w) {
  for (AxisKind k : {AxisKind::Merged, AxisKind::TileOuter, AxisKind::TileInner,
                     AxisKind::BlockOuter, AxisKind::BlockInner})
    if (axis_kind_name(k) == w) return k;
  return std::nullopt;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(blank_comments(text)) {}

  std::vector<AscGraph> parse_all() {
    std::vector<AscGraph> graphs;
    for (;;) {
      ws();
      if (pos_ >= text_.size()) return graphs;
      graphs.push_back(parse_graph());
    }
  }

 private:
  // An operand named before it is resolved (nodes may be named after their users).
  struct PendingInput {
    int node;
    std::string name;
    size_t pos;
  };

  [[noreturn]] void fail_at(size_t pos, const std::string& what) const {
    throw ParseError("line " + line_col(text_, pos) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  std::string found() const {
    if (pos_ >= text_.size()) return "end of text";
    size_t end = pos_;
    while (end < text_.size() && is_name_char(text_[end])) ++end;
    if (end == pos_) ++end;
    return "'" + text_.substr(pos_, end - pos_) + "'";
  }
  void ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void hspace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool peek(char c) {
    ws();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c, std::string_view context) {
    if (!eat(c))
      fail("expected '" + std::string(1, c) + "' " + std::string(context) + ", found " + found());
  }
  // Consumes `kw` when it is the next whole word.
  bool keyword(std::string_view kw) {
    ws();
    if (text_.compare(pos_, kw.size(), kw) != 0) return false;
    size_t end = pos_ + kw.size();
    if (end < text_.size() && is_name_char(text_[end])) return false;
    pos_ = end;
    return true;
  }
  void expect_keyword(std::string_view kw, std::string_view context) {
    if (!keyword(kw))
      fail("expected '" + std::string(kw) + "' " + std::string(context) + ", found " + found());
  }
  std::string name(std::string_view what) {
    ws();
    size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    if (pos_ == start) fail("expected " + std::string(what) + ", found " + found());
    return text_.substr(start, pos_ - start);
  }
  int64_t integer(std::string_view what) {
    ws();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == digits || (pos_ < text_.size() && is_name_char(text_[pos_]))) {
      pos_ = start;
      fail("expected " + std::string(what) + " (an integer), found " + found());
    }
    return std::strtoll(text_.c_str() + start, nullptr, 10);
  }
  // The rest of the current line (from pos_), consumed; returns its start and text.
  std::pair<size_t, std::string_view> rest_of_line() {
    hspace();
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    return {start, std::string_view(text_).substr(start, pos_ - start)};
  }
  sym::Expr expr_at(size_t pos, std::string_view s) {
    s = trim(s);
    if (s.empty()) fail_at(pos, "expected a size expression");
    try {
      return sym::parse_expr(s);
    } catch (const ParseError& e) {
      fail_at(pos, e.what());
    }
  }
  int axis_id(const std::string& n, size_t pos) {
    auto it = axis_by_name_.find(n);
    if (it == axis_by_name_.end()) fail_at(pos, "unknown axis '" + n + "'");
    return it->second;
  }
  int axis_ref(std::string_view what) {
    ws();
    size_t at = pos_;
    return axis_id(name(what), at);
  }
  std::vector<int> axis_list(std::string_view context) {
    expect('[', context);
    std::vector<int> ids;
    if (eat(']')) return ids;
    do ids.push_back(axis_ref("an axis name"));
    while (eat(','));
    expect(']', "closing the axis list");
    return ids;
  }

  AscGraph parse_graph() {
    g_ = AscGraph();
    axis_by_name_.clear();
    node_by_name_.clear();
    pending_.clear();
    expect_keyword("ascgraph", "at the start of a graph");
    expect('@', "before the graph name");
    g_.name = name("a graph name");
    expect('{', "opening the graph body");
    for (;;) {
      ws();
      if (pos_ >= text_.size()) fail("missing '}' closing ascgraph @" + g_.name);
      if (eat('}')) break;
      if (keyword("axis"))
        parse_axis();
      else if (peek('%'))
        parse_node();
      else if (keyword("schedule"))
        parse_schedule();
      else
        fail("expected 'axis', a %node, 'schedule' or '}', found " + found());
    }
    for (const PendingInput& p : pending_) {
      auto it = node_by_name_.find(p.name);
      if (it == node_by_name_.end()) fail_at(p.pos, "unknown value %" + p.name);
      g_.nodes[p.node].inputs.push_back(it->second);
    }
    return std::move(g_);
  }

  void parse_axis() {
    ws();
    size_t at = pos_;
    std::string n = name("an axis name");
    if (axis_by_name_.count(n)) fail_at(at, "axis '" + n + "' declared twice");
    expect(':', "after the axis name");
    std::string_view line = trim(rest_of_line().second);
    AxisKind kind = AxisKind::Original;
    std::vector<int> from;
    std::string_view size_text = line;
    if (!line.empty() && line.back() == ')') {
      // A derived axis ends in KIND(A, B); find the '(' matching the last ')'.
      int depth = 0;
      size_t open = line.size() - 1;
      for (size_t i = line.size(); i-- > 0;) {
        if (line[i] == ')') ++depth;
        if (line[i] == '(' && --depth == 0) {
          open = i;
          break;
        }
      }
      size_t word = open;
      while (word > 0 && is_name_char(line[word - 1])) --word;
      auto k = derived_kind(line.substr(word, open - word));
      if (depth == 0 && k &&
          (word == 0 || std::isspace(static_cast<unsigned char>(line[word - 1])))) {
        kind = *k;
        size_text = line.substr(0, word);
        std::string_view args = line.substr(open + 1, line.size() - open - 2);
        size_t arg_pos = static_cast<size_t>(line.data() - text_.data()) + open + 1;
        while (true) {
          size_t comma = args.find(',');
          std::string_view a = args.substr(0, comma);
          size_t lead = 0;
          while (lead < a.size() && std::isspace(static_cast<unsigned char>(a[lead]))) ++lead;
          std::string an(trim(a));
          if (an.empty())
            fail_at(arg_pos + lead,
                    "expected an axis name in " + std::string(axis_kind_name(kind)) + "(...)");
          from.push_back(axis_id(an, arg_pos + lead));
          if (comma == std::string_view::npos) break;
          args.remove_prefix(comma + 1);
          arg_pos += comma + 1;
        }
      }
    }
    sym::Expr size = expr_at(static_cast<size_t>(size_text.data() - text_.data()), size_text);
    axis_by_name_[n] = g_.add_axis(n, size, kind, std::move(from));
  }

  void parse_node() {
    expect('%', "before a node name");
    size_t at = pos_;
    AscNode n;
    n.name = name("a node name");
    if (node_by_name_.count(n.name)) fail_at(at, "value %" + n.name + " defined twice");
    expect('=', "after %" + n.name);
    n.op = name("an op name");
    int index = static_cast<int>(g_.nodes.size());
    expect('(', "after the op name");
    if (!eat(')')) {
      do {
        expect('%', "before an operand name");
        size_t op_at = pos_;
        pending_.push_back({index, name("an operand name"), op_at});
      } while (eat(','));
      expect(')', "closing the operand list");
    }
    if (eat('{')) {
      if (!eat('}')) {
        do {
          ws();
          size_t key_at = pos_;
          std::string key = name("an attribute name");
          expect('=', "after attribute '" + key + "'");
          auto [value, end] = parse_attr_value(text_, pos_);
          pos_ = end;
          if (!n.attrs.emplace(key, std::move(value)).second)
            fail_at(key_at, "attribute '" + key + "' given twice");
        } while (eat(','));
        expect('}', "closing the attributes");
      }
    }
    expect_keyword("sched", "before the loop axes of %" + n.name);
    n.sched_axes = axis_list("starting the sched axes");
    expect(':', "before the tensor type of %" + n.name);
    ws();
    size_t dt_at = pos_;
    std::string dt = name("a dtype");
    auto dtype = parse_dtype(dt);
    if (!dtype) fail_at(dt_at, "unknown dtype '" + dt + "'");
    n.out.dtype = *dtype;
    n.out.axes = axis_list("starting the tensor axes");
    expect_keyword("repeats", "in the tensor type of %" + n.name);
    auto [repeats, r_end] = parse_expr_list(text_, pos_);
    pos_ = r_end;
    n.out.repeats = std::move(repeats);
    expect_keyword("strides", "in the tensor type of %" + n.name);
    auto [strides, s_end] = parse_expr_list(text_, pos_);
    pos_ = s_end;
    n.out.strides = std::move(strides);
    hspace();
    if (text_.compare(pos_, 6, "offset") == 0 && keyword("offset")) {
      auto [start, line] = rest_of_line();
      n.out.offset = expr_at(start, line);
    }
    std::string node_name = n.name;
    node_by_name_[node_name] = g_.add_node(std::move(n));
  }

  void parse_schedule() {
    if (g_.schedule) fail("second schedule block in ascgraph @" + g_.name);
    ScheduleInfo s;
    ws();
    auto [family, end] = parse_string_literal(text_, pos_);
    std::optional<ScheduleFamily> f = schedule_family_named(family);
    if (!f) fail("unknown schedule family \"" + family + "\"");
    pos_ = end;
    s.family = *f;
    expect_keyword("key", "after the schedule name");
    s.tiling_key = static_cast<int>(integer("a tiling key"));
    expect('{', "opening the schedule block");
    while (!eat('}')) {
      if (pos_ >= text_.size()) fail("missing '}' closing the schedule block");
      if (keyword("cases")) {
        expect('[', "opening the TilingCase list");
        while (!eat(']')) {
          if (!s.tiling_cases.empty()) expect(',', "between TilingCase names");
          ws();
          auto [case_name, case_end] = parse_string_literal(text_, pos_);
          std::optional<TilingCase> c = tiling_case_named(case_name);
          if (!c) fail("unknown TilingCase \"" + case_name + "\"");
          pos_ = case_end;
          s.tiling_cases.push_back(*c);
        }
      } else if (keyword("block_axis")) {
        s.block_axis = axis_ref("an axis name");
      } else if (keyword("vectorized_axis")) {
        s.vectorized_axis = axis_ref("an axis name");
      } else if (keyword("ub_bytes")) {
        s.ub_bytes = integer("ub_bytes");
      } else if (keyword("bytes_per_element")) {
        s.bytes_per_element = integer("bytes_per_element");
      } else if (keyword("param")) {
        TilingParam p;
        p.name = name("a parameter name");
        expect('=', "after param " + p.name);
        std::string role = name("a parameter role (tile or block)");
        std::optional<ParamRole> r = param_role_named(role);
        if (!r) fail("param " + p.name + ": role '" + role + "' is neither tile nor block");
        p.role = *r;
        expect('(', "after the parameter role");
        p.axis = axis_ref("an axis name");
        expect(')', "closing the parameter axis");
        expect_keyword("align", "in param " + p.name);
        p.align = integer("an alignment");
        s.params.push_back(std::move(p));
      } else {
        fail(
            "expected cases, block_axis, vectorized_axis, ub_bytes, bytes_per_element, param or "
            "'}', "
            "found " +
            found());
      }
    }
    g_.schedule = std::move(s);
  }

  std::string text_;
  size_t pos_ = 0;
  AscGraph g_;
  std::map<std::string, int, std::less<>> axis_by_name_;
  std::map<std::string, int, std::less<>> node_by_name_;
  std::vector<PendingInput> pending_;
};

}  // namespace

std::vector<AscGraph> parse_asc_graphs(std::string_view text) {
  return Parser(text).parse_all();
}

AscGraph parse_asc_graph(std::string_view text) {
  std::vector<AscGraph> graphs = parse_asc_graphs(text);
  if (graphs.size() != 1)
    throw ParseError("line 1:1: expected exactly one ascgraph, found " +
                     std::to_string(graphs.size()));
  return std::move(graphs[0]);
}

}  // namespace af::ascir
