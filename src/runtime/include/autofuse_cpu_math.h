/* Transcendental functions of autofuse_cpu.h written (or mended) once over the ISA layer's
 * primitives (af_fma_, af_exp, af_div, af_select_, the sign-bit operations), so the AVX-512, AVX2
 * and scalar layers share one definition and no call leaves the kernel's loop body.
 *
 * Why not SLEEF here: SLEEF 3.5's 1.0-ULP tanhf/erff evaluate in double-float arithmetic and
 * cost 30-55 ns per 16-lane vector (2.0 and 2.8 ns per element on one core), 3-5x eager's
 * tanh/erf. These take 0.3-0.5 ns per element, within 2 ULP of the exact value everywhere
 * (the unit tests sweep every float of the interesting ranges against double precision).
 *
 * The polynomial coefficients are our own least-squares fits (Lawson-weighted toward minimax
 * error) on Chebyshev nodes against 40-digit references, rounded to f32.
 * Included by autofuse_cpu.h only, after the ISA layer. */
#ifndef AUTOFUSE_CPU_MATH_H
#define AUTOFUSE_CPU_MATH_H

/* c[0] + u (c[1] + u (c[2] + ...)): Horner's rule with one rounding per step. */
template <int N>
AF_INLINE af_vf af_horner_(af_vf u, const float (&c)[N]) {
  af_vf r = af_splat(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) r = af_fma_(r, u, af_splat(c[i]));
  return r;
}

/* tanh, odd, evaluated on |x| and given x's sign back:
 *   |x| < 0.5625: |x| + |x|^3 P(x^2), P of degree 4 (|relative error of P| < 6e-8; the term is at
 *                 most 10% of the result, so the sum rounds like x + exact);
 *   otherwise:    1 - 2 / (exp(2|x|) + 1), which is >= 0.51 there (no cancellation) and
 *                 becomes exactly 1 once exp overflows; NaN stays NaN. */
AF_INLINE af_vf af_tanh(af_vf x) {
  static const float kP[] = {-0x1.555554p-2f, 0x1.110fb4p-3f, -0x1.b99036p-5f, 0x1.5c6162p-6f,
                             -0x1.abab8ap-8f};
  const af_vf sign = af_bits_and_(af_splat(-0.0f), x);
  const af_vf a = af_bits_xor_(sign, x);
  const af_vf s = af_mul(x, x);
  const af_vf small = af_fma_(af_mul(a, s), af_horner_(s, kP), a);
  const af_vf one = af_splat(1.0f);
  const af_vf e = af_exp(af_add(a, a));
  const af_vf large = af_sub(one, af_div(af_splat(2.0f), af_add(e, one)));
  return af_bits_or_(sign, af_select_(af_lt(a, af_splat(0.5625f)), small, large));
}

/* erf, odd, evaluated on |x| and given x's sign back:
 *   |x| < 1: |x| + |x| R(x^2), R(s) = erf(sqrt s)/sqrt s - 1 of degree 6 (|error| < 1.5e-8);
 *   1 <= |x|: 1 - exp(-a^2) Q((a - 2.5) / 1.5) with a = min(|x|, 4), Q = exp(a^2) erfc(a) of
 *            degree 11 (relative error < 5e-8; erfc(4) = 1.5e-8 already rounds 1 - erfc to 1,
 *            so clamping at 4 gives erf(+-inf) = +-1); min keeps NaN (x86 min returns its
 *            second operand when one is NaN). */
AF_INLINE af_vf af_erf(af_vf x) {
  static const float kR[] = {0x1.06eba8p-3f, -0x1.81273ep-2f,  0x1.ce2d2p-4f,  -0x1.b7fbb4p-6f,
                             0x1.5419f4p-8f, -0x1.a485e4p-11f, 0x1.4ae4bap-14f};
  static const float kQ[] = {0x1.afbb3ep-3f,  -0x1.c8ca46p-4f, 0x1.cba92p-5f,   -0x1.ba7406p-6f,
                             0x1.991658p-7f,  -0x1.6d0e84p-8f, 0x1.3dd8ecp-9f,  -0x1.08d06p-10f,
                             0x1.82d4d6p-12f, -0x1.3c957p-13f, 0x1.929606p-14f, -0x1.203444p-15f};
  const af_vf sign = af_bits_and_(af_splat(-0.0f), x);
  const af_vf ax = af_bits_xor_(sign, x);
  const af_vf small = af_fma_(ax, af_horner_(af_mul(x, x), kR), ax);
  const af_vf a = af_min_x86_(af_splat(4.0f), ax);
  const af_vf u = af_fma_(a, af_splat(1.0f / 1.5f), af_splat(-2.5f / 1.5f));
  const af_vf erfc = af_mul(af_exp(af_bits_xor_(af_splat(-0.0f), af_mul(a, a))), af_horner_(u, kQ));
  const af_vf large = af_sub(af_splat(1.0f), erfc);
  return af_bits_or_(sign, af_select_(af_lt(ax, af_splat(1.0f)), small, large));
}

/* log1p: SLEEF's (1 ULP), except that SLEEF 3.5 returns +inf above 1e38 (a range cut in its
 * log1pf); there log1p(x) rounds to log(x) (any x > 2^24 does). */
AF_INLINE af_vf af_log1p(af_vf x) {
  return af_select_(af_gt(x, af_splat(1e38f)), af_log(x), af_log1p_sleef_(x));
}

#endif /* AUTOFUSE_CPU_MATH_H */
