// aten/op_table.h: the plans and reasons of the ATen op table, and torch's type promotion.
#include <gtest/gtest.h>

#include "aten/op_table.h"
#include "aten/promotion.h"

namespace af::aten {
namespace {

Arg tensor(const std::string& name, const std::string& dtype, std::vector<std::string> sizes) {
  Arg a;
  a.kind = ArgKind::Tensor;
  a.text = a.repr = name;
  a.dtype = dtype;
  a.sizes = std::move(sizes);
  a.device = "cpu";
  return a;
}

Arg integer(int64_t v) {
  Arg a;
  a.kind = ArgKind::Int;
  a.i = v;
  a.repr = std::to_string(v);
  return a;
}

Arg number(double v, const std::string& repr) {
  Arg a;
  a.kind = ArgKind::Float;
  a.f = v;
  a.repr = repr;
  return a;
}

Arg object(const std::string& str, const std::string& repr) {
  Arg a;
  a.kind = ArgKind::Object;
  a.text = str;
  a.repr = repr;
  return a;
}

Arg list(std::vector<Arg> items) {
  Arg a;
  a.kind = ArgKind::List;
  a.repr = "[";
  for (size_t i = 0; i < items.size(); ++i) a.repr += (i ? ", " : "") + items[i].repr;
  a.repr += "]";
  a.items = std::move(items);
  return a;
}

Call call(std::map<std::string, Arg, std::less<>> args, const std::string& dtype,
          std::vector<std::string> sizes) {
  return Call{std::move(args), {dtype, std::move(sizes)}, "float32"};
}

const Plan& plan(const PlanOrReason& r) {
  EXPECT_TRUE(std::holds_alternative<Plan>(r)) << std::get<std::string>(r);
  return std::get<Plan>(r);
}

std::string reason(const PlanOrReason& r) {
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "(a plan)";
}

TEST(AtenTable, FamiliesOfOverloads) {
  EXPECT_EQ(family_of("aten.add.Tensor"), Family::Elementwise);
  EXPECT_EQ(family_of("prims.convert_element_type.default"), Family::Elementwise);
  EXPECT_EQ(family_of("aten.__lshift__.Scalar"), Family::Elementwise);
  EXPECT_EQ(family_of("aten.sum.dim_IntList"), Family::Reduce);
  EXPECT_EQ(family_of("aten.max.dim"), Family::ValuesOnly);
  EXPECT_EQ(family_of("aten.cat.default"), Family::Concat);
  EXPECT_EQ(family_of("aten.slice.Tensor"), Family::View);
  EXPECT_EQ(family_of("aten.mm.default"), Family::None);
}

TEST(AtenTable, BinaryOpsReadBothOperandsAsTheResultDtype) {
  const Plan& p = plan(plan_call("aten.add.Tensor", call({{"self", tensor("x", "bfloat16", {"4"})},
                                                          {"other", number(0.5, "0.5")},
                                                          {"alpha", integer(1)}},
                                                         "bfloat16", {"4"})));
  EXPECT_EQ(p.kind, "add");
  ASSERT_EQ(p.operands.size(), 2u);
  EXPECT_EQ(p.operands[1].arg, "other");
  EXPECT_EQ(p.operands[1].dtype, "bfloat16");
  EXPECT_EQ(reason(plan_call("aten.add.Tensor", call({{"self", tensor("x", "float32", {"4"})},
                                                      {"other", tensor("y", "float32", {"4"})},
                                                      {"alpha", number(2.0, "2.0")}},
                                                     "float32", {"4"}))),
            "alpha=2.0");
}

TEST(AtenTable, ComparisonsReadOperandsInTheirPromotedDtype) {
  // an int tensor against a float scalar compares in the default float dtype
  const Plan& p = plan(plan_call(
      "aten.lt.Scalar",
      call({{"self", tensor("x", "int32", {"4"})}, {"other", number(1.5, "1.5")}}, "bool", {"4"})));
  EXPECT_EQ(p.operands[0].dtype, "float32");
  // a rank-0 f64 tensor does not promote a rank-1 f32 one
  const Plan& q = plan(plan_call("aten.eq.Tensor", call({{"self", tensor("x", "float32", {"4"})},
                                                         {"other", tensor("y", "float64", {})}},
                                                        "bool", {"4"})));
  EXPECT_EQ(q.operands[1].dtype, "float32");
}

TEST(AtenTable, TypePromotionFollowsTorch) {
  const Arg u8 = tensor("a", "uint8", {"2"});
  const Arg i8 = tensor("b", "int8", {"2"});
  const Arg f16 = tensor("c", "float16", {"2"});
  const Arg bf16 = tensor("d", "bfloat16", {"2"});
  const Arg f64_0d = tensor("e", "float64", {});
  const Arg two = integer(2);
  EXPECT_EQ(promoted_dtype({&u8, &i8}, "float32"), "int16");
  EXPECT_EQ(promoted_dtype({&f16, &bf16}, "float32"), "float32");
  EXPECT_EQ(promoted_dtype({&u8, &f64_0d}, "float32"), "float64");  // a higher category wins
  EXPECT_EQ(promoted_dtype({&u8, &two}, "float32"), "uint8");
  const Arg half = number(0.5, "0.5");
  EXPECT_EQ(promoted_dtype({&u8, &half}, "float64"), "float64");  // the default dtype
}

TEST(AtenTable, ReductionsNormaliseTheirDims) {
  const Plan& p = plan(
      plan_call("aten.sum.dim_IntList", call({{"self", tensor("x", "float32", {"2", "3", "4"})},
                                              {"dim", list({integer(-1), integer(0)})}},
                                             "float32", {"3"})));
  EXPECT_EQ(std::get<std::vector<int64_t>>(p.attrs.at("dims")), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(std::get<int64_t>(p.attrs.at("keepdim")), 0);
  // the range is checked before the repetition, as the reasons quote the dims given
  EXPECT_EQ(reason(plan_call("aten.sum.dim_IntList",
                             call({{"self", tensor("x", "float32", {"2", "3"})},
                                   {"dim", list({integer(0), integer(0), integer(9)})}},
                                  "float32", {}))),
            "reduction dims [0, 0, 9] out of range for rank 2");
  EXPECT_EQ(
      reason(plan_call("aten.prod.default",
                       call({{"self", tensor("x", "bfloat16", {"8"})}}, "bfloat16", {}))),
      "reduce_prod on torch.bfloat16 (eager accumulates it in torch.bfloat16, kernels in f32)");
  // any/all read bool, and an empty dim list reduces nothing
  EXPECT_EQ(plan(plan_call("aten.any.default",
                           call({{"self", tensor("x", "float32", {"8"})}}, "bool", {})))
                .operands[0]
                .dtype,
            "bool");
  EXPECT_EQ(reason(plan_call(
                "aten.any.dims",
                call({{"self", tensor("x", "float32", {"8"})}, {"dim", list({})}}, "bool", {"8"}))),
            "reduction over no dims");
}

TEST(AtenTable, ConcatLeavesOutEmptyInputs) {
  const Plan& p = plan(plan_call(
      "aten.cat.default",
      call({{"tensors",
             list({tensor("e", "float32", {"0"}), tensor("a", "float32", {"2", "3"}),
                   tensor("z", "float32", {"2", "0"}), tensor("b", "float32", {"2", "s0"})})},
            {"dim", integer(-1)}},
           "float32", {"2", "s0 + 3"})));
  ASSERT_EQ(p.operands.size(), 2u);
  EXPECT_EQ(p.operands[0].item, 1);
  EXPECT_EQ(p.operands[1].item, 3);
  EXPECT_EQ(std::get<int64_t>(p.attrs.at("dim")), 1);
}

TEST(AtenTable, CopiesChangeOnlyTheDtype) {
  const Arg x = tensor("x", "float32", {"4"});
  EXPECT_EQ(
      plan(plan_call("aten._to_copy.default",
                     call({{"self", x}, {"dtype", object("torch.bfloat16", "torch.bfloat16")}},
                          "bfloat16", {"4"})))
          .kind,
      "cast");
  EXPECT_EQ(reason(plan_call("aten._to_copy.default",
                             call({{"self", x}, {"device", object("meta", "device(type='meta')")}},
                                  "float32", {"4"}))),
            "device change to meta");
  EXPECT_EQ(
      reason(plan_call("aten.div.Tensor_mode",
                       call({{"self", x}, {"other", x}, {"rounding_mode", object("up", "'up'")}},
                            "float32", {"4"}))),
      "rounding_mode='up'");
}

TEST(AtenTable, ViewsTakeTheirAttributesFromArgumentsAndSizes) {
  const Arg x = tensor("x", "float32", {"2", "1", "s0"});
  const Plan& t = plan(plan_call("aten.transpose.int",
                                 call({{"self", x}, {"dim0", integer(0)}, {"dim1", integer(-1)}},
                                      "float32", {"s0", "1", "2"})));
  EXPECT_EQ(std::get<std::vector<int64_t>>(t.attrs.at("dims")), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(plan(plan_call("aten.squeeze.dim",
                           call({{"self", x}, {"dim", integer(1)}}, "float32", {"2", "s0"})))
                .kind,
            "squeeze");
  EXPECT_EQ(reason(plan_call("aten.squeeze.dim", call({{"self", x}, {"dim", integer(0)}}, "float32",
                                                      {"2", "1", "s0"}))),
            "view not expressible as a Graph IR view");  // a no-op squeeze is an alias
  // a slice over a symbolic size stays ATen; over a plain one its bounds are clamped
  EXPECT_EQ(reason(plan_call("aten.slice.Tensor",
                             call({{"self", x}, {"dim", integer(2)}, {"start", integer(1)}},
                                  "float32", {"2", "1", "s0 - 1"}))),
            "view not expressible as a Graph IR view");
  const Plan& s = plan(plan_call("aten.slice.Tensor", call({{"self", x},
                                                            {"dim", integer(0)},
                                                            {"start", integer(-1)},
                                                            {"end", integer(99)},
                                                            {"step", integer(1)}},
                                                           "float32", {"1", "1", "s0"})));
  EXPECT_EQ(std::get<int64_t>(s.attrs.at("start")), 1);
  EXPECT_EQ(std::get<int64_t>(s.attrs.at("end")), 2);
  EXPECT_TRUE(plan(plan_call("aten.view.default", call({{"self", x}}, "float32", {"2", "s0"})))
                  .result_shape);
  // a transpose of a rank-0 tensor names no dims
  EXPECT_EQ(
      reason(plan_call(
          "aten.transpose.int",
          call({{"self", tensor("y", "float32", {})}, {"dim0", integer(0)}, {"dim1", integer(-1)}},
               "float32", {}))),
      "view not expressible as a Graph IR view");
}

}  // namespace
}  // namespace af::aten
