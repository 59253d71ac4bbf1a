#include "fusion/parser.h"

#include <sstream>
#include <string>
#include <vector>

#include "ascir/parser.h"
#include "graph/parser.h"
#include "support/error.h"

namespace af::fusion {
namespace {

/// `s` without leading and trailing blanks.
std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

/// The position of the `//` starting a line's comment (outside a quoted string), or npos.
size_t comment_at(const std::string& line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && quoted)
      ++i;
    else if (line[i] == '"')
      quoted = !quoted;
    else if (!quoted && line[i] == '/' && i + 1 < line.size() && line[i + 1] == '/')
      return i;
  }
  return std::string::npos;
}

/// Splits `list` at its top-level commas (not those inside parentheses or brackets).
std::vector<std::string> split_top(std::string_view list) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      std::string item = trim(list.substr(start, i - start));
      if (!item.empty()) out.push_back(item);
      start = i + 1;
    } else if (list[i] == '(' || list[i] == '[') {
      ++depth;
    } else if (list[i] == ')' || list[i] == ']') {
      --depth;
    }
  }
  return out;
}

class FusedParser {
 public:
  explicit FusedParser(std::string_view text) {
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
  }

  /// Every FusedGraph of the text, in order.
  std::vector<FusedGraph> parse_all() {
    std::vector<FusedGraph> out;
    for (size_t i = next(0); i < lines_.size(); i = next(i)) {
      fg_ = FusedGraph{};
      i = parse_one(i);
      out.push_back(std::move(fg_));
    }
    if (out.empty()) fail(0, "no fusedgraph");
    return out;
  }

 private:
  std::vector<std::string> lines_;
  FusedGraph fg_;

  /// The FusedGraph whose source graph starts on line `i` into fg_; returns the line after it.
  size_t parse_one(size_t i) {
    if (code(i).rfind("graph @", 0) != 0)
      fail(i, "expected the source 'graph @NAME(...) {', found '" + code(i) + "'");
    size_t end = block_end(i);
    fg_.source = graph::parse_graph(blanked(i, end + 1));
    i = next(end + 1);
    const std::string head = code(i);
    if (head != "fusedgraph @" + fg_.source.name + " {")
      fail(i, "expected 'fusedgraph @" + fg_.source.name + " {', found '" + head + "'");
    for (i = next(i + 1); i < lines_.size(); i = next(i)) {
      const std::string t = code(i);
      if (t == "}") return i + 1;
      if (t.rfind("kernel @", 0) == 0) {
        i = kernel(i);
      } else if (t.rfind("opaque ", 0) == 0) {
        opaque(i);
        ++i;
      } else if (t.rfind("rejected ", 0) == 0) {
        rejected(i);
        ++i;
      } else if (t.rfind("return", 0) == 0) {
        ++i;  // the source's outputs
      } else {
        fail(i, "expected a kernel, opaque, return or rejected line, found '" + t + "'");
      }
    }
    fail(lines_.size(), "the fusedgraph is not closed by '}'");
  }

  [[noreturn]] void fail(size_t line, const std::string& what) const {
    throw ParseError("line " + std::to_string(line + 1) + ": " + what);
  }

  /// Line `i` without its comment and blanks.
  std::string code(size_t i) const {
    if (i >= lines_.size()) fail(i, "unexpected end of the fusedgraph");
    const std::string& l = lines_[i];
    return trim(std::string_view(l).substr(0, comment_at(l)));
  }

  /// The first line at or after `i` with code on it.
  size_t next(size_t i) const {
    while (i < lines_.size() && code(i).empty()) ++i;
    return i;
  }

  /// The line closing the block that line `open` opens (braces counted outside strings).
  size_t block_end(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < lines_.size(); ++i) {
      bool quoted = false;
      const std::string c = code(i);
      for (size_t k = 0; k < c.size(); ++k) {
        if (c[k] == '\\' && quoted)
          ++k;
        else if (c[k] == '"')
          quoted = !quoted;
        else if (!quoted)
          depth += c[k] == '{' ? 1 : c[k] == '}' ? -1 : 0;
      }
      if (depth == 0) return i;
    }
    fail(open, "block not closed");
  }

  /// The text with only lines [from, to) kept (the others empty), so a nested parser's
  /// "line L" is this text's line.
  std::string blanked(size_t from, size_t to) const {
    std::string out;
    for (size_t i = 0; i < to; ++i) out += (i >= from ? lines_[i] : "") + "\n";
    return out;
  }

  /// The source's nodes named by "%a, %b".
  std::vector<int> values(const std::string& list, size_t line) const {
    std::vector<int> out;
    for (const std::string& v : split_top(list)) {
      int n = v.size() > 1 && v[0] == '%' ? fg_.source.find(v.substr(1)) : -1;
      if (n < 0) fail(line, "'" + v + "' is not a value of @" + fg_.source.name);
      out.push_back(n);
    }
    return out;
  }

  /// The text between `open` at or after `from` in `s` and its matching `close`; `from` is
  /// left after the close.
  std::string enclosed(const std::string& s, size_t& from, char open, char close,
                       size_t line) const {
    size_t b = s.find(open, from);
    if (b == std::string::npos) fail(line, std::string("expected '") + open + "' in '" + s + "'");
    int depth = 0;
    for (size_t i = b; i < s.size(); ++i) {
      depth += s[i] == open ? 1 : s[i] == close ? -1 : 0;
      if (depth == 0) {
        from = i + 1;
        return s.substr(b + 1, i - b - 1);
      }
    }
    fail(line, std::string("'") + open + "' not closed in '" + s + "'");
  }

  /// "@NAME(INS) -> (OUTS)" from `at` in header `h` into `step`; `at` is left after it.
  void signature(const std::string& h, size_t& at, FusedNode& step, size_t line) const {
    size_t name_end = h.find('(', at);
    if (h.compare(at, 1, "@") != 0 || name_end == std::string::npos)
      fail(line, "expected '@NAME(' in '" + h + "'");
    step.kind = FusedNode::Kind::Kernel;
    step.name = h.substr(at + 1, name_end - at - 1);
    step.inputs = values(enclosed(h, at, '(', ')', line), line);
    if (h.find("->", at) == std::string::npos) fail(line, "expected '->' in '" + h + "'");
    step.outputs = values(enclosed(h, at, '(', ')', line), line);
  }

  /// " axes [[z0, z1], [z1]]" from `at` of header `h`, if there, resolved against the kernel's
  /// axis names once its AscGraph is parsed.
  std::vector<std::vector<std::string>> axes_list(const std::string& h, size_t& at,
                                                  size_t line) const {
    std::vector<std::vector<std::string>> out;
    size_t a = h.find(" axes [", at);
    if (a == std::string::npos || h.find('{', at) < a) return out;
    at = a + 6;
    for (const std::string& item : split_top(enclosed(h, at, '[', ']', line))) {
      size_t b = 0;
      out.push_back(split_top(enclosed(item, b, '[', ']', line)));
    }
    return out;
  }

  /// The kernel axes of each input's dims: `names`, or where the header lists none the last
  /// axes of each input's rank (as lowering sets them and the printer leaves them out).
  void set_axes(FusedNode& step, const std::vector<std::vector<std::string>>& names,
                size_t line) const {
    if (names.empty()) {
      std::vector<int> original;
      for (const ascir::Axis& x : step.kernel.axes)
        if (x.kind == ascir::AxisKind::Original) original.push_back(x.id);
      for (int v : step.inputs) {
        const size_t rank = fg_.source.nodes[v].type.rank();
        if (rank > original.size())
          fail(line, "kernel @" + step.name + " reads %" + fg_.source.nodes[v].name + " of rank " +
                         std::to_string(rank) + " over " + std::to_string(original.size()) +
                         " axes");
        step.input_axes.emplace_back(original.end() - static_cast<std::ptrdiff_t>(rank),
                                     original.end());
      }
      return;
    }
    for (const auto& dims : names) {
      std::vector<int> ids;
      for (const std::string& n : dims) {
        int id = -1;
        for (const ascir::Axis& ax : step.kernel.axes)
          if (ax.name == n) id = ax.id;
        if (id < 0) fail(line, "kernel @" + step.name + " has no axis " + n);
        ids.push_back(id);
      }
      step.input_axes.push_back(std::move(ids));
    }
    if (names.size() != step.inputs.size())
      fail(line, "kernel @" + step.name + " lists the axes of " + std::to_string(names.size()) +
                     " inputs but reads " + std::to_string(step.inputs.size()));
  }

  /// A kernel (or concat kernel) block opened on line `i`; returns the line after it.
  size_t kernel(size_t i) {
    const std::string h = code(i);
    const size_t end = block_end(i);
    FusedNode step;
    size_t at = 7;
    signature(h, at, step, i);
    if (h.compare(at, 6, " ops [") != 0) fail(i, "expected ' ops [' in '" + h + "'");
    step.ops = values(enclosed(h, at, '[', ']', i), i);
    const auto axes = axes_list(h, at, i);
    const size_t concat = h.find(" concat dim ", at);
    if (concat == std::string::npos) {
      step.kernel = ascir::parse_asc_graph(blanked(i + 1, end));
      set_axes(step, axes, i);
      fg_.nodes.push_back(std::move(step));
      return end + 1;
    }
    size_t of = h.find(" of ", concat);
    if (of == std::string::npos) fail(i, "expected 'concat dim D of [SHAPE]' in '" + h + "'");
    step.concat_dim = std::stoi(h.substr(concat + 12, of - concat - 12));
    at = of;
    for (const std::string& e : split_top(enclosed(h, at, '[', ']', i)))
      step.concat_shape.push_back(sym::parse_expr(e));
    for (size_t s = next(i + 1); s < end; s = next(s)) {
      const std::string sh = code(s);
      if (sh.rfind("segment @", 0) != 0) fail(s, "expected a segment, found '" + sh + "'");
      const size_t send = block_end(s);
      FusedNode seg;
      size_t sat = 8;
      signature(sh, sat, seg, s);
      const auto seg_axes = axes_list(sh, sat, s);
      size_t start = sh.find(" at ", sat);
      if (start == std::string::npos || sh.back() != '{')
        fail(s, "expected 'at START {' in '" + sh + "'");
      step.segment_starts.push_back(
          sym::parse_expr(trim(sh.substr(start + 4, sh.size() - start - 5))));
      seg.kernel = ascir::parse_asc_graph(blanked(s + 1, send));
      set_axes(seg, seg_axes, s);
      step.segments.push_back(std::move(seg));
      s = send + 1;
    }
    fg_.nodes.push_back(std::move(step));
    return end + 1;
  }

  /// "opaque %NAME = ...  // REASON": the step running source node NAME.
  void opaque(size_t i) {
    const std::string& l = lines_[i];
    const std::string t = code(i);
    size_t eq = t.find(" = ");
    if (t.compare(0, 8, "opaque %") != 0 || eq == std::string::npos)
      fail(i, "expected 'opaque %NAME = ...', found '" + t + "'");
    FusedNode s;
    s.kind = FusedNode::Kind::Opaque;
    s.name = t.substr(8, eq - 8);
    s.outputs = values("%" + s.name, i);
    s.ops = s.outputs;
    s.inputs = fg_.source.nodes[s.ops[0]].operands;
    size_t c = comment_at(l);
    if (c != std::string::npos) s.reason = trim(std::string_view(l).substr(c + 2));
    fg_.nodes.push_back(std::move(s));
  }

  /// "rejected P -> C: REASON" or "rejected siblings A, B: REASON".
  void rejected(size_t i) {
    const std::string t = code(i);
    size_t colon = t.find(": ");
    if (colon == std::string::npos) fail(i, "expected 'rejected ...: REASON', found '" + t + "'");
    RejectedFusion r;
    std::string pair = t.substr(9, colon - 9);
    r.sibling = pair.rfind("siblings ", 0) == 0;
    if (r.sibling) pair = pair.substr(9);
    size_t sep = pair.find(r.sibling ? ", " : " -> ");
    if (sep == std::string::npos) fail(i, "expected a pair of steps in '" + t + "'");
    r.producer = pair.substr(0, sep);
    r.consumer = pair.substr(sep + (r.sibling ? 2 : 4));
    r.reason = t.substr(colon + 2);
    fg_.rejected.push_back(std::move(r));
  }
};

}  // namespace

std::vector<FusedGraph> parse_fused_graphs(std::string_view text) {
  return FusedParser(text).parse_all();
}

}  // namespace af::fusion
