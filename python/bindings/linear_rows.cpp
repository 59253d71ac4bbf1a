// Bindings of runtime/linear_rows.h: a linear layer of a few rows on a plain weight, called by
// the executor's linear steps (packed_linear.py) with tensors' data pointers.
#include "runtime/linear_rows.h"

#include <nanobind/nanobind.h>

#include <cstdint>

namespace nb = nanobind;

namespace {

af::runtime::LinearRowsType rows_type(bool bf16) {
  return bf16 ? af::runtime::LinearRowsType::BF16 : af::runtime::LinearRowsType::F32;
}

af::runtime::WeightLayout layout(bool kn) {
  return kn ? af::runtime::WeightLayout::KN : af::runtime::WeightLayout::NK;
}

}  // namespace

void bind_linear_rows(nb::module_& m) {
  m.attr("LINEAR_ROWS_MOST_ROWS") = af::runtime::kLinearRowsMostRows;
  m.def(
      "linear_rows_supported",
      [](bool bf16) { return af::runtime::linear_rows_supported(rows_type(bf16)); },
      nb::arg("bf16"), "Whether this CPU runs linear_rows for bf16 (else f32).");
  m.def(
      "linear_rows_pays",
      [](bool bf16, bool kn, int64_t rows, int64_t k) {
        return af::runtime::linear_rows_pays(rows_type(bf16), layout(kn), rows, k);
      },
      nb::arg("bf16"), nb::arg("kn"), nb::arg("rows"), nb::arg("k"),
      "Whether linear_rows beats oneDNN's linear on the plain weight at these sizes.");
  m.def(
      "linear_rows",
      [](bool bf16, bool kn, uintptr_t x, int64_t ldx, uintptr_t w, int64_t ldw, uintptr_t b, uintptr_t y,
         int64_t rows, int64_t n, int64_t k, int nthreads) {
        nb::gil_scoped_release release;
        af::runtime::linear_rows(rows_type(bf16), layout(kn), reinterpret_cast<const void*>(x), ldx,
                                 reinterpret_cast<const void*>(w), ldw,
                                 reinterpret_cast<const void*>(b), reinterpret_cast<void*>(y), rows,
                                 n, k, nthreads);
      },
      nb::arg("bf16"), nb::arg("kn"), nb::arg("x"), nb::arg("ldx"), nb::arg("w"), nb::arg("ldw"), nb::arg("b"),
      nb::arg("y"), nb::arg("rows"), nb::arg("n"), nb::arg("k"), nb::arg("nthreads"),
      "y[rows, n] = x[rows, k] W[n, k]^T (kn: x W[k, n]) (+ b; 0: none) on data pointers; x and "
      "W rows ldx and ldw elements apart, y contiguous (runtime/linear_rows.h).");
}
