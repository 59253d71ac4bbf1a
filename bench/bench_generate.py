"""make bench-generate: Hugging Face `generate` with a compiled forward, the way people serve
language models on a CPU: eager vs Inductor vs Inductor with `freezing` vs autofuse.

Each model (Llama, Qwen2, GPT-2, Mistral causal LMs; random weights from configs, 6 layers;
nothing is downloaded) is built once per dtype (fp32, bf16) and copied per variant; each
variant's `model.forward = torch.compile(model.forward, backend=...)` (Hugging Face's
documented path; its own auto-compile is off). Per KV cache (`dynamic`: DynamicCache, the
default; `static`: cache_implementation="static") the same compiled models then serve every
shape (batch 1 and 4, prompts of 24 and 128 tokens), greedy, a fixed number of new tokens.

Per (model, dtype, cache, batch, prompt) and variant:
- the first `generate` of that shape (compiling whatever it needs: its seconds, the Dynamo
  graphs it made and autofuse's C++ compiles), then a second one, which must compile nothing
  and (autofuse) reorder no weight (torch's profiler counts oneDNN's and MKL's reorders);
- interleaved rounds (shuffled order, one `generate` per variant per round, a STREAM triad in
  each round): time to first token (prefill: generate's start to the first token's logits) and
  ms per generated token (decode: the mean gap between the later tokens' logits), medians,
  and per-round ratios (common.paired_ratio);
- tokens against eager's (fp32: equal; bf16: equal to eager's or Inductor's, else the first
  difference is reported);
- decode against the weight-streaming bound: bytes of weights and KV cache one decode step
  reads over the triad's bandwidth in the same rounds, as a fraction of the measured step.
Peak resident memory: per (model, dtype), one child process per variant builds, compiles and
generates (batch 1, prompt 24, dynamic cache) and reports its peak RSS.

Writes build/bench/generate.md and generate.png. Never part of `make test`; nothing here
asserts a time. BENCH_BUDGET_S: seconds of timed rounds per shape (default 12); --models,
--dtypes, --caches, --shapes (BxP, e.g. 1x24,4x128) and --no-memory narrow a run.
"""
import argparse
import copy
import dataclasses
import math
import os
import random
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch

sys.path.insert(0, os.path.dirname(__file__))
from common import Triad, memory_table, own_copy, paired_ratio, peak_rss, report_peak_rss  # noqa: E402

_CACHE = os.environ.get("BENCH_CACHE_DIR") or tempfile.mkdtemp(prefix="autofuse-bench-generate-")
os.environ["AUTOFUSE_CACHE_DIR"] = os.path.join(_CACHE, "autofuse")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_CACHE, "inductor")
import autofuse  # noqa: E402
import transformers  # noqa: E402

VARIANTS = ("eager", "inductor", "inductor-frozen", "autofuse")
BUDGET_S = float(os.environ.get("BENCH_BUDGET_S", "12"))
OUT_DIR = os.path.join(os.path.dirname(__file__), "..", "build", "bench")
REORDERS = ("mkldnn::_reorder_linear_weight", "mkl::_mkl_reorder_linear_weight")
DEFAULT_SHAPES = "1x24,1x128,4x24,4x128"


def _llama() -> torch.nn.Module:
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=6, num_attention_heads=12,
        num_key_value_heads=4, max_position_embeddings=1024))


def _qwen2() -> torch.nn.Module:
    return transformers.Qwen2ForCausalLM(transformers.Qwen2Config(
        vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=6, num_attention_heads=8,
        num_key_value_heads=2, max_position_embeddings=1024))


def _gpt2() -> torch.nn.Module:
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=6, n_positions=1024, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))


def _mistral() -> torch.nn.Module:
    return transformers.MistralForCausalLM(transformers.MistralConfig(
        vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=6, num_attention_heads=12,
        num_key_value_heads=4, max_position_embeddings=1024, sliding_window=None))


MODELS: Dict[str, Callable[[], torch.nn.Module]] = {"llama": _llama, "qwen2": _qwen2, "gpt2": _gpt2,
                                                     "mistral": _mistral}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def progress(msg: str) -> None:
    """One line of progress on stderr."""
    print(f"[bench-generate {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build(name: str, dtype: torch.dtype) -> torch.nn.Module:
    """The model with seeded random weights, built in `dtype` (a bf16 model never holds an fp32
    copy of its weights, so its peak memory is a bf16 server's), in eval mode."""
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return MODELS[name]().to(dtype).eval()
    finally:
        torch.set_default_dtype(default)


def compile_variant(model: torch.nn.Module, variant: str) -> torch.nn.Module:
    """`model` with its forward compiled for `variant` (in place; eager: unchanged)."""
    if variant != "eager":
        backend = "autofuse" if variant == "autofuse" else "inductor"
        options = {"freezing": True} if variant == "inductor-frozen" else None
        model.forward = torch.compile(own_copy(type(model).forward).__get__(model), backend=backend,
                                      options=options)
    return model


class Stamps(transformers.LogitsProcessor):
    """A logits processor that only records when each token's logits arrived."""

    def __init__(self) -> None:
        self.times: List[float] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        self.times.append(time.perf_counter())
        return scores


@dataclasses.dataclass
class Shape:
    """One request shape: batch rows, prompt tokens, new tokens, KV cache kind."""

    batch: int
    prompt: int
    new: int
    cache: str

    def inputs(self, vocab: int) -> Tuple[torch.Tensor, torch.Tensor]:
        """(input_ids, attention_mask): seeded random prompts, no padding."""
        g = torch.Generator().manual_seed(self.batch * 1000 + self.prompt)
        ids = torch.randint(3, vocab, (self.batch, self.prompt), generator=g)
        return ids, torch.ones_like(ids)


def generate(model: torch.nn.Module, shape: Shape, ids: torch.Tensor, mask: torch.Tensor
             ) -> Tuple[torch.Tensor, float, float]:
    """(tokens, seconds to the first token, seconds per later token) of one greedy generate."""
    stamps = Stamps()
    kw = dict(cache_implementation="static") if shape.cache == "static" else {}
    t0 = time.perf_counter()
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=shape.new, min_new_tokens=shape.new,
                             do_sample=False, logits_processor=transformers.LogitsProcessorList([stamps]),
                             pad_token_id=0, disable_compile=True, **kw)
    t = stamps.times
    return out[:, ids.shape[1]:], t[0] - t0, (t[-1] - t[0]) / max(len(t) - 1, 1)


def reorders_in(fn: Callable[[], object]) -> Tuple[object, int]:
    """(fn(), the weight reorders it ran) under torch's profiler."""
    with torch.profiler.profile() as prof:
        out = fn()
    return out, sum(e.name in REORDERS for e in prof.events())


def dynamo_graphs() -> int:
    """Dynamo graphs compiled so far in this process."""
    return int(torch._dynamo.utils.counters["stats"]["unique_graphs"])


def decode_bytes(model: torch.nn.Module, shape: Shape) -> int:
    """Bytes one decode step must read: every weight once (the input embedding's table only
    where it is also the output projection) and the KV cache (static: its whole length, which
    attention reads under a mask; dynamic: the mean length over the decode)."""
    cfg = model.config
    emb, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) not in seen and (p is not emb or emb is head):
            seen.add(id(p))
            total += p.numel() * p.element_size()
    layers = cfg.num_hidden_layers
    heads = getattr(cfg, "num_attention_heads")
    kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    ctx = shape.prompt + shape.new if shape.cache == "static" else shape.prompt + shape.new / 2
    kv = 2 * layers * shape.batch * kv_heads * head_dim * ctx * emb.element_size()
    return int(total + kv)


@dataclasses.dataclass
class Case:
    """The measurements of one (model, dtype, cache, batch, prompt)."""

    model: str
    dtype: str
    shape: Shape
    ttft: Dict[str, float] = dataclasses.field(default_factory=dict)  # variant -> median seconds
    decode: Dict[str, float] = dataclasses.field(default_factory=dict)  # variant -> median s/token
    decode_ratio: Dict[str, float] = dataclasses.field(default_factory=dict)  # variant -> its time / autofuse's
    prefill_ratio: Dict[str, float] = dataclasses.field(default_factory=dict)
    first_s: Dict[str, float] = dataclasses.field(default_factory=dict)  # the shape's first generate
    graphs: Dict[str, int] = dataclasses.field(default_factory=dict)  # Dynamo graphs it compiled
    cxx_compiles: int = 0
    second_graphs: Dict[str, int] = dataclasses.field(default_factory=dict)  # compiled by the second
    second_reorders: int = 0  # autofuse's weight reorders in the second generate
    tokens: Dict[str, str] = dataclasses.field(default_factory=dict)  # variant -> "equal" or a difference
    bound_fraction: float = 0.0  # weight-streaming bound / autofuse's decode step
    triad_gbps: float = 0.0  # the triad's bandwidth in this case's rounds (the bound's divisor)
    rounds: int = 0
    fallbacks: List[str] = dataclasses.field(default_factory=list)

    @property
    def label(self) -> str:
        s = self.shape
        return f"{self.model} {self.dtype} {s.cache} {s.batch}x{s.prompt}"


def first_difference(got: torch.Tensor, want: torch.Tensor) -> Optional[str]:
    """None when equal, else where the first token differs."""
    if torch.equal(got, want):
        return None
    diff = (got != want).nonzero()
    r, t = (int(v) for v in diff[0])
    return f"row {r} token {t}: {int(got[r, t])} vs {int(want[r, t])}"


def float64_verdict(model: torch.nn.Module, ids: torch.Tensor, got: torch.Tensor, want: torch.Tensor) -> str:
    """Why `got` parts from `want` (eager's tokens) at their first difference, judged in float64:
    the model's own (bf16) weights upcast, the shared prefix run without a cache, and the two
    tokens' logits compared. A near tie (the gap under 2^-7 of the largest logit, about twice a
    bf16 rounding of it) or float64 choosing `got`'s token explains the difference."""
    r, t = (int(v) for v in (got != want).nonzero()[0])
    a, b = int(got[r, t]), int(want[r, t])
    judge = copy.deepcopy(model).double()
    with torch.no_grad():
        logits = judge(input_ids=torch.cat([ids[r], want[r, :t]])[None]).logits[0, -1]
    gap, scale = float(logits[a] - logits[b]), float(logits.abs().max())
    best = int(logits.argmax())
    verdict = ("float64 chooses it too" if best == a else "a near tie" if abs(gap) < scale * 2 ** -7
               else "NOT explained")
    return (f"{verdict} (float64 logits {a}: {float(logits[a]):.4f}, {b}: {float(logits[b]):.4f}, "
            f"largest {scale:.2f}, float64's choice {best})")


def check_tokens(case: Case, outs: Dict[str, torch.Tensor], eager: Optional[torch.nn.Module] = None,
                 ids: Optional[torch.Tensor] = None) -> None:
    """fp32: tokens equal eager's; bf16: eager's or Inductor's (eager rounds every op to bf16,
    a fused kernel keeps fp32 between ops: greedy choices between near-equal logits can part),
    or the first difference from eager's explained in float64 (float64_verdict)."""
    for v in VARIANTS[1:]:
        diff = first_difference(outs[v], outs["eager"])
        if diff is None:
            case.tokens[v] = "equal"
        elif case.dtype == "bf16" and v != "inductor" and first_difference(outs[v], outs["inductor"]) is None:
            case.tokens[v] = "equal to Inductor's"
        elif case.dtype == "bf16" and v != "inductor":
            case.tokens[v] = (f"differs from eager's at {diff} and from Inductor's at "
                              f"{first_difference(outs[v], outs['inductor'])}")
        else:
            case.tokens[v] = f"differs from eager's at {diff}"
        if diff is not None and case.dtype == "bf16" and eager is not None:
            case.tokens[v] += f": {float64_verdict(eager, ids, outs[v], outs['eager'])}"


def run_shape(name: str, dtype: str, mods: Dict[str, torch.nn.Module], shape: Shape) -> Case:
    """Compiles (first call), checks and times one shape on the variants' models."""
    case = Case(name, dtype, shape)
    ids, mask = shape.inputs(mods["eager"].config.vocab_size)
    outs = {}
    for v in VARIANTS:
        before_g, before_c = dynamo_graphs(), autofuse.stats()["cxx_compiles"]
        with autofuse.collect_records() as recs:
            t0 = time.perf_counter()
            outs[v] = generate(mods[v], shape, ids, mask)[0]
            case.first_s[v] = time.perf_counter() - t0
        case.graphs[v] = dynamo_graphs() - before_g
        if v == "autofuse":
            case.cxx_compiles = autofuse.stats()["cxx_compiles"] - before_c
            case.fallbacks = [f"{r.name}: {r.fallback}" for r in recs if r.fallback]
        before_g = dynamo_graphs()
        (_, n) = reorders_in(lambda v=v: generate(mods[v], shape, ids, mask))
        case.second_graphs[v] = dynamo_graphs() - before_g
        if v == "autofuse":
            case.second_reorders = n
    check_tokens(case, outs, mods["eager"], ids)
    triad = Triad()
    fns: Dict[str, Callable[[], object]] = {v: (lambda v=v: generate(mods[v], shape, ids, mask)) for v in VARIANTS}
    per_round = sum(case.first_s[v] for v in VARIANTS if case.graphs[v] == 0) or 4.0
    case.rounds = rounds = max(3, min(30, int(BUDGET_S / max(per_round, 1e-3))))
    ttft: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    dec: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    triad_s: List[float] = []
    order = list(fns.items()) + [("triad", triad)]
    for _ in range(rounds):
        random.Random(len(triad_s)).shuffle(order)
        for v, fn in order:
            if v == "triad":
                t0 = time.perf_counter()
                fn()
                triad_s.append(time.perf_counter() - t0)
            else:
                _, a, b = fn()
                ttft[v].append(a)
                dec[v].append(b)
    case.ttft = {v: statistics.median(ts) for v, ts in ttft.items()}
    case.decode = {v: statistics.median(ts) for v, ts in dec.items()}
    case.decode_ratio = {v: paired_ratio(dec, v, "autofuse") for v in VARIANTS}
    case.prefill_ratio = {v: paired_ratio(ttft, v, "autofuse") for v in VARIANTS}
    gbps = triad.nbytes / statistics.median(triad_s)
    case.triad_gbps = gbps / 1e9
    case.bound_fraction = decode_bytes(mods["autofuse"], shape) / gbps / case.decode["autofuse"]
    return case


def peak_rss_child(name: str, dtype: str, variant: str, new: int) -> None:
    """(child process) Builds, compiles and generates twice; prints its peak RSS in MiB."""
    model = compile_variant(build(name, DTYPES[dtype]), variant)
    shape = Shape(1, 24, new, "dynamic")
    ids, mask = shape.inputs(model.config.vocab_size)
    for _ in range(2):
        generate(model, shape, ids, mask)
    report_peak_rss()


def peak_rss_variants(name: str, dtype: str, new: int) -> Dict[str, float]:
    """Per variant, the peak RSS (MiB) of a child process serving one request (peak_rss_child)."""
    return peak_rss(__file__, {v: f"{name},{dtype},{v},{new}" for v in VARIANTS}, progress)


def geomean(xs: List[float]) -> float:
    """Geometric mean (nan for none)."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def ms(t: float) -> str:
    return f"{t * 1e3:.1f}"


def table(cases: List[Case], memory: Dict[Tuple[str, str], Dict[str, float]]) -> str:
    """The results as markdown: one row per case, the memory per (model, dtype), the geomeans."""
    lines = ["| case | prefill ms (eager / ind / frozen / af) | decode ms/token (eager / ind / frozen / af) | "
             "decode af vs ind / frozen | prefill af vs ind | decode % of bound (triad GB/s) | first generate s "
             "(ind / frozen / af) | af graphs / C++ | 2nd call graphs / reorders | tokens |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cases:
        bad = [f"{v}: {t}" for v, t in c.tokens.items() if t.startswith("differs")]
        second = sum(c.second_graphs.values())
        lines.append(
            f"| {c.label} | {' / '.join(ms(c.ttft[v]) for v in VARIANTS)} | "
            f"{' / '.join(ms(c.decode[v]) for v in VARIANTS)} | "
            f"{c.decode_ratio['inductor']:.2f}x / {c.decode_ratio['inductor-frozen']:.2f}x | "
            f"{c.prefill_ratio['inductor']:.2f}x | {100 * c.bound_fraction:.0f}% ({c.triad_gbps:.0f}) | "
            f"{c.first_s['inductor']:.1f} / {c.first_s['inductor-frozen']:.1f} / {c.first_s['autofuse']:.1f} | "
            f"{c.graphs['autofuse']} / {c.cxx_compiles} | {second} / {c.second_reorders} | "
            f"{'; '.join(bad) if bad else 'ok'} |")  # a bf16 Inductor may differ from eager: shown, not ours
    if memory:
        lines += [""] + memory_table(memory, ("model", "dtype"), VARIANTS)
    lines += ["", "| group | cases | decode af / ind | worst | decode af / frozen | worst | prefill af / ind |",
              "|---|---|---|---|---|---|---|"]
    groups: Dict[str, List[Case]] = {}
    for c in cases:
        groups.setdefault(f"{c.dtype} {c.shape.cache} batch {c.shape.batch}", []).append(c)
    for g, cs in groups.items():
        wi = min(cs, key=lambda c: c.decode_ratio["inductor"])
        wf = min(cs, key=lambda c: c.decode_ratio["inductor-frozen"])
        lines.append(f"| {g} | {len(cs)} | {geomean([c.decode_ratio['inductor'] for c in cs]):.3f}x | "
                     f"{wi.label} {wi.decode_ratio['inductor']:.2f}x | "
                     f"{geomean([c.decode_ratio['inductor-frozen'] for c in cs]):.3f}x | "
                     f"{wf.label} {wf.decode_ratio['inductor-frozen']:.2f}x | "
                     f"{geomean([c.prefill_ratio['inductor'] for c in cs]):.3f}x |")
    details = [f"- {c.label}: {f}" for c in cases for f in c.fallbacks]
    return "\n".join(lines + ([""] + details if details else [])) + "\n"


def chart(cases: List[Case], path: str) -> None:
    """autofuse's speed-up in decode over Inductor and Inductor-frozen, and in prefill over
    Inductor, per case."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(cases)), 4))
    xs = range(len(cases))
    for k, (label, get) in enumerate((("decode vs Inductor", lambda c: c.decode_ratio["inductor"]),
                                      ("decode vs Inductor-frozen", lambda c: c.decode_ratio["inductor-frozen"]),
                                      ("prefill vs Inductor", lambda c: c.prefill_ratio["inductor"]))):
        ax.bar([x + (k - 1) * 0.27 for x in xs], [get(c) for c in cases], 0.27, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.15, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks(list(xs), [c.label for c in cases], rotation=70, fontsize=7)
    ax.set_ylabel("autofuse speed-up")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help=f"any of {','.join(MODELS)}")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--caches", default="dynamic,static")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="batch x prompt tokens, comma-separated")
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--no-memory", action="store_true", help="skip the per-variant peak RSS processes")
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        name, dtype, variant, new = args.memory_child.split(",")
        peak_rss_child(name, dtype, variant, int(new))
        return
    torch._dynamo.config.recompile_limit = 64
    torch._dynamo.config.cache_size_limit = 64
    names = [n for n in args.models.split(",") if n]
    dtypes = [d for d in args.dtypes.split(",") if d]
    caches = [c for c in args.caches.split(",") if c]
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",") if s]
    unknown = ([n for n in names if n not in MODELS] + [d for d in dtypes if d not in DTYPES]
               + [c for c in caches if c not in ("dynamic", "static")])
    if unknown:
        sys.exit(f"unknown model(s)/dtype(s)/cache(s): {unknown}")
    progress(f"{len(names)} model(s) x {len(dtypes)} dtype(s) x {len(caches)} cache(s) x {len(shapes)} shape(s), "
             f"{args.new_tokens} new tokens, torch threads {torch.get_num_threads()}, caches under {_CACHE}")
    cases: List[Case] = []
    memory: Dict[Tuple[str, str], Dict[str, float]] = {}
    for name in names:
        for dtype in dtypes:
            if not args.no_memory:
                progress(f"{name} {dtype}: peak memory, one process per variant")
                memory[(name, dtype)] = peak_rss_variants(name, dtype, args.new_tokens)
            base = build(name, DTYPES[dtype])
            for cache in caches:
                torch._dynamo.reset()
                mods = {v: compile_variant(copy.deepcopy(base), v) for v in VARIANTS}
                for batch, prompt in shapes:
                    case = run_shape(name, dtype, mods, Shape(batch, prompt, args.new_tokens, cache))
                    cases.append(case)
                    progress(f"{case.label}: decode {ms(case.decode['autofuse'])} ms/token, "
                             f"{case.decode_ratio['inductor']:.2f}x Inductor, "
                             f"{case.decode_ratio['inductor-frozen']:.2f}x frozen; prefill "
                             f"{case.prefill_ratio['inductor']:.2f}x Inductor; "
                             f"{100 * case.bound_fraction:.0f}% of the bound (triad {case.triad_gbps:.1f} GB/s); "
                             f"2nd-call reorders "
                             f"{case.second_reorders}; tokens {case.tokens}")
    text = table(cases, memory)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "generate.md"), "w") as f:
        f.write(f"torch {torch.__version__}, transformers {transformers.__version__}, "
                f"{torch.get_num_threads()} threads, load {os.getloadavg()[0]:.1f}\n\n")
        f.write(text)
    chart(cases, os.path.join(args.out, "generate.png"))
    progress(f"wrote {os.path.join(args.out, 'generate.md')} and generate.png")


if __name__ == "__main__":
    main()
