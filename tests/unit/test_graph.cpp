// Unit tests of the Graph IR: build/print/parse round trips, attributes, the op registry,
// parse errors and every verifier rule.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/verifier.h"
#include "support/error.h"

namespace af::graph {
namespace {

using sym::Expr;
Expr S(const char* n) {
  return Expr::symbol(n);
}

Node make(std::string name, std::string kind, std::vector<int> ops, TensorType t,
          AttrMap attrs = {}) {
  Node n;
  n.name = std::move(name);
  n.kind = std::move(kind);
  n.operands = std::move(ops);
  n.type = std::move(t);
  n.attrs = std::move(attrs);
  return n;
}

/// The example of docs/ir.md, built in C++.
Graph example() {
  Graph g;
  g.symbols = {{"s0", 64}};
  Expr s0 = S("s0");
  TensorType xt = TensorType::contiguous(DType::F32, {s0, 1000});
  xt.strides = {1, s0};
  int x = g.add(make("x", "input", {}, xt, {{"index", int64_t{0}}}));
  int scale = g.add(make("scale", "input", {}, TensorType::contiguous(DType::F32, {1000}),
                         {{"index", int64_t{1}}}));
  int c = g.add(make("c", "const", {}, TensorType::contiguous(DType::F32, {}), {{"value", 2.5}}));
  TensorType rt = TensorType::contiguous(DType::F32, {s0, 1000});
  int v0 = g.add(make("0", "sigmoid", {x}, rt));
  int v1 = g.add(make("1", "broadcast", {scale}, rt));
  int v2 = g.add(make("2", "mul", {v0, v1}, rt));
  int v3 = g.add(make("3", "mul", {v2, c}, rt));
  int v4 = g.add(make("4", "permute", {x}, TensorType::contiguous(DType::F32, {1000, s0}),
                      {{"dims", std::vector<Expr>{1, 0}}}));
  int v5 = g.add(make("5", "opaque", {x, v4}, TensorType::contiguous(DType::F32, {s0, s0}),
                      {{"target", std::string("aten.mm.default")}}));
  g.outputs = {v3, v5};
  return g;
}

const char* kExampleText = R"(graph @main(s0 = 64) {
  %x = input() {index = 0} : f32[s0, 1000] strides [1, s0]
  %scale = input() {index = 1} : f32[1000]
  %c = const() {value = 2.5} : f32[]
  %0 = sigmoid(%x) : f32[s0, 1000]
  %1 = broadcast(%scale) : f32[s0, 1000]
  %2 = mul(%0, %1) : f32[s0, 1000]
  %3 = mul(%2, %c) : f32[s0, 1000]
  %4 = permute(%x) {dims = [1, 0]} : f32[1000, s0]
  %5 = opaque(%x, %4) {target = "aten.mm.default"} : f32[s0, s0]
  return %3, %5
}
)";

// ---- data structure ----

TEST(Graph, ContiguousStrides) {
  Expr s0 = S("s0"), s1 = S("s1");
  EXPECT_EQ(contiguous_strides({s0, s1, 4}), (std::vector<Expr>{4 * s1, 4, 1}));
  EXPECT_TRUE(contiguous_strides({}).empty());
  TensorType t = TensorType::contiguous(DType::F16, {s0, 3});
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.numel(), 3 * s0);
  t.strides = {1, s0};
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(TensorType::contiguous(DType::F32, {}).is_contiguous());
}

TEST(Graph, FindInputsUsersHints) {
  Graph g = example();
  EXPECT_EQ(g.find("scale"), 1);
  EXPECT_EQ(g.find("nope"), -1);
  std::swap(g.nodes[0].attrs, g.nodes[1].attrs);  // x gets index 1, scale index 0
  EXPECT_EQ(g.inputs(), (std::vector<int>{1, 0}));
  auto users = example().users();
  EXPECT_EQ(users[0], (std::vector<int>{3, 7, 8}));  // x: sigmoid, permute, opaque
  EXPECT_EQ(users[2], (std::vector<int>{6}));
  EXPECT_TRUE(users[8].empty());
  Graph sq;
  int a = sq.add(
      make("a", "input", {}, TensorType::contiguous(DType::F32, {4}), {{"index", int64_t{0}}}));
  sq.add(make("b", "mul", {a, a}, TensorType::contiguous(DType::F32, {4})));
  EXPECT_EQ(sq.users()[0], (std::vector<int>{1}));  // a user appears once
  EXPECT_EQ(g.hints(), (sym::Bindings{{"s0", 64}}));
}

// A value's id is stable: Graph::add numbers nodes in order, keeps an id it is given, and a
// later node without one gets the next after every id seen (a pass that drops or adds nodes
// leaves the others' ids alone; compiled programs' steps name values by id).
TEST(Graph, StableValueIds) {
  Graph g;
  g.add(Node{"a", "input", {}, {}, {}});
  g.add(Node{"b", "input", {}, {}, {}});
  EXPECT_EQ(g.nodes[0].id, 0);
  EXPECT_EQ(g.nodes[1].id, 1);
  Node kept{"c", "neg", {0}, {}, {}};
  kept.id = 7;
  g.add(kept);
  g.add(Node{"d", "neg", {2}, {}, {}});
  EXPECT_EQ(g.nodes[2].id, 7);
  EXPECT_EQ(g.nodes[3].id, 8);
  Graph parsed = parse_graph(R"(graph @t() {
  %x = input() {index = 0} : f32[2]
  %y = neg(%x) : f32[2]
  return %y
})");
  EXPECT_EQ(parsed.nodes[1].id, 1);
  Graph copy = parsed;  // a pass's copy keeps them
  EXPECT_EQ(copy.nodes[1].id, 1);
}

TEST(Graph, AttrAccessors) {
  Graph g = example();
  EXPECT_EQ(attr_int(g.nodes[1], "index"), 1);
  EXPECT_EQ(attr_float(g.nodes[2], "value"), 2.5);
  EXPECT_EQ(attr_float(g.nodes[1], "index"), 1.0);  // an int reads as a float
  EXPECT_EQ(attr_string(g.nodes[8], "target"), "aten.mm.default");
  EXPECT_EQ(attr_list(g.nodes[7], "dims"), (std::vector<Expr>{1, 0}));
  EXPECT_TRUE(has_attr(g.nodes[7], "dims"));
  EXPECT_FALSE(has_attr(g.nodes[7], "shape"));
  auto expect_error = [](const std::function<void()>& f, const std::string& a,
                         const std::string& b) {
    try {
      f();
      FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(a), std::string::npos) << m;
      EXPECT_NE(m.find(b), std::string::npos) << m;
    }
  };
  expect_error([&] { attr_int(g.nodes[2], "index"); }, "%c", "'index'");
  expect_error([&] { attr_int(g.nodes[2], "value"); }, "%c", "'value'");
  expect_error([&] { attr_string(g.nodes[1], "index"); }, "%scale", "'index'");
  expect_error([&] { attr_list(g.nodes[8], "target"); }, "%5", "'target'");
  expect_error([&] { attr_float(g.nodes[8], "target"); }, "%5", "'target'");
}

// ---- attributes ----

TEST(Attr, Text) {
  EXPECT_EQ(attr_str(Attr{int64_t{-3}}), "-3");
  EXPECT_EQ(attr_str(Attr{2.5}), "2.5");
  EXPECT_EQ(attr_str(Attr{3.0}), "3.0");
  EXPECT_EQ(attr_str(Attr{1e-5}), "1e-05");
  EXPECT_EQ(attr_str(Attr{0.1}), "0.1");
  EXPECT_EQ(attr_str(Attr{1e20}), "1e+20");
  EXPECT_EQ(attr_str(Attr{-0.0}), "-0.0");
  EXPECT_EQ(attr_str(Attr{HUGE_VAL}), "inf");
  EXPECT_EQ(attr_str(Attr{-HUGE_VAL}), "-inf");
  EXPECT_EQ(attr_str(Attr{std::nan("")}), "nan");
  EXPECT_EQ(attr_str(Attr{std::string("a\"b\\c")}), R"("a\"b\\c")");
  EXPECT_EQ(attr_str(Attr{std::vector<Expr>{1, S("s0")}}), "[1, s0]");
  EXPECT_EQ(attr_str(Attr{std::vector<Expr>{}}), "[]");
}

/// Parses a one-const graph whose value attribute is `a` and returns the attribute read back.
Attr round_trip_attr(const Attr& a) {
  Graph g;
  g.add(make("c", "const", {}, TensorType::contiguous(DType::F32, {}), {{"value", a}}));
  Graph back = parse_graph(print(g));
  EXPECT_EQ(print(back), print(g));
  return back.nodes[0].attrs.at("value");
}

TEST(Attr, FloatRoundTrip) {
  for (double v : {0.1, 1e-5, 2.5, 3.0, 1.0 / 3.0, 1e300, 5e-324, -123456.789, 0.0,
                   static_cast<double>(1 << 30)}) {
    Attr back = round_trip_attr(v);
    ASSERT_TRUE(std::holds_alternative<double>(back)) << v;
    EXPECT_EQ(std::get<double>(back), v);
  }
  Attr neg_zero = round_trip_attr(-0.0);
  ASSERT_TRUE(std::holds_alternative<double>(neg_zero));
  EXPECT_TRUE(std::signbit(std::get<double>(neg_zero)));
  EXPECT_TRUE(std::isnan(std::get<double>(round_trip_attr(std::nan("")))));
  EXPECT_EQ(std::get<double>(round_trip_attr(HUGE_VAL)), HUGE_VAL);
  EXPECT_EQ(std::get<double>(round_trip_attr(-HUGE_VAL)), -HUGE_VAL);
}

TEST(Attr, OtherKindsRoundTrip) {
  EXPECT_EQ(std::get<int64_t>(round_trip_attr(int64_t{-42})), -42);
  EXPECT_EQ(std::get<int64_t>(round_trip_attr(INT64_MIN)), INT64_MIN);
  std::string s = "q\"uo\\te\n\ttab \x01 end";
  EXPECT_EQ(std::get<std::string>(round_trip_attr(s)), s);
  // Parsed as a graph, the list must only name declared symbols: print/parse need not verify.
  std::vector<Expr> list{2 * S("s0") + 1, Expr::floordiv(S("s1"), 2)};
  EXPECT_EQ(std::get<std::vector<Expr>>(round_trip_attr(list)), list);
}

// ---- printing and parsing ----

TEST(Printer, ExampleText) {
  Graph g = example();
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(print(g), kExampleText);
  EXPECT_EQ(print_node(g, 3), "%0 = sigmoid(%x) : f32[s0, 1000]");
  TensorType t = TensorType::contiguous(DType::BF16, {S("s0"), 8});
  t.strides = {16, 2};
  t.offset = S("s0") + 1;
  EXPECT_EQ(print_type(t), "bf16[s0, 8] strides [16, 2] offset s0 + 1");
  EXPECT_EQ(print_type(TensorType::contiguous(DType::Bool, {})), "bool[]");
}

TEST(Parser, RoundTripIsIdentity) {
  Graph g = parse_graph(kExampleText);
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(print(g), kExampleText);
  EXPECT_EQ(print(parse_graph(print(g))), kExampleText);
  Graph built = example();
  ASSERT_EQ(g.nodes.size(), built.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(g.nodes[i].operands, built.nodes[i].operands) << i;
    EXPECT_EQ(g.nodes[i].type.strides, built.nodes[i].type.strides) << i;
  }
  EXPECT_EQ(g.outputs, built.outputs);
}

TEST(Parser, CommentsSpacesAndSymbolicSizes) {
  Graph g = parse_graph(R"(// a file comment
graph @k(s0 = 6, s1 = 9) {   // header comment
  %a = input() {index = 0} : f32[2*s0 + 1, floordiv( s1 , 2 ), (s0 + 1) * 2]
  %b = slice(%a) {dim = 0, end = 4, start = 0, step = 1} : f32[4, floordiv(s1, 2), 2*s0 + 2] strides [2*floordiv(s1, 2)*s0 + 2*floordiv(s1, 2), 2*s0 + 2, 1] offset 2 * s0
  return %b
})");
  EXPECT_EQ(g.name, "k");
  ASSERT_EQ(g.nodes.size(), 2u);
  Expr s0 = S("s0"), s1 = S("s1");
  EXPECT_EQ(g.nodes[0].type.shape,
            (std::vector<Expr>{2 * s0 + 1, Expr::floordiv(s1, 2), 2 * s0 + 2}));
  EXPECT_TRUE(g.nodes[0].type.is_contiguous());  // no strides: contiguous
  EXPECT_EQ(g.nodes[1].type.offset, 2 * s0);
  EXPECT_TRUE(g.nodes[1].type.is_contiguous());  // the strides given are the row-major ones
  EXPECT_NO_THROW(verify(g));
  std::string text = print(g);
  EXPECT_EQ(print(parse_graph(text)), text);
  EXPECT_NE(text.find(": f32[4, floordiv(s1, 2), 2*s0 + 2] offset 2*s0\n"), std::string::npos)
      << text;
}

TEST(Parser, SeveralGraphs) {
  std::string two = std::string(kExampleText) + "\ngraph @empty() {\n  return\n}\n";
  auto gs = parse_graphs(two);
  ASSERT_EQ(gs.size(), 2u);
  EXPECT_EQ(gs[1].name, "empty");
  EXPECT_TRUE(gs[1].outputs.empty());
  EXPECT_EQ(print(gs), two);
  EXPECT_TRUE(parse_graphs("// nothing here\n").empty());
  EXPECT_THROW(parse_graph(two), ParseError);
  EXPECT_THROW(parse_graph(""), ParseError);
}

/// Expects ParseError whose message contains every one of `parts`.
void expect_parse_error(const std::string& text, std::vector<std::string> parts) {
  try {
    parse_graphs(text);
    ADD_FAILURE() << "expected ParseError for:\n" << text;
  } catch (const ParseError& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\n" << text;
  }
}

TEST(Parser, Errors) {
  const std::string head = "graph @m(s0 = 4) {\n  %x = input() {index = 0} : f32[s0]\n";
  expect_parse_error(head + "  %y = frob(%x) : f32[s0]\n  return %y\n}",
                     {"line 3:8", "unknown op kind 'frob'"});
  expect_parse_error(head + "  %y = neg(%z) : f32[s0]\n  return %y\n}",
                     {"line 3:12", "undefined value %z"});
  expect_parse_error(head + "  %x = neg(%x) : f32[s0]\n  return %x\n}",
                     {"line 3:3", "%x defined twice"});
  expect_parse_error(head + "  %y = neg(%x) : f32[s0 +]\n  return %y\n}",
                     {"line 3:22", "bad size"});
  expect_parse_error(head + "  %y = neg(%x) : f32[s0\n  return %y\n}",
                     {"line 4:", "expected ',' or ']'"});
  expect_parse_error(head + "  %y = neg(%x) : q8[s0]\n  return %y\n}", {"unknown dtype 'q8'"});
  expect_parse_error(head + "  %y = neg(%x) f32[s0]\n  return %y\n}",
                     {"line 3:16", "expected ':', found 'f32'"});
  expect_parse_error(head + "  %y = neg(%x) {a = 1, a = 2} : f32[s0]\n  return %y\n}",
                     {"'a' given twice"});
  expect_parse_error(head + "  %y = neg(%x) {a = } : f32[s0]\n  return %y\n}",
                     {"expected an attribute value", "found '}'"});
  expect_parse_error(head + "  %y = neg(%x) {a = \"open} : f32[s0]\n", {"unterminated string"});
  expect_parse_error(head + "  return %x\n", {"expected '}', found end of input"});
  expect_parse_error("graph main() {}", {"line 1:7", "expected a graph name"});
  expect_parse_error("graph @m(s0 = 1, s0 = 2) {\n  return\n}", {"'s0' declared twice"});
  expect_parse_error("graph @m(s0 = x) {\n  return\n}", {"expected an integer hint"});
  expect_parse_error(head + "  %y = neg(%x) {a = 99999999999999999999} : f32[s0]\n",
                     {"out of range"});
}

// ---- op registry ----

TEST(OpRegistry, EveryDocumentedKind) {
  // clang-format off
  const char* elementwise[] = {
      "add",         "sub",         "mul",         "div",         "div_floor",  "div_trunc",
      "neg",         "abs",         "exp",         "exp2",        "log",        "log1p",
      "expm1",       "sqrt",        "rsqrt",       "reciprocal",  "sigmoid",    "tanh",
      "erf",         "sin",         "cos",         "pow",         "maximum",    "minimum",
      "clamp",       "clamp_min",   "clamp_max",   "where",       "relu",       "eq",
      "ne",          "lt",          "le",          "gt",          "ge",         "logical_and",
      "logical_or",  "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
      "bitwise_not", "sign",        "floor",       "ceil",        "round",      "trunc",
      "isnan",       "isinf",       "gelu",        "silu",        "cube",       "pow4",
      "rsquare",     "remainder",   "fmod",        "bitwise_left_shift", "bitwise_right_shift"};
  // clang-format on
  for (const char* k : elementwise) {
    const OpDef* d = find_op(k);
    ASSERT_NE(d, nullptr) << k;
    EXPECT_EQ(d->cls, OpClass::Elementwise) << k;
    ASSERT_GE(d->arity, 1) << k;
    EXPECT_GT(d->cost, 0) << k;
  }
  const char* reduce[] = {"reduce_sum",  "reduce_mean", "reduce_max", "reduce_min",
                          "reduce_prod", "reduce_any",  "reduce_all"};
  for (const char* k : reduce) {
    const OpDef* d = find_op(k);
    ASSERT_NE(d, nullptr) << k;
    EXPECT_EQ(d->cls, OpClass::Reduce) << k;
    EXPECT_EQ(d->arity, 1) << k;
    bool logical = std::string(k) == "reduce_any" || std::string(k) == "reduce_all";
    bool mean = std::string(k) == "reduce_mean";
    EXPECT_EQ(d->operand_dtypes, logical ? kBoolType
                                 : mean  ? kFloatTypes
                                         : (kFloatTypes | kIntTypes))
        << k;
  }
  EXPECT_EQ(std::size(elementwise) + std::size(reduce) + 12, all_ops().size());
  EXPECT_EQ(find_op("bitwise_left_shift")->operand_dtypes, kIntTypes);
  EXPECT_EQ(find_op("concat")->cls, OpClass::Concat);
  EXPECT_EQ(find_op("concat")->arity, -1);
  EXPECT_EQ(find_op("input")->cls, OpClass::Input);
  EXPECT_EQ(find_op("const")->cls, OpClass::Const);
  EXPECT_EQ(find_op("broadcast")->cls, OpClass::Broadcast);
  EXPECT_EQ(find_op("cast")->cls, OpClass::Cast);
  for (const char* v : {"reshape", "permute", "unsqueeze", "squeeze", "slice", "expand"})
    EXPECT_EQ(find_op(v)->cls, OpClass::View) << v;
  EXPECT_EQ(find_op("opaque")->arity, -1);
  EXPECT_EQ(find_op("frob"), nullptr);
  EXPECT_EQ(find_op("clamp")->arity, 3);
  EXPECT_EQ(find_op("where")->arity, 3);
  EXPECT_EQ(find_op("clamp_min")->arity, 2);
  EXPECT_LT(find_op("add")->cost, find_op("div")->cost);
  EXPECT_LT(find_op("div")->cost, find_op("exp")->cost);
  EXPECT_TRUE(find_op("add")->operand_dtypes & mask_of(DType::BF16));
  EXPECT_FALSE(find_op("add")->operand_dtypes & mask_of(DType::Bool));
  EXPECT_EQ(find_op("logical_and")->operand_dtypes, kBoolType);
}

/// One graph that uses every elementwise kind with the dtypes the registry asks for: it must
/// verify and round-trip, so the registry and the verifier agree.
TEST(OpRegistry, EveryElementwiseKindVerifies) {
  Graph g;
  g.symbols = {{"s0", 5}};
  std::vector<Expr> shape{S("s0"), 3};
  TensorType ft = TensorType::contiguous(DType::F16, shape);
  TensorType bt = TensorType::contiguous(DType::Bool, shape);
  int f = g.add(make("f", "input", {}, ft, {{"index", int64_t{0}}}));
  int b = g.add(make("b", "input", {}, bt, {{"index", int64_t{1}}}));
  int c = g.add(make("c", "const", {}, TensorType::contiguous(DType::F16, {}), {{"value", 0.5}}));
  TensorType it = TensorType::contiguous(DType::I8, shape);
  int n = g.add(make("n", "input", {}, it, {{"index", int64_t{2}}}));
  for (const OpDef& d : all_ops()) {
    if (d.cls != OpClass::Elementwise) continue;
    std::string k(d.name);
    bool bool_ops = !(d.operand_dtypes & kFloatTypes) && (d.operand_dtypes & kBoolType);
    bool int_ops = !(d.operand_dtypes & (kFloatTypes | kBoolType));
    std::vector<int> ops;
    for (int i = 0; i < d.arity; ++i)
      ops.push_back(k == "where" ? (i == 0 ? b : (i == 1 ? f : c))
                    : bool_ops   ? b
                    : int_ops    ? n
                                 : f);
    bool bool_result = bool_ops || k == "eq" || k == "ne" || k == "lt" || k == "le" || k == "gt" ||
                       k == "ge" || k == "isnan" || k == "isinf";
    g.outputs.push_back(g.add(make("r_" + k, k, ops, bool_result ? bt : int_ops ? it : ft)));
  }
  EXPECT_NO_THROW(verify(g));
  std::string text = print(g);
  EXPECT_EQ(print(parse_graph(text)), text);
}

// ---- verifier ----

/// A small valid graph the verifier tests break one rule at a time.
const char* kBase = R"(graph @v(s0 = 8, s1 = 3) {
  %x = input() {index = 0} : f32[s0, s1]
  %y = input() {index = 1} : f32[s1]
  %c = const() {value = 1} : f32[]
  %b = broadcast(%y) : f32[s0, s1]
  %a = add(%x, %b) : f32[s0, s1]
  %m = mul(%a, %c) : f32[s0, s1]
  %p = permute(%m) {dims = [1, 0]} : f32[s1, s0] strides [1, s1]
  %u = unsqueeze(%x) {dim = 1} : f32[s0, 1, s1]
  %q = squeeze(%u) {dim = 1} : f32[s0, s1]
  %r = reshape(%x) {shape = [s0*s1]} : f32[s0*s1]
  %e = expand(%y) {shape = [s0, s1]} : f32[s0, s1] strides [0, 1]
  %s = slice(%x) {dim = 0, end = 4, start = 2, step = 1} : f32[2, s1] offset 2*s1
  %k = cast(%m) : f16[s0, s1]
  %l = lt(%x, %c) : bool[s0, s1]
  %w = where(%l, %x, %c) : f32[s0, s1]
  %o = opaque(%p, %m) {target = "aten.mm.default"} : f32[s1, s1]
  return %m, %p, %w, %o
}
)";

/// Applies `edit` to the base graph and expects verify to throw naming `node` and `what`.
void expect_reject(const std::function<void(Graph&)>& edit, const std::string& node,
                   const std::string& what) {
  Graph g = parse_graph(kBase);
  edit(g);
  try {
    verify(g);
    ADD_FAILURE() << "verify accepted a graph that breaks: " << what << "\n" << print(g);
  } catch (const CompileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(node), std::string::npos) << "message does not name " << node << ": " << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

Node& N(Graph& g, const char* name) {
  return g.nodes.at(g.find(name));
}

TEST(Verifier, AcceptsBase) {
  Graph g = parse_graph(kBase);
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(print(g), kBase);
}

TEST(Verifier, Structure) {
  expect_reject([](Graph& g) { N(g, "m").name = "a"; }, "%a", "defined twice");
  expect_reject([](Graph& g) { N(g, "m").name = "bad name"; }, "%bad name", "bad value name");
  expect_reject([](Graph& g) { N(g, "a").operands[1] = g.find("m"); }, "%a",
                "defined after its use");
  expect_reject([](Graph& g) { N(g, "a").operands[1] = 99; }, "%a", "does not exist");
  expect_reject([](Graph& g) { N(g, "a").operands.pop_back(); }, "%a", "expects 2 operand(s)");
  expect_reject([](Graph& g) { N(g, "a").kind = "frob"; }, "%a", "unknown op kind");
  expect_reject([](Graph& g) { g.outputs.push_back(42); }, "@v", "output 4");
  expect_reject([](Graph& g) { g.symbols.push_back({"s0", 1}); }, "@v", "declared twice");
  expect_reject([](Graph& g) { g.symbols.push_back({"s.1", 1}); }, "@v", "bad size symbol name");
  expect_reject([](Graph& g) { g.name = "a b"; }, "@a b", "bad graph name");
  expect_reject([](Graph& g) { N(g, "k").attrs["x y"] = int64_t{1}; }, "%k",
                "bad attribute name 'x y'");
}

TEST(Verifier, Inputs) {
  expect_reject([](Graph& g) { N(g, "y").attrs["index"] = int64_t{0}; }, "%y",
                "input index 0 is also used by %x");
  expect_reject([](Graph& g) { N(g, "y").attrs["index"] = int64_t{2}; }, "%y",
                "input index 2 is outside 0..1");
  expect_reject([](Graph& g) { N(g, "y").attrs.clear(); }, "%y", "missing attribute 'index'");
  expect_reject([](Graph& g) { N(g, "y").attrs["index"] = 1.0; }, "%y", "'index' is a float");
}

TEST(Verifier, TypesAndShapes) {
  expect_reject([](Graph& g) { N(g, "x").type.strides.pop_back(); }, "%x", "have rank 1");
  expect_reject([](Graph& g) { N(g, "x").type.shape[0] = S("s7"); }, "%x",
                "size symbol 's7' in its shape is not declared");
  expect_reject([](Graph& g) { N(g, "s").type.offset = S("s9"); }, "%s", "'s9' in its offset");
  expect_reject([](Graph& g) { N(g, "a").operands[1] = g.find("y"); }, "%a",
                "operand 1 (%y) has shape [s1], expected the result shape [s0, s1]");
  expect_reject([](Graph& g) { N(g, "a").type.strides = {1, 1}; }, "%a", "must be dense");
  expect_reject([](Graph& g) { N(g, "a").type.strides = {2 * S("s1"), 1}; }, "%a", "must be dense");
  expect_reject([](Graph& g) { N(g, "a").type.offset = 1; }, "%a", "must start at offset 0");
  expect_reject([](Graph& g) { N(g, "c").type = TensorType::contiguous(DType::F32, {1}); }, "%c",
                "must be rank 0");
  expect_reject([](Graph& g) { N(g, "c").attrs["value"] = std::string("x"); }, "%c", "'value'");
  expect_reject(
      [](Graph& g) {
        N(g, "b").type = TensorType::contiguous(DType::F32, {S("s0"), 2});
      },
      "%b", "does not broadcast to [s0, 2]");
  expect_reject([](Graph& g) { N(g, "b").type = TensorType::contiguous(DType::F32, {}); }, "%b",
                "higher rank");
  expect_reject(
      [](Graph& g) {
        N(g, "k").type = TensorType::contiguous(DType::F16, {S("s0"), 1});
      },
      "%k", "cast changes shape");
}

TEST(Verifier, Dtypes) {
  expect_reject([](Graph& g) { N(g, "m").type.dtype = DType::F16; }, "%m",
                "expected the result dtype f16");
  expect_reject([](Graph& g) { N(g, "l").type.dtype = DType::F32; }, "%l",
                "result dtype must be bool");
  expect_reject([](Graph& g) { N(g, "w").operands[0] = g.find("x"); }, "%w",
                "operand 0 (%x) has dtype f32, expected one of bool");
  expect_reject([](Graph& g) { N(g, "w").operands[1] = g.find("l"); }, "%w",
                "operand 1 (%l) has dtype bool, expected one of u8, i8, i16, i32, i64, f16, bf16");
  expect_reject(
      [](Graph& g) {
        for (const char* n : {"x", "b", "a", "m", "y", "c"}) N(g, n).type.dtype = DType::I16;
        N(g, "a").kind = "div";  // true division: floats only
      },
      "%a", "has dtype i16");
  expect_reject([](Graph& g) { N(g, "e").type.dtype = DType::F16; }, "%e", "changes dtype");
  expect_reject(
      [](Graph& g) {
        N(g, "l").attrs["approximate"] = std::string("x");
        N(g, "l").kind = "gelu";
        N(g, "l").operands.pop_back();
        N(g, "l").type.dtype = DType::F32;  // %w, which uses %l, comes later
      },
      "%l", "approximate");
}

TEST(Verifier, Views) {
  expect_reject(
      [](Graph& g) {
        N(g, "p").attrs["dims"] = std::vector<Expr>{0, 0};
      },
      "%p", "not a permutation");
  expect_reject(
      [](Graph& g) {
        N(g, "p").type.shape = {S("s0"), S("s1")};
      },
      "%p", "result dim 0 is s0, expected s1");
  expect_reject([](Graph& g) { N(g, "u").attrs["dim"] = int64_t{3}; }, "%u", "out of range");
  expect_reject([](Graph& g) { N(g, "q").attrs["dim"] = int64_t{0}; }, "%q", "must be size 1");
  expect_reject(
      [](Graph& g) {
        N(g, "r").attrs["shape"] = std::vector<Expr>{S("s0")};
        N(g, "r").type = TensorType::contiguous(DType::F32, {S("s0")});
      },
      "%r", "changes the element count");
  expect_reject([](Graph& g) { N(g, "r").attrs["shape"] = std::vector<Expr>{4}; }, "%r",
                "differs from the result");
  expect_reject([](Graph& g) { N(g, "s").attrs["step"] = int64_t{0}; }, "%s", "step");
  expect_reject([](Graph& g) { N(g, "s").attrs.erase("end"); }, "%s", "start and end");
  expect_reject([](Graph& g) { N(g, "e").attrs["shape"] = std::vector<Expr>{1}; }, "%e",
                "differs from the result");
  expect_reject([](Graph& g) { N(g, "o").attrs.clear(); }, "%o", "'target'");
}

// Reductions: a base graph and one broken rule at a time.
const char* kReduceBase = R"(graph @r(s0 = 8) {
  %x = input() {index = 0} : f32[s0, 4, 6]
  %b = input() {index = 1} : bool[s0, 4]
  %s = reduce_sum(%x) {dims = [1, 2], keepdim = 1} : f32[s0, 1, 1]
  %m = reduce_mean(%x) {dims = [0], keepdim = 0} : f32[4, 6]
  %t = reduce_max(%x) {dims = [0, 1, 2], keepdim = 0} : f32[]
  %a = reduce_any(%b) {dims = [1], keepdim = 0} : bool[s0]
  return %s, %m, %t, %a
}
)";

void expect_reduce_reject(const std::function<void(Graph&)>& edit, const std::string& node,
                          const std::string& what) {
  Graph g = parse_graph(kReduceBase);
  edit(g);
  try {
    verify(g);
    ADD_FAILURE() << "verify accepted a graph that breaks: " << what << "\n" << print(g);
  } catch (const CompileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("node " + node), std::string::npos)
        << "message does not name " << node << ": " << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

TEST(Verifier, Reduce) {
  Graph g = parse_graph(kReduceBase);
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(print(g), kReduceBase);
  EXPECT_EQ(reduce_dims(N(g, "s")), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(reduce_keepdim(N(g, "s")));
  EXPECT_FALSE(reduce_keepdim(N(g, "m")));
  auto dims = [](std::vector<Expr> d) { return [d](Graph& g) { N(g, "s").attrs["dims"] = d; }; };
  expect_reduce_reject(dims({2, 1}), "%s", "dims [2, 1] must be sorted and unique");
  expect_reduce_reject(dims({1, 1}), "%s", "must be sorted and unique");
  expect_reduce_reject(dims({1, 3}), "%s",
                       "dim 3 is out of range [0, 3) for operand %x of shape [s0, 4, 6]");
  expect_reduce_reject(dims({}), "%s", "must name at least one dim");
  expect_reduce_reject(dims({S("s0")}), "%s", "dims [s0] must be integers");
  expect_reduce_reject([](Graph& g) { N(g, "s").attrs.erase("dims"); }, "%s",
                       "missing attribute 'dims'");
  expect_reduce_reject([](Graph& g) { N(g, "s").attrs["keepdim"] = int64_t{2}; }, "%s",
                       "keepdim = 2, expected 0 or 1");
  expect_reduce_reject([](Graph& g) { N(g, "m").attrs.erase("keepdim"); }, "%m",
                       "missing attribute 'keepdim'");
  expect_reduce_reject(
      [](Graph& g) {
        N(g, "s").type = TensorType::contiguous(DType::F32, {S("s0"), 1});
      },
      "%s",
      "result shape [s0, 1] is not [s0, 1, 1] (operand %x of shape [s0, 4, 6] reduced over dims "
      "[1, 2], keepdim = 1)");
  expect_reduce_reject([](Graph& g) { N(g, "m").attrs["keepdim"] = int64_t{1}; }, "%m",
                       "is not [1, 4, 6]");
  expect_reduce_reject([](Graph& g) { N(g, "s").type.dtype = DType::F16; }, "%s",
                       "changes dtype f32 to f16");
  expect_reduce_reject([](Graph& g) { N(g, "a").kind = "reduce_sum"; }, "%a",
                       "operand 0 (%b) has dtype bool, expected one of u8, i8, i16, i32, i64, f16");
  expect_reduce_reject([](Graph& g) { N(g, "t").kind = "reduce_all"; }, "%t",
                       "operand 0 (%x) has dtype f32, expected one of bool");
  expect_reduce_reject([](Graph& g) { N(g, "m").type.strides = {1, 1}; }, "%m", "must be dense");
  expect_reduce_reject([](Graph& g) { N(g, "m").operands.push_back(0); }, "%m",
                       "expects 1 operand(s)");
}

}  // namespace
}  // namespace af::graph
