// codegen::canonical_code: what the CPU emitter's shared code and the JIT's kernel index compare.
#include <gtest/gtest.h>

#include "codegen/canonical_code.h"

namespace af::codegen {
namespace {

TEST(CanonicalCode, KernelsThatDifferOnlyInTheirNamesAreEqual) {
  const std::string k3 =
      "struct k3_TilingData { int64_t n; };  // %add of g0\n"
      "AF_EXPORT void k3_kernel(const void* td) { static_assert(true, \"k3\"); }\n";
  const std::string k7 =
      "struct k7_TilingData { int64_t n; };  // %mul_2 of g4\n"
      "AF_EXPORT void k7_kernel(const void* td) { static_assert(true, \"k7\"); }\n";
  EXPECT_EQ(canonical_code(k3, {"k3"}), canonical_code(k7, {"k7"}));
  EXPECT_EQ(canonical_code(k3, {"k3"}),
            "struct @0_TilingData { int64_t n; };  \n"
            "AF_EXPORT void @0_kernel(const void* td) { static_assert(true, \"@0\"); }\n");
}

TEST(CanonicalCode, OnlyWholeNamesAreTakenOut) {
  // k1 is not k10's prefix, nor a part of ak1; a '//' inside a string literal is not a comment
  const std::string src = "k1_kernel(); k10_kernel(); ak1 = 1; s = \"a//b\"; // note\n";
  EXPECT_EQ(canonical_code(src, {"k1"}), "@0_kernel(); k10_kernel(); ak1 = 1; s = \"a//b\"; \n");
}

TEST(CanonicalCode, EachNameHasItsOwnPlaceholder) {
  // a concat kernel and its segment: swapping which is which changes the code
  const std::string a = "k5_kernel(); k5_s0_kernel();";
  const std::string b = "k5_s0_kernel(); k5_kernel();";
  EXPECT_NE(canonical_code(a, {"k5_s0", "k5"}), canonical_code(b, {"k5_s0", "k5"}));
  EXPECT_EQ(canonical_code(a, {"k5_s0", "k5"}), "@1_kernel(); @0_kernel();");
}

}  // namespace
}  // namespace af::codegen
