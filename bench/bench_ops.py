"""make bench-ops: single transcendental / power ops and GPT-2's tanh-GELU chain, eager vs
torch.compile (Inductor) vs autofuse, side by side. Never part of `make test`; nothing here
asserts a time.

Ops: pow(x, 3.0), erf, tanh, exp, log, sigmoid, exact GELU (F.gelu) and the tanh-GELU chain as
GPT-2 writes it; shapes of BERT/GPT-2 activations (512x768, 512x3072, 4x128x3072) and a
decode-like 1x32x3072; fp32 and bf16. Each row is the median of interleaved rounds (one call
per sample, the order shuffled every round, bench/common.py), with the ratios autofuse/eager
and autofuse/Inductor (below 1: autofuse is faster) and whether autofuse's result is within
torch.testing.assert_close's default tolerances of eager's.

    BENCH_ONLY=substring   only the rows whose "op dtype shape" label contains it
    BENCH_BUDGET_S=s       timing budget per row (default 1.5 s)
"""
import math
import os
import sys
from typing import Callable, Dict, List, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from common import interleaved_medians, own_copy, rounds_for, within_tolerance  # noqa: E402

import autofuse  # noqa: E402,F401  (registers backend="autofuse")

SHAPES: List[Tuple[int, ...]] = [(512, 768), (512, 3072), (4, 128, 3072), (1, 32, 3072)]
DTYPES = [torch.float32, torch.bfloat16]
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu_tanh_gpt2(x):
    """GPT-2's NewGELUActivation, written out as the model writes it."""
    return 0.5 * x * (1.0 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * torch.pow(x, 3.0))))


# name -> (function, input transform): log gets positive inputs. Python functions (own_copy
# gives each compiled variant its own code object).
OPS: Dict[str, Tuple[Callable, Callable]] = {
    "pow3": (lambda x: torch.pow(x, 3.0), lambda x: x),
    "erf": (lambda x: torch.erf(x), lambda x: x),
    "tanh": (lambda x: torch.tanh(x), lambda x: x),
    "exp": (lambda x: torch.exp(x), lambda x: x),
    "log": (lambda x: torch.log(x), lambda x: x.abs() + 0.01),
    "sigmoid": (lambda x: torch.sigmoid(x), lambda x: x),
    "gelu": (lambda x: F.gelu(x), lambda x: x),
    "gelu_tanh_chain": (gelu_tanh_gpt2, lambda x: x),
}


def run_row(op: str, dtype: torch.dtype, shape: Tuple[int, ...], budget_s: float) -> str:
    """One table row: times of the three variants, ratios and the tolerance check."""
    fn, make = OPS[op]
    x = make(torch.randn(shape, dtype=torch.float32) * 2).to(dtype)
    eager = own_copy(fn)
    inductor = torch.compile(own_copy(fn), dynamic=False)
    ours = torch.compile(own_copy(fn), backend="autofuse", dynamic=False)
    ok = within_tolerance(ours(x), eager(x))
    inductor(x)
    fns = {"eager": lambda: eager(x), "inductor": lambda: inductor(x), "autofuse": lambda: ours(x)}
    rounds = rounds_for(fns, budget_s, lo=15, hi=400)
    med, _ = interleaved_medians(fns, rounds=rounds, warmup=3)
    e, i, a = (med[k] * 1e3 for k in ("eager", "inductor", "autofuse"))
    dt = {torch.float32: "fp32", torch.bfloat16: "bf16"}[dtype]
    shp = "x".join(str(s) for s in shape)
    return (f"{op:16s} {dt:5s} {shp:11s} {e:9.3f} {i:9.3f} {a:9.3f} {a / e:8.2f} {a / i:8.2f}"
            f"  {'yes' if ok else 'NO'}")


def main() -> None:
    only = os.environ.get("BENCH_ONLY", "")
    budget = float(os.environ.get("BENCH_BUDGET_S", "1.5"))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; times in ms "
          "(medians of interleaved rounds)")
    print(f"{'op':16s} {'dtype':5s} {'shape':11s} {'eager':>9s} {'inductor':>9s} {'autofuse':>9s}"
          f" {'af/eager':>8s} {'af/ind':>8s}  close")
    for op in OPS:
        for dtype in DTYPES:
            for shape in SHAPES:
                label = f"{op} {dtype} {'x'.join(map(str, shape))}"
                if only and only not in label:
                    continue
                print(run_row(op, dtype, shape, budget), flush=True)


if __name__ == "__main__":
    main()
