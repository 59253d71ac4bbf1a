"""Linear layers on packed weights: packed once for many calls where nothing writes the weight.

A model's linear layers reach the executor as `addmm(bias, x, permute(W, [1, 0]))` or
`mm(x, permute(W, [1, 0]))` (GPT-2's Conv1D: `addmm(bias, x, W)` with W stored [in, out]), where
W is a parameter. ATen's fp32 call hands W in its plain layout to MKL's sgemm, which packs
its panels anew on every call. With W packed once (what Inductor does under `freezing`: MKL's packed sgemm,
mkl._mkl_reorder_linear_weight and _mkl_linear) the same arithmetic runs 1.07-1.47x faster at
these models' sizes (2 threads, wall time; 1.07-1.43x at 1 thread in CPU time).
On a CPU with AVX-512 that is not Intel's (AMD Zen 4) MKL runs its AVX2 path: there oneDNN's linear
on a reordered weight (mkldnn._reorder_linear_weight, _linear_pointwise) took 0.43-0.46x the time of
ATen's call and of MKL's packed one at 8-512 rows (2 threads, interleaved medians), with results as
close to float64 as MKL's; reordering a 768x3072 weight takes 0.6 ms, so training steps repack too.
oneDNN's linear on the weight as it is (no reorder) runs within 0-8% of the reordered one there
(fp32, 2048x768 and 32000x768 weights at 1, 128 and 512 rows; 1.1-1.7x slower at 4 rows) and keeps
no second copy of any weight, so fp32 there runs it (_ONEDNN_PLAIN) in inference and training: a
6-layer Llama serving `generate` peaked at 0.96x Inductor's resident memory against 2.02x with
kept packs, at the same decode speed (12.4 against 12.6 ms per token); batch 4 x 128 forwards
measured about 5% slower than with kept packs, training steps about 4% faster (bench-models).
On AMD Zen 3 (AVX2) oneDNN's took 0.61-1.07x the time of MKL's packed one: 0.61-0.81x at 8-32 rows
of BERT's and Llama's weights, 0.77-1.04x at ConvNeXt-T's shapes (49-6272 rows), 1.05-1.07x at
256-512 rows of square 768 and 1024 weights, 1.2x at one row (2 threads, interleaved medians):
there kept packs are oneDNN's and a training step's per-call packs stay MKL's (Library.training).
Which library serves a dtype is a table (CHOICES: the first row whose CPU condition holds). A pack
serves the row count it was made for, so dynamic shapes keep one per count (Library.per_rows).

bf16 depends on the CPU too. Without AVX-512 BF16, ATen's own matmul (oneDNN) runs on W copied
once to [in, out] row-major. On Intel with AMX that copy is the layout oneDNN reorders into its
AMX blocks fastest (bf16 linears with 2304-3072 output features 1.1-1.2x faster at 512 rows, the
rest within 10%, at 24 rows 0.91-1.09x; Sapphire Rapids, 2 threads), but a decode step's one row
streams the weight at a quarter of the memory's bandwidth: a 6-layer Llama's bf16 `generate` took
25.9 ms a token (0.82x Inductor, 23% of the weight-streaming bound). There, as on Zen 4 below, the
plain weight serves (no second copy) and decode's few rows run the runtime's own linear: 7.6 ms a
token, 1.58x Inductor, 66% of the bound (GPT-2 bf16: 0.83x to 1.70x Inductor), prefill 0.90x to
1.10x Inductor against 0.76x to 0.89x (bench-generate narrowed to Llama and GPT-2, 1x24, dynamic
and static caches, 2026-12-06). fp32 on Intel keeps MKL's packs (MKL runs its AVX-512 path there)
for prefill's rows and runs decode's few rows on the plain weight with the runtime's linear:
Llama decode 0.84x to 0.96x Inductor (static cache) and 0.96x to 1.08x (dynamic), GPT-2 dynamic
0.94x to 1.01x, prefill 1.01-1.07x to 1.03-1.19x; oneDNN on the plain weight instead of MKL's
packs decoded alike but prefilled 0.81x to 0.94x.
There oneDNN's linear on a reordered weight (mkldnn._reorder_linear_weight, _linear_pointwise)
was 1.16-1.41x ATen's at 1 thread but 0.55-0.68x at 2 threads for 768 output features, which
made whole bf16 models slower at torch's default thread count. With AVX-512 BF16 but no AMX
(AMD Zen 4) it is the other way round: the [in, out] copy runs 1.02-1.09x slower than ATen's
call on the transposed view, and oneDNN's reordered linear 0.96-0.99x its time at 512 rows and
0.68-0.76x at 4-8 rows (2 threads, interleaved medians; the bf16 models' linears measured
1.04-1.08x slower with the copy). oneDNN on the plain bf16 weight is 1.1-1.4x slower than on the
reordered one from 128 rows and up to 2.2x at 1-8 rows, but keeps no second copy of the weight:
there decode's few rows run the runtime's own linear (runtime/linear_rows.h: each weight row
read once, AVX-512 BF16 dot products of x's rows with it, as oneDNN's, the weight prefetched into
L2 96 KiB ahead), wherever x's rows stay in L1 (linear_rows_pays: up to 12 rows and 24 KiB of x).
Streaming 768x768 to 32000x768 weights from memory (2 threads, interleaved medians) it took
0.57-0.79x the reordered weight's time at 1 row, 0.78-1.2x at 4, 0.82-1.13x at 8, and 0.56-0.95x
oneDNN's on the plain weight at 8 rows; fp32 the same way, 0.71-0.85x oneDNN's plain-weight time
at 8 rows of K = 768.
GPT-2's Conv1D weights are [in, out] already and are not copied; up to 4 rows the runtime's
linear reads them as they are (WeightLayout::KN: 4 weight rows streamed at a time into sums kept
in L1): on GPT-2's four shapes streamed from memory it took 0.32-0.6x ATen's addmm time at 1-2
rows, 0.63-1.01x at 4 (bf16), 0.53-0.89x oneDNN's (fp32). A bf16 pack made on every call
does not pay (1.0-3.4x ATen's time including the reorder at 32-2048 rows on Zen 4; BERT/Llama
bf16 training steps measured 0.98-1.0x): bf16 packs only in inference graphs.
fp16 stays on ATen's call (no AMX for it on these CPUs: the copy measured within noise).
A CPU without bf16 dot-product instructions (cpu.bf16_arithmetic; AMD Zen 3) runs ATen's bf16
matmul 6-11x slower than fp32's (ConvNeXt-T's and BERT's linears at 32-6272 rows: 1.9-121 ms
against 0.45-15.5 ms, 2 threads): there a bf16 linear is computed in fp32, on the weight packed
as a row-major fp32 copy and its input converted per call (exact products, fp32 sums and one
rounding to bf16 at the end, as oneDNN's bf16 matmul), also per call in training; on Zen 3 a kept
pack is oneDNN's fp32 one.

An inference graph keeps each weight's pack across calls for as long as the weight provably
holds what was packed (weight_packs.py: a copy-on-write clone taken when packing; two pointer
reads a call). A kept pack saved 0.31-0.91x of ATen's time for BERT's fp32
linears at 1-512 rows on an AMD Zen 4 (2 threads).

A training graph writes its weights every step, so it keeps nothing: it packs on each call
where that pays by itself (Library.per_call_rows: MKL's fp32 from 512 rows, 0.76-0.94x ATen's
addmm including the reorder at 512-2048 rows of BERT's weights, 1.0-2.9x slower at 1-128 rows,
so those run ATen's call). oneDNN's fp32 on Zen 4 never packs per call: whole training steps
with and without its per-call packs (interleaved, 20-30 rounds, batch 4 x 128 tokens) ran
0.87x (Llama), 0.87x (T5), 0.93x (GPT-2), 0.94x (BERT) as fast with them, though each packed
call alone had measured faster. Only graph inputs that are parameters or buffers
(AOTAutograd's static inputs) are packed: an activation's pack would serve one call.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Collection, Dict, Optional, Tuple

import torch

from . import cpu, weight_packs

aten = torch.ops.aten
_MAX_PACKS = 4  # packs kept per step (one per row count)
LABEL = "autofuse::packed_linear"  # the torch.profiler event around a call on a pack
_profiling = torch._C._autograd._profiler_enabled  # () -> whether a torch.profiler is recording


@dataclasses.dataclass(frozen=True)
class Library:
    """One packed-linear implementation."""

    pack: Optional[Callable[[torch.Tensor, int], torch.Tensor]]  # (weight [N, K], rows) -> the pack; None: the weight itself
    call: Callable[..., torch.Tensor]  # (x [M, K], pack, weight [N, K], bias or None, rows) -> [M, N]
    call_into: Optional[Callable[..., torch.Tensor]] = None  # call's arguments, then out [M, N]
    per_rows: bool = True  # a pack serves only the row count it was made for
    per_call_rows: Optional[int] = 512  # fewest rows where a pack made for one call pays; None: never
    few_rows: bool = False  # the runtime's few-row linear first where it pays (_few_rows)
    training: Optional["Library"] = None  # what a training graph packs with per call, where not this


def _rows_major(w: torch.Tensor, rows: int) -> torch.Tensor:
    """W [N, K] as a row-major [K, N] matrix (a copy unless it is one already)."""
    return w.t().contiguous()


# ATen's C++ callables: OpOverload.__call__ would add a Python frame to every call.
_MM, _ADDMM, _MM_OUT, _ADDMM_OUT = (op._op for op in (aten.mm.default, aten.addmm.default, aten.mm.out, aten.addmm.out))


def _mm(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor], rows: int) -> torch.Tensor:
    return _MM(x, pack) if b is None else _ADDMM(b, x, pack)


def _mm_into(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor], rows: int,
             out: torch.Tensor) -> torch.Tensor:
    return _MM_OUT(x, pack, out=out) if b is None else _ADDMM_OUT(b, x, pack, out=out)


def _mkl_pack(w: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.ops.mkl._mkl_reorder_linear_weight.default(w, rows)


def _mkl_linear(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor],
                rows: int) -> torch.Tensor:
    return torch.ops.mkl._mkl_linear.default(x, pack, w, b, rows)


def _onednn_pack(w: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.ops.mkldnn._reorder_linear_weight.default(w, rows)


def _onednn_linear(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor],
                   rows: int) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise.default(x, pack, b, "none", [], "")


def _bf16_plain(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor],
                rows: int) -> torch.Tensor:
    """bf16 on the plain weight: oneDNN's linear with a bias, ATen's mm on W's transposed view
    without (its oneDNN matmul ran 0.95-1.0x the linear's time at 24 and 96 rows of Llama's
    weights, Zen 4, 2 threads; with a bias ATen's addmm ran 1.05-1.1x)."""
    return _MM(x, w.t()) if b is None else _onednn_linear(x, pack, w, b, rows)


def _f32_rows_major(w: torch.Tensor, rows: int) -> torch.Tensor:
    """W [N, K] as a row-major fp32 [K, N] matrix."""
    return w.t().to(torch.float32, memory_format=torch.contiguous_format)


def _in_f32(call: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """A Library.call computing `call` on fp32 operands, its result rounded to x's dtype."""

    def run(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor], rows: int) -> torch.Tensor:
        return call(x.float(), pack, w, None if b is None else b.float(), rows).to(x.dtype)

    return run


def _f32_onednn_pack(w: torch.Tensor, rows: int) -> torch.Tensor:
    return _onednn_pack(w.float(), rows)


@functools.lru_cache(maxsize=None)
def _extension() -> Any:
    """The C++ extension, bound once: the per-call few-row path ran `from . import _C` twice a
    linear (the import machinery: about 17 us a decode token of 43 linears)."""
    from . import _C

    return _C


def _few_rows_pay(x: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor], kn: bool) -> bool:
    """Whether _few_rows takes x [M, K] times the weight w as stored: the runtime's few-row linear
    pays there (linear_rows_pays: few rows) and the rows of x and w are contiguous."""
    _C = _extension()
    rows, k = x.shape
    return (x.stride(1) == 1 and (rows == 1 or x.stride(0) >= k) and w.stride(1) == 1 and w.stride(0) >= w.shape[1]
            and (b is None or b.stride(0) == 1) and _C.linear_rows_pays(x.dtype == torch.bfloat16, kn, rows, k))


def _few_rows(x: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor], kn: bool) -> torch.Tensor:
    """x [M, K] times the weight w as stored (kn: [K, N], GPT-2's Conv1D; else [N, K], nn.Linear)
    plus b by the runtime's few-row linear (runtime/linear_rows.h), where _few_rows_pay."""
    _C = _extension()
    rows, k = x.shape
    n = w.shape[1] if kn else w.shape[0]
    y = torch.empty((rows, n), dtype=x.dtype)
    ptr = weight_packs.read_ptr
    _C.linear_rows(x.dtype == torch.bfloat16, kn, ptr(x), x.stride(0) if rows > 1 else k,
                   ptr(w), w.stride(0), 0 if b is None else ptr(b), y.data_ptr(), rows, n, k,
                   torch.get_num_threads())
    return y


@functools.lru_cache(maxsize=None)
def linear_rows_supported(dtype: torch.dtype) -> bool:
    """Whether the runtime's few-row linear runs `dtype` on this CPU."""
    return dtype in (torch.float32, torch.bfloat16) and _extension().linear_rows_supported(dtype == torch.bfloat16)


_MKL = Library(pack=_mkl_pack, call=_mkl_linear)
# The same with a decode step's few rows run by the runtime's own linear on the plain weight.
_MKL_ROWS = dataclasses.replace(_MKL, few_rows=True)
# oneDNN's linear on the weight as it is (no reorder, nothing kept: no second copy of the weight).
_ONEDNN_PLAIN = Library(pack=None, call=_onednn_linear, per_rows=False, per_call_rows=1)
# The same with a decode step's few rows run by the runtime's own linear where it pays.
_ROWS_PLAIN = dataclasses.replace(_ONEDNN_PLAIN, few_rows=True)
_BF16_ROWS_PLAIN = dataclasses.replace(_ONEDNN_PLAIN, call=_bf16_plain, few_rows=True)
_ONEDNN = Library(pack=_onednn_pack, call=_onednn_linear)
_ROWS_MAJOR = Library(pack=_rows_major, call=_mm, call_into=_mm_into, per_rows=False, per_call_rows=None)
_F32_ROWS_MAJOR = Library(pack=_f32_rows_major, call=_in_f32(_mm), per_rows=False, per_call_rows=1)
_F32_ONEDNN = Library(pack=_f32_onednn_pack, call=_in_f32(_onednn_linear), per_call_rows=None, training=_F32_ROWS_MAJOR)


@dataclasses.dataclass(frozen=True)
class Choice:
    """One row of CHOICES: `library` serves its dtype on CPUs where `when` holds."""

    cpu: str  # the CPUs, in words
    when: Callable[[Dict[str, Any]], bool]  # (the CPU's capabilities, cpu.capabilities) -> applies
    library: Library


# dtype -> its packed linears, the first whose condition holds on this CPU serving it (the module
# docstring says what each row was measured against).
CHOICES: Dict[torch.dtype, Tuple[Choice, ...]] = {
    torch.float32: (
        Choice("AVX-512, not Intel (MKL runs its AVX2 path there): oneDNN on the plain weight, few rows our own",
               lambda c: c["onednn"] and c["avx512_f"] and c["vendor"] != "GenuineIntel" and linear_rows_supported(torch.float32),
               _ROWS_PLAIN),
        Choice("AVX2 without AVX-512, not Intel (AMD Zen 3): oneDNN kept, MKL per call",
               lambda c: c["onednn"] and c["avx2"] and c["vendor"] != "GenuineIntel",
               dataclasses.replace(_ONEDNN, per_call_rows=None, training=_MKL)),
        Choice("AVX-512, Intel: MKL's kept packs, few rows our own",
               lambda c: c["mkl"] and c["avx512_f"] and linear_rows_supported(torch.float32), _MKL_ROWS),
        Choice("any with MKL", lambda c: c["mkl"], _MKL),
    ),
    torch.bfloat16: (
        Choice("without bf16 arithmetic, AVX2, not Intel (Zen 3): in fp32, oneDNN kept",
               lambda c: not cpu.bf16_arithmetic(c) and c["onednn"] and c["avx2"] and c["vendor"] != "GenuineIntel",
               _F32_ONEDNN),
        Choice("without bf16 arithmetic: computed in fp32", lambda c: not cpu.bf16_arithmetic(c), _F32_ROWS_MAJOR),
        Choice("AVX-512 BF16 (Zen 4; Intel with AMX): oneDNN on the plain weight, few rows our own",
               lambda c: c["onednn"] and c["avx512_bf16"] and linear_rows_supported(torch.bfloat16),
               _BF16_ROWS_PLAIN),
        Choice("any other with oneDNN (AMX where it has it)", lambda c: c["onednn"], _ROWS_MAJOR),
    ),
}


@functools.lru_cache(maxsize=None)
def libraries() -> Dict[torch.dtype, Library]:
    """dtype -> the packed linear this torch build and CPU have for it (CHOICES)."""
    caps = cpu.capabilities()
    libs: Dict[torch.dtype, Library] = {}
    for dtype, rows in CHOICES.items():
        chosen = next((c.library for c in rows if c.when(caps)), None)
        if chosen is not None:
            libs[dtype] = chosen
    return libs


def available() -> bool:
    """Whether this torch has a packed linear for some dtype."""
    return bool(libraries())


def _weight(mat2: Any, static: Collection[torch.fx.Node]) -> Optional[tuple]:
    """(the parameter node W, whether mat2 reads it transposed) when `mat2` is a static input
    read through 2-D transposes only: permute(W, [1, 0]) of an [out, in] W (nn.Linear), W itself
    ([in, out]: GPT-2's Conv1D; a backward's input gradient), or chains of both."""
    transposed = False
    while isinstance(mat2, torch.fx.Node) and mat2 not in static:
        if mat2.target != aten.permute.default or list(mat2.args[1]) not in ([1, 0], [-1, -2]):
            return None
        mat2, transposed = mat2.args[0], not transposed
    return (mat2, transposed) if isinstance(mat2, torch.fx.Node) else None


def packed_run(node: torch.fx.Node, slot_of: Callable[[torch.fx.Node], int], static: Collection[torch.fx.Node],
               plain: Callable[[list], torch.Tensor], plain_into: Optional[Callable[[list, Any], torch.Tensor]],
               keep: bool = False
               ) -> Optional[Tuple[Callable[[list], torch.Tensor], Optional[Callable[[list, Any], torch.Tensor]]]]:
    """(env -> the node's value, (env, out) -> that value in `out` or None) through its dtype's
    Library, for `addmm(bias[N], x, w)` (beta = alpha = 1) or `mm(x, w)` whose `w` is a static
    input read as a linear weight (_weight); None for any other node. `keep` (inference graphs):
    the pack is kept across calls while the weight still shares its storage with the clone
    taken when packing (weight_packs.KeptPacks; an inference-mode weight runs `plain`); otherwise each call with at least Library.per_call_rows rows packs the weight
    as it is now and the others run `plain` or `plain_into`, the ATen call."""
    if node.target == aten.addmm.default:
        if len(node.args) != 3 or any(node.kwargs.get(k, 1) != 1 for k in ("beta", "alpha")):
            return None
        bias, x, mat2 = node.args
    elif node.target == aten.mm.default:
        bias, (x, mat2) = None, node.args
    else:
        return None
    found = _weight(mat2, static)
    val = node.meta.get("val")
    lib = libraries().get(val.dtype) if isinstance(val, torch.Tensor) else None
    if found is None or lib is None:
        return None
    if not keep and lib.training is not None:
        lib = lib.training
    metas = [a.meta.get("val") for a in (x, mat2, bias) if isinstance(a, torch.fx.Node)]
    if any(not isinstance(m, torch.Tensor) or m.dtype != val.dtype for m in metas):
        return None
    if bias is not None and (not isinstance(bias, torch.fx.Node) or bias.meta["val"].dim() != 1):
        return None
    w_node, transposed = found
    w_slot, x_slot = slot_of(w_node), slot_of(x)
    b_slot = slot_of(bias) if bias is not None else None
    packs = weight_packs.KeptPacks(_MAX_PACKS)  # rows (None: any) -> the pack
    pack, per_rows, min_rows = lib.pack, lib.per_rows, lib.per_call_rows
    if not keep and min_rows is None:
        return None

    def operands(env: list) -> Optional[tuple]:
        """(x, the pack, W as [N, K], bias or None, rows), or None where this call runs ATen's."""
        w, x_t = env[w_slot], env[x_slot]
        rows = x_t.shape[0]
        weight = w if transposed else w.t()  # [N, K]
        if pack is None:
            p = weight
        elif not keep:
            if rows < min_rows:
                return None
            p = pack(weight, rows)
        else:
            p = packs.get(w, rows if per_rows else None, lambda src: pack(src if transposed else src.t(), rows))
            if p is None:
                return None
        return x_t, p, weight, env[b_slot] if b_slot is not None else None, rows

    few_rows = lib.few_rows and linear_rows_supported(val.dtype)
    most_rows = _extension().LINEAR_ROWS_MOST_ROWS if few_rows else 0  # checked before asking linear_rows_pays
    kn = not transposed  # the weight is stored [K, N]

    def run(env: list, call: Callable = lib.call) -> torch.Tensor:
        if few_rows:
            x_t = env[x_slot]
            if x_t.dim() == 2 and x_t.shape[0] <= most_rows:
                w, b = env[w_slot], env[b_slot] if b_slot is not None else None
                if _few_rows_pay(x_t, w, b, kn):
                    if _profiling():
                        with torch.profiler.record_function(LABEL):
                            return _few_rows(x_t, w, b, kn)
                    return _few_rows(x_t, w, b, kn)
        args = operands(env)
        if args is None:
            return plain(env)
        if _profiling():
            with torch.profiler.record_function(LABEL):
                return call(*args)
        return call(*args)

    def run_into(env: list, out: Any, call: Callable = lib.call_into) -> torch.Tensor:
        args = operands(env)
        if args is None:
            return plain_into(env, out)
        if _profiling():
            with torch.profiler.record_function(LABEL):
                return call(*args, out)
        return call(*args, out)

    return run, (run_into if lib.call_into is not None and plain_into is not None else None)
