"""The main job: a real model through torch.compile(backend="autofuse").

A small GPT-style decoder: token embeddings -> 2 pre-norm transformer blocks (LayerNorm,
causal multi-head self-attention written out, residual, LayerNorm, GELU MLP, residual) -> a
final LayerNorm. Prints the model, the explain report (which ATen ops went into which generated
kernel, which stayed ATen ops and why), the fused graphs, how many kernels replace how many eager
ops, the max abs error against eager, and eager vs autofuse time (medians of repeated runs).

    python examples/demo.py            # the transformer above
    python examples/demo.py --gpt2     # also a GPT-2 built from a config (needs `transformers`)
"""
import argparse
import inspect
import math
import os
import statistics
import time
from typing import Callable, Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

import autofuse

BATCH, SEQ, D_MODEL, HEADS, VOCAB = 8, 128, 512, 8, 1000
FUSED_TEXT_LINES = 60  # fused-graph lines printed per graph (the rest goes to a file)


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention written out: q/k/v projections, heads, scaled scores, causal
    mask, softmax, weighted sum, output projection."""

    def __init__(self, d: int, heads: int, max_seq: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        future = torch.triu(torch.ones(max_seq, max_seq, dtype=torch.bool), diagonal=1)
        self.register_buffer("future", future, persistent=False)

    def forward(self, x):
        b, s, d = x.shape
        dh = d // self.heads
        q = self.q(x).view(b, s, self.heads, dh).transpose(1, 2)
        k = self.k(x).view(b, s, self.heads, dh).transpose(1, 2)
        v = self.v(x).view(b, s, self.heads, dh).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(dh))
        scores = scores.masked_fill(self.future[:s, :s], float("-inf"))
        att = torch.softmax(scores, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        return self.out(y)


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln1(x)), then + mlp(ln2(.))."""

    def __init__(self, d: int, heads: int, max_seq: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, max_seq)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Decoder(nn.Module):
    """A stack of blocks over token embeddings and a final LayerNorm (no LM head: the vocabulary
    matmul would only add ATen time)."""

    def __init__(self, layers: int = 2, d: int = D_MODEL, heads: int = HEADS, max_seq: int = SEQ):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d, heads, max_seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.ln_f(x)


def medians_ms(fns: Dict[str, Callable], x, repeats: int) -> Tuple[Dict[str, float], Dict[str, float]]:
    """(median, fastest) milliseconds of each fn(x) over `repeats` rounds after 2 warm-up runs;
    each round runs every fn once in turn, so load from other processes hits them alike."""
    for fn in fns.values():
        for _ in range(2):
            fn(x)
    times: Dict[str, List[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn(x)
            times[name].append((time.perf_counter() - t0) * 1e3)
    return ({n: statistics.median(t) for n, t in times.items()}, {n: min(t) for n, t in times.items()})


def explain(model: nn.Module, x, out_dir: str):
    """autofuse.explain, drawing the fused graphs into out_dir when this version of explain
    draws pictures (Graphviz); the report either way."""
    if "picture_dir" in inspect.signature(autofuse.explain).parameters:
        return autofuse.explain(model, x, picture_dir=out_dir)
    return autofuse.explain(model, x)


def pictures(report) -> List[str]:
    """The pictures of the fused graphs the report drew (SVG, else PNG, else DOT), if any."""
    paths = []
    for g in report.graphs:
        drawn = getattr(g, "pictures", None) or {}
        for fmt in ("svg", "png", "dot"):
            if fmt in drawn:
                paths.append(drawn[fmt])
                break
    return paths


def print_fused_graphs(records, out_dir: str) -> None:
    """The fused graph of every compiled graph: the first lines here, the whole text in a file."""
    os.makedirs(out_dir, exist_ok=True)
    for rec in records:
        if not rec.fused_text:
            print(f"\n---- graph {rec.name}: runs eagerly ({rec.fallback}) ----")
            continue
        path = os.path.join(out_dir, f"{rec.name}.fused.txt")
        with open(path, "w") as f:
            f.write(rec.fused_text)
        lines = rec.fused_text.splitlines()
        print(f"\n---- fused graph {rec.name} ({len(lines)} lines, all in {path}) ----")
        print("\n".join(lines[:FUSED_TEXT_LINES]))
        if len(lines) > FUSED_TEXT_LINES:
            print(f"... {len(lines) - FUSED_TEXT_LINES} more lines in {path}")


def run(name: str, model: nn.Module, x, repeats: int, out_dir: str) -> None:
    """Explain, check against eager and time one model."""
    print(f"==== {name} ====")
    print(model)
    with torch.no_grad():
        report = explain(model, x, out_dir)
        print()
        print(report)
        records = [r for r in autofuse.compiled_graphs() if r.name in {g.name for g in report.graphs}]
        print_fused_graphs(records, out_dir)
        compiled = torch.compile(model, backend="autofuse")
        expected = model(x)
        got = compiled(x)
        if not isinstance(got, torch.Tensor):  # HF models return an output object
            got, expected = got[0], expected[0]
        err = (got - expected).abs().max().item()
        torch.testing.assert_close(got, expected)
        med, fastest = medians_ms({"eager": model, "autofuse": compiled}, x, repeats)

    print()
    print(f"generated kernels: {report.num_kernels}, replacing {report.fused_compute_ops} eager ops "
          f"({report.compute_ops - report.fused_compute_ops} of {report.compute_ops} computing ops left to ATen)")
    targets = [r.program.kernel_target(k) for r in records if r.program is not None
               for k in range(r.program.num_kernels())]
    if "ascendc" in targets:  # AUTOFUSE_TARGET=ascendc: Ascend C run against ascendc_emu
        print(f"kernels in Ascend C (run against ascendc_emu; a device-rule violation would raise): "
              f"{targets.count('ascendc')}; in C++ (no Ascend C printer for them yet): "
              f"{targets.count('cpu')}")
    for path in pictures(report):
        print(f"picture of the fused graph: {path}")
    print(f"max abs error vs eager: {err:.3g} (torch.testing.assert_close passed)")
    print(f"eager {med['eager']:.2f} ms, autofuse {med['autofuse']:.2f} ms (medians of {repeats}, "
          f"interleaved; fastest {fastest['eager']:.2f} / {fastest['autofuse']:.2f} ms), "
          f"speedup {med['eager'] / med['autofuse']:.2f}x with {torch.get_num_threads()} threads\n")


def gpt2(out_dir: str, repeats: int) -> None:
    """A 2-layer GPT-2 from a config (random weights, no download), if transformers is there."""
    try:
        from transformers import GPT2Config, GPT2Model
    except ImportError:
        print("transformers is not installed: GPT-2 skipped")
        return
    cfg = GPT2Config(n_layer=2, n_embd=D_MODEL, n_head=HEADS, n_positions=SEQ, vocab_size=VOCAB)
    model = GPT2Model(cfg).eval()
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    run("GPT-2 (transformers, from config)", model, ids, repeats, out_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpt2", action="store_true", help="also run GPT-2 from transformers")
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per model")
    parser.add_argument("--out", default=os.path.join("build", "demo"), help="fused graph texts")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = Decoder().eval()
    embed = nn.Embedding(VOCAB, D_MODEL)
    with torch.no_grad():  # token + position embeddings: the model's input
        x = embed(torch.randint(0, VOCAB, (BATCH, SEQ))) + torch.randn(SEQ, D_MODEL) * 0.02
    print(f"input: token embeddings (+ positions) of batch {BATCH}, seq {SEQ}, d_model {D_MODEL}")
    run("GPT-style decoder, 2 pre-norm blocks", model, x, args.repeats, args.out)
    if args.gpt2:
        gpt2(args.out, args.repeats)


if __name__ == "__main__":
    main()
