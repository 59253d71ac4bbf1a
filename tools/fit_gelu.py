"""Fits the piecewise polynomial of autofuse_cpu_avx512.h's af_gelu_piecewise_ and prints its
coefficient table (C), then its float32 error against float64 per range.

GELU(x) = x * Phi(x). Phi is fitted on 32 intervals of width 0.375 covering [-6, 6), each by a
degree-5 polynomial in t = (x + 6) / 0.375 - k (t in [0, 1) on interval k), minimising the
largest relative error of Phi (Lawson's iteration on weighted least squares), so GELU keeps its
relative accuracy in the negative tail and near 0. Outside the intervals GELU(x) is x (x >= 6:
1 - Phi(6) = 1e-9) or 0 (x < -6: |GELU| < 6e-9).

    python tools/fit_gelu.py      # numpy only
"""

import math

import numpy as np

INTERVALS, LOW, WIDTH, DEGREE = 32, -6.0, 0.375, 5


def phi(x: np.ndarray) -> np.ndarray:
    return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x])


def fit() -> np.ndarray:
    """Coefficients [degree + 1, intervals], float32-rounded."""
    coefs = np.zeros((DEGREE + 1, INTERVALS))
    t = np.linspace(0.0, 1.0, 4001)
    basis = np.vander(t, DEGREE + 1, increasing=True)
    for k in range(INTERVALS):
        y = phi(LOW + WIDTH * (k + t))
        weight, lawson = 1.0 / y, np.full_like(t, 1.0 / len(t))
        for _ in range(60):
            w = np.sqrt(lawson) * weight
            c, *_ = np.linalg.lstsq(basis * w[:, None], y * w, rcond=None)
            lawson = lawson * np.abs((basis @ c - y) * weight)
            lawson /= lawson.sum()
        coefs[:, k] = c.astype(np.float32)
    return coefs.astype(np.float32)


def gelu32(x: np.ndarray, coefs: np.ndarray) -> np.ndarray:
    """The kernel's evaluation in float32 (Horner without fused multiply-adds)."""
    x = x.astype(np.float32)
    u = x * np.float32(1.0 / WIDTH) + np.float32(-LOW / WIDTH)
    i = np.trunc(u).astype(np.int64)
    t = u - i.astype(np.float32)
    k = i & (INTERVALS - 1)
    p = coefs[DEGREE][k]
    for j in range(DEGREE - 1, -1, -1):
        p = p * t + coefs[j][k]
    g = np.where(x >= np.float32(-LOW), x, x * p)
    return np.where(x < np.float32(LOW), np.float32(0.0), g)


def main() -> None:
    coefs = fit()
    print(f"static const float af_gelu_phi_[{DEGREE + 1}][{INTERVALS}] __attribute__((aligned(64))) = {{")
    for j in range(DEGREE + 1):
        row = ", ".join(f"{v:.9e}f" for v in coefs[j])
        print(f"    {{{row}}},")
    print("};")
    x = np.linspace(-8, 8, 2_000_001).astype(np.float32)
    exact = x.astype(np.float64) * phi(x.astype(np.float64))
    err = np.abs(gelu32(x, coefs).astype(np.float64) - exact)
    rel = err / np.maximum(np.abs(exact), 1e-300)
    for lo, hi in [(-6, -4), (-4, -1), (-1, 1), (1, 4), (4, 8)]:
        m = (x >= lo) & (x < hi)
        print(f"// [{lo}, {hi}): max abs error {err[m].max():.2g}, max relative {rel[m].max():.2g}")


if __name__ == "__main__":
    main()
