"""make gpu-check's benchmark (issue 44): bench-models' five models (BERT, GPT-2, Llama, the T5
encoder, ViT; bench/models.py) on a CUDA GPU, eager vs Inductor vs autofuse (its cuda target),
fp32 and bf16, at batch 4 x 128 (ViT: 2 images) and batch 1 x 32 (one image). Never part of
`make test`; nothing asserts a time.

Each case builds the model on the GPU (same seeded weights per variant), compiles each variant
on its first call (compile seconds reported), compares the outputs with eager's at the dtype's
tolerance, then times the variants in shuffled interleaved rounds (bench/common.py), each call
followed by torch.cuda.synchronize(); the ratios are medians of per-round ratios. A case starts
only while the run's budget (BENCH_GPU_TOTAL_S, default 300 s) lasts, so the whole check fits
the GPU machine's time; cases left out are listed. Prints a table and writes
build/bench/gpu.md.
"""
from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import time
from typing import Callable, Dict, List

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from common import interleaved_samples, own_copy, paired_ratio, rounds_for  # noqa: E402

import autofuse  # noqa: E402
from autofuse import _C  # noqa: E402

VARIANTS = ("eager", "inductor", "autofuse")
SHAPES = {"4x128": (4, 128), "1x32": (1, 32)}
TOL = {torch.float32: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def forward(m: torch.nn.Module, kw: Dict[str, torch.Tensor]) -> torch.Tensor:
    out = m(**kw)
    return out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def run_case(name: str, dtype: torch.dtype, shape: str, budget_s: float, device: str) -> Dict[str, object]:
    batch, seq = SHAPES[shape]
    if not models.ALL_MODELS[name].vocab:
        batch = 2 if shape == "4x128" else 1
    base = models.build(name, dtype, train=False).to(device)
    kw = {k: (v.to(dtype) if v.is_floating_point() else v).to(device)
          for k, v in models.example_inputs(name, batch, seq).items()}
    row: Dict[str, object] = {"model": name, "dtype": str(dtype).replace("torch.", ""), "shape": shape}
    fns: Dict[str, Callable[[], object]] = {}
    with torch.no_grad():
        expected = forward(base, kw)
        for v in VARIANTS:
            m = copy.deepcopy(base)
            fn = forward if v == "eager" else torch.compile(own_copy(forward), backend=v)
            t0 = time.perf_counter()
            with autofuse.collect_records() as recs:
                got = fn(m, kw)
            sync(device)
            row[f"compile_{v}"] = time.perf_counter() - t0
            if v == "autofuse":
                row["kernels"] = sum(r.num_kernels for r in recs)
                row["fallbacks"] = [r.fallback for r in recs if r.fallback]
            try:
                torch.testing.assert_close(got.float(), expected.float(), **TOL[dtype])
                row[f"match_{v}"] = "ok"
            except AssertionError as e:
                row[f"match_{v}"] = str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else str(e)

            def call(fn=fn, m=m) -> None:
                fn(m, kw)
                sync(device)

            fns[v] = call
        rounds = rounds_for(fns, budget_s, 5, 200)
        samples = interleaved_samples(fns, rounds, warmup=3)
    row["ms"] = {v: sorted(s)[len(s) // 2] * 1e3 for v, s in samples.items()}
    row["vs_eager"] = paired_ratio(samples, "eager", "autofuse")
    row["vs_inductor"] = paired_ratio(samples, "inductor", "autofuse")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(models.MODELS))
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--shapes", default="4x128,1x32")
    ap.add_argument("--device", default="cuda", help="cpu: the same run on the CPU (a dry run of this script)")
    args = ap.parse_args()
    if args.device == "cuda" and (not torch.cuda.is_available() or _C.cuda_unavailable()):
        print(f"no GPU run: {_C.cuda_unavailable() or 'torch has no CUDA device'}")
        return
    total = float(os.environ.get("BENCH_GPU_TOTAL_S", "300"))
    per_case = float(os.environ.get("BENCH_BUDGET_S", "3"))
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    start = time.perf_counter()
    rows, skipped = [], []
    for name in args.models.split(","):
        for d in args.dtypes.split(","):
            for shape in args.shapes.split(","):
                if time.perf_counter() - start > total:
                    skipped.append(f"{name} {d} {shape}")
                    continue
                progress(f"{name} {d} {shape} ...")
                try:
                    rows.append(run_case(name, dtypes[d], shape, per_case, args.device))
                except Exception as e:  # a failing case is reported, the others still run
                    rows.append({"model": name, "dtype": d, "shape": shape, "error": f"{type(e).__name__}: {e}"})
                torch._dynamo.reset()
    where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    lines = [f"device: {where}, torch {torch.__version__}, NVRTC {_C.nvrtc()}", "",
             "| model | dtype | shape | eager ms | Inductor ms | autofuse ms | vs eager | vs Inductor | "
             "match (Ind / af) | kernels | compile s (Ind / af) | eager graphs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    by_shape: Dict[str, List[float]] = {}
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['dtype']} | {r['shape']} | error: {r['error']} |")
            continue
        ms = r["ms"]
        by_shape.setdefault(r["shape"], []).append(r["vs_inductor"])
        lines.append(f"| {r['model']} | {r['dtype']} | {r['shape']} | {ms['eager']:.3f} | {ms['inductor']:.3f} | "
                     f"{ms['autofuse']:.3f} | {r['vs_eager']:.2f}x | {r['vs_inductor']:.2f}x | "
                     f"{r['match_inductor']} / {r['match_autofuse']} | {r['kernels']} | "
                     f"{r['compile_inductor']:.1f} / {r['compile_autofuse']:.1f} | {len(r['fallbacks'])} |")
    lines.append("")
    for shape, xs in by_shape.items():
        lines.append(f"geomean vs Inductor at {shape}: {math.exp(sum(map(math.log, xs)) / len(xs)):.3f}x")
    if skipped:
        lines.append(f"not run (budget of {total:.0f} s spent): {', '.join(skipped)}")
    text = "\n".join(lines)
    print(text)
    os.makedirs("build/bench", exist_ok=True)
    with open("build/bench/gpu.md", "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
