"""Where a model's time goes under eager, Inductor and autofuse (bench_models.py --breakdown).

Each variant runs CALLS calls under torch.profiler (shapes recorded), in ROUNDS rounds with the
variants in a fresh random order each round; the class split shows each variant's round of median
wall time, and each matmul-class call its median over the rounds (one profiled round on a shared
machine is off by 10-20%) with the median of its per-round autofuse/eager ratios (paired: the
machine's speed drifts between rounds, so a ratio of medians from different rounds is noise). Every event on the calling thread is put in one class:
  matmul    matmul-class ATen ops (MATMUL_OPS) with everything they call (an addmm's bias copy)
  aten      other ATen ops (self time), listed by op
  kernels   fused kernels: ours (`autofuse::g0.k3 <ATen ops inside>`, executor.py labels them
            while a profiler records) and Inductor's (`cpp_fused_*`, with its kernel profiling on)
  executor  autofuse's run functions' own time (`autofuse::g0` less its children)
  wrapper   the rest of the wall time: Dynamo's guards, AOTAutograd's wrappers, the autograd
            engine, Python glue
Then the top kernels of autofuse next to the Inductor kernel over the most of the same ATen ops,
and each matmul-class op (by input shapes) under autofuse against eager's identical calls.
"""
from __future__ import annotations

import collections
import random
import re
import statistics
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch

# ATen ops whose time is matmul work (and their CPU flash attention).
MATMUL_OPS = {
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
    "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::scaled_dot_product_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward", "aten::_addmm_activation",
    "mkldnn::_linear_pointwise", "mkl::_mkl_linear",
}
CALLS = 5  # profiled calls per variant and round
ROUNDS = 5
_INDUCTOR_KERNEL = re.compile(r"cpp_fused_(.*?)(_\d+)?$")


def profiled_inductor(forward: Callable, module: torch.nn.Module, kw: dict, train: bool, ctx: Callable) -> Callable:
    """An Inductor compile of forward with kernel profiling on (its kernels become profiler
    events); compiled here, on a call that is not timed."""
    fn = torch.compile(forward, options={"cpp.enable_kernel_profile": True})

    def call() -> torch.Tensor:
        with ctx():
            if train:
                for p in module.parameters():
                    p.grad = None
                out = fn(module, kw)
                out.float().square().mean().backward()
                return out
            return fn(module, kw)

    call()
    return call


def _classify(events: List) -> Tuple[Dict[str, float], Dict[str, float], Dict[str, float]]:
    """(class -> self µs summed, ATen op -> self µs of class aten, kernel -> self µs)."""
    classes: Dict[str, float] = collections.defaultdict(float)
    aten: Dict[str, float] = collections.defaultdict(float)
    kernels: Dict[str, float] = collections.defaultdict(float)
    for e in events:
        name, us = e.name, e.self_cpu_time_total
        parent, under_matmul = e.cpu_parent, False
        while parent is not None and not under_matmul:
            under_matmul = parent.name in MATMUL_OPS
            parent = parent.cpu_parent
        if name in MATMUL_OPS or under_matmul:
            classes["matmul"] += us
        elif name.startswith("autofuse::") and ".k" in name or _INDUCTOR_KERNEL.search(name):
            classes["kernels"] += us
            kernels[name] += us
        elif name.startswith("autofuse::"):
            classes["executor"] += us
        elif name.startswith("aten::"):
            classes["aten"] += us
            aten[name] += us
    return classes, aten, kernels


def _profile(fn: Callable[[], object]) -> Tuple[float, "torch.profiler.profile"]:
    """(wall µs per call, the profile) of CALLS calls of fn after two warm-up calls."""
    fn()
    fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        wall = (time.perf_counter() - t0) * 1e6 / CALLS
    return wall, prof


def _call_key(name: str, shapes: List[List[int]]) -> Optional[str]:
    """A matmul-class call named by what it computes, so the same product matches across ATen
    ops: `linear 512x768->3072` for addmm/mm (mat2 [K, N]) and oneDNN's linear (weight [N, K]),
    `bmm ...` and attention by their input shapes; None for wrappers (linear, matmul)."""
    if name in ("aten::addmm", "aten::mm") and len(shapes) >= 2:
        a, b = shapes[0:2] if name == "aten::mm" else shapes[1:3]  # mm.out: [a, b, out]
        return f"linear {a[0]}x{a[1]}->{b[1]}" if len(a) == 2 and len(b) == 2 else None
    if name in ("mkldnn::_linear_pointwise", "mkl::_mkl_linear") and len(shapes) >= 3 and shapes[0]:
        # oneDNN's packed weight keeps its [N, K] shape; MKL's pack is a blob, its third
        # argument the plain [N, K] weight.
        x, w = shapes[0], shapes[2] if name == "mkl::_mkl_linear" else shapes[1]
        rows = 1
        for d in x[:-1]:
            rows *= d
        n = w[0] if w else "?"
        return f"linear {rows}x{x[-1]}->{n}"
    if name in ("aten::bmm", "aten::baddbmm"):
        return f"{name[6:]} {shapes[0:2] if name == 'aten::bmm' else shapes[1:3]}"  # .out: + out
    if "scaled_dot_product" in name and "flash" in name:
        return f"{name[6:]} {shapes[:3]}"
    return None


def _matmul_calls(prof) -> Dict[str, Tuple[int, float]]:
    """call key (_call_key) -> (calls, inclusive µs) of the matmul-class ops."""
    out: Dict[str, Tuple[int, float]] = {}
    for a in prof.key_averages(group_by_input_shape=True):
        key = _call_key(a.key, a.input_shapes) if a.key in MATMUL_OPS else None
        if key is not None:
            n, us = out.get(key, (0, 0.0))
            out[key] = (n + a.count, us + a.cpu_time_total)
    return out


def _ops_of(kernel: str) -> List[str]:
    """The ATen op names a kernel label carries (`autofuse::g0.k3 add+gelu` -> [add, gelu])."""
    return [o for o in kernel.split(" ", 1)[-1].split("+") if o not in ("clone", "view", "_to_copy")]


def _median_calls(rounds: List[Dict[str, Tuple[int, float]]]) -> Dict[str, Tuple[int, float]]:
    """Per call key: (calls of one round, median inclusive µs over the rounds that have it)."""
    keys = set().union(*rounds)
    return {k: (max(r[k][0] for r in rounds if k in r), statistics.median(r[k][1] for r in rounds if k in r))
            for k in keys}


def _paired_ratio(paired: List[Tuple[dict, dict]], keys: List[str]) -> float:
    """The median over rounds of autofuse's time over eager's for the calls `keys`, each round's
    two profiles taken minutes apart at most (the machine's speed drifts more between rounds
    than between the variants of one round)."""
    ratios = []
    for mine, eager in paired:
        if all(k in mine and k in eager for k in keys):
            ratios.append(sum(mine[k][1] for k in keys) / sum(eager[k][1] for k in keys))
    return statistics.median(ratios) if ratios else float("nan")


def report(title: str, fns: Dict[str, Callable[[], object]]) -> str:
    """The breakdown of one case as markdown text (fns: variant -> one call)."""
    rounds: Dict[str, list] = {v: [] for v in fns}
    for _ in range(ROUNDS):
        order = list(fns)
        random.shuffle(order)
        for v in order:
            wall, prof = _profile(fns[v])
            rounds[v].append((wall, _classify(prof.events()), _matmul_calls(prof)))
    per, split, calls = {}, {}, {}
    for v in fns:
        wall, cls, _ = sorted(rounds[v], key=lambda r: r[0])[len(rounds[v]) // 2]
        per[v], split[v] = (wall, None), cls
        calls[v] = _median_calls([r[2] for r in rounds[v]])
    ms = lambda us: f"{us / 1e3 / CALLS:.2f}"  # noqa: E731 (µs over CALLS calls -> ms per call)
    lines = [f"### {title}: where the time goes (ms per call; {CALLS} profiled calls, median of {ROUNDS} rounds)", "",
             "| class | " + " | ".join(per) + " |", "|---|" + "---|" * len(per)]
    for cls in ("matmul", "aten", "kernels", "executor"):
        lines.append(f"| {cls} | " + " | ".join(ms(split[v][0].get(cls, 0.0)) for v in per) + " |")
    wrapper = {v: per[v][0] * CALLS - sum(split[v][0].values()) for v in per}
    lines.append("| wrapper | " + " | ".join(ms(wrapper[v]) for v in per) + " |")
    lines.append("| wall | " + " | ".join(f"{per[v][0] / 1e3:.2f}" for v in per) + " |")

    aten = split["autofuse"][1]
    top = sorted(aten.items(), key=lambda kv: -kv[1])[:8]
    lines += ["", "other ATen ops under autofuse: " + ", ".join(f"{k[6:]} {ms(us)}" for k, us in top)]
    ours = sorted(split["autofuse"][2].items(), key=lambda kv: -kv[1])[:10]
    theirs = split.get("inductor", ({}, {}, {}))[2]
    lines += ["", "| autofuse kernel | ms | Inductor kernel over the same ops | ms |", "|---|---|---|---|"]
    for k, us in ours:
        ops = _ops_of(k)
        best = max(theirs.items(), key=lambda kv: (sum(o in kv[0] for o in ops), kv[1]), default=None)
        if best is not None and sum(o in best[0] for o in ops) == 0:
            best = None
        match = f"{best[0]} | {ms(best[1])}" if best else "- | -"
        lines.append(f"| {k} | {ms(us)} | {match} |")

    mine, eager = calls["autofuse"], calls["eager"]
    both = sorted(set(mine) & set(eager), key=lambda key: -eager[key][1])
    paired = list(zip((r[2] for r in rounds["autofuse"]), (r[2] for r in rounds["eager"])))
    lines += ["", "| matmul-class call | calls | autofuse ms | eager ms | ratio (paired) |", "|---|---|---|---|---|"]
    for key in both:
        (n, a), (_, e) = mine[key], eager[key]
        lines.append(f"| {key} | {n // CALLS} | {ms(a)} | {ms(e)} | {_paired_ratio(paired, [key]):.3f} |")
    if both:
        tot_a, tot_e = sum(mine[k][1] for k in both), sum(eager[k][1] for k in both)
        lines.append(f"| all matched matmul calls | | {ms(tot_a)} | {ms(tot_e)} | {_paired_ratio(paired, both):.3f} |")
    unmatched = sorted(set(mine) - set(eager))
    if unmatched:
        lines.append("")
        lines.append("matmul calls under autofuse with no identical eager call: "
                     + "; ".join(unmatched))
    return "\n".join(lines) + "\n"
