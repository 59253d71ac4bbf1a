/* autofuse CPU vector library: the one header generated CPU kernels include.
 *
 * Layers (each its own file, all included from here):
 *   autofuse_cpu_avx512.h / autofuse_cpu_avx2.h / autofuse_cpu_scalar.h
 *       the ISA layer, chosen by the compiler's target macros (__AVX512F__, else __AVX2__ with
 *       __FMA__ and __F16C__, else a 1-lane scalar fallback): the float vector `af_vf`, the mask
 *       `af_vm`, AF_LANES, contiguous/partial loads and stores of f32, f16, bf16 and bool, the
 *       arithmetic, compare, select and rounding primitives, and the SLEEF transcendentals.
 *   autofuse_cpu_math.h
 *       ISA-independent transcendentals written over the ISA layer's primitives (tanh, erf):
 *       polynomials and the inline exp, where SLEEF's 1-ULP kernels cost several times more.
 *   autofuse_cpu_ops.h
 *       ISA-independent: gathers/scatters and tails through a small stack buffer, dtype casts,
 *       and one af_<kind> function per elementwise kind of the Graph IR op registry, with
 *       PyTorch's semantics (NaN propagation, sign(0) = 0, half-to-even rounding, ...).
 *   autofuse_cpu_i64.h
 *       integer values (`af_vl`, int64 lanes beside the f32 ones): integer memory, integer
 *       arithmetic, comparisons and casts, and the checked gather of a table row by an index.
 *   autofuse_cpu_f64.h
 *       f64 values (`af_vd`, doubles lane by lane beside the f32 ones): memory, every float
 *       kind of the op registry with PyTorch's double semantics, casts, horizontal combines.
 *   autofuse_cpu_cascade.h
 *       af_cascade: the pairwise sum of a reduction's partials (tiles, blocks of rows), so a
 *       long sum rounds like eager's cascade sum (error growing like log n, not n).
 *   autofuse_cpu_tiling.h
 *       the arithmetic the generated tiling functions share (tile size, block split).
 *
 *   autofuse_cpu_int.h
 *       AF_INLINE, AF_EXPORT and the int64 helpers sym::Expr::cpp prints (af_floordiv, af_mod,
 *       af_min, af_max, ...).
 * Kernels are compiled with -ffp-contract=off and without -ffast-math, so every
 * operation rounds like PyTorch's own vectorized kernels. */
#ifndef AUTOFUSE_CPU_H
#define AUTOFUSE_CPU_H

#include <stdint.h>
#include <string.h>

#include "autofuse_cpu_int.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__) && defined(__FMA__) && defined(__F16C__)
#include "autofuse_cpu_avx512.h"
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "autofuse_cpu_avx2.h"
#else
#include "autofuse_cpu_scalar.h"
#endif

#include "autofuse_cpu_math.h"
#include "autofuse_cpu_ops.h"
#include "autofuse_cpu_i64.h"
#include "autofuse_cpu_f64.h"
#include "autofuse_cpu_cascade.h"
#include "autofuse_cpu_tiling.h"

#endif /* AUTOFUSE_CPU_H */
