"""Linear layers on weights packed once, not on every call.

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
Which library serves a dtype is a table (CHOICES: the first row whose CPU condition holds). A pack
serves the row count it was made for, so dynamic shapes keep one per count (Library.per_rows).

bf16 depends on the CPU too. By default ATen's own matmul (oneDNN, AMX where the CPU has it)
runs on W copied once to [in, out] row-major, the layout oneDNN reorders into its AMX blocks
fastest: the models' bf16 linears with 2304-3072 output features run 1.1-1.25x faster, the rest
within noise, and BERT/ViT bf16 forwards 1.07-1.09x (2 threads, interleaved in one process).
There oneDNN's linear on a reordered weight (mkldnn._reorder_linear_weight, _linear_pointwise)
was 1.16-1.41x ATen's at 1 thread but 0.55-0.68x at 2 threads for 768 output features, which
made whole bf16 models slower at torch's default thread count. With AVX-512 BF16 but no AMX
(AMD Zen 4) it is the other way round: the [in, out] copy runs 1.02-1.09x slower than ATen's
call on the transposed view, and oneDNN's reordered linear 0.96-0.99x its time at 512 rows and
0.68-0.76x at 4-8 rows (2 threads, interleaved medians; the bf16 models' linears measured
1.04-1.08x slower with the copy).
GPT-2's Conv1D weights are [in, out] already and are not copied. In training graphs, where every
step repacks, bf16 stays on ATen's call (BERT/Llama bf16 steps measured 0.98-1.0x with packing).
fp16 stays on ATen's call (no AMX for it on these CPUs: the copy measured within noise).

Packs are kept per step, keyed by W's storage pointer, layout and version counter: an optimizer
step, `load_state_dict` or any in-place write through the parameter (or a `detach()` of it)
bumps the version, and the next call repacks (a training step repacks once). Writes that keep
the version are not seen: through `param.data` (a tensor with its own version counter), a NumPy
view, or torch.distributed's sharding (FSDP's all-gather into the unsharded parameter runs under
_unsafe_preserve_version_counter). So a torch.distributed process never packs
(sees_every_write), and CompilerConfig(pack_weights=False) or AUTOFUSE_PACK_WEIGHTS=0 turns
packing off for a model whose weights are written through `.data`. Checking the contents
instead costs more than packing saves (comparing a 768x3072 fp32 weight: 1.8 ms; the packed
linear at 32 rows saves 0.3 ms). Only graph inputs that are parameters or buffers
(AOTAutograd's static inputs) are packed: an activation would be repacked on every call.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, Collection, Dict, Optional, Tuple

import torch

aten = torch.ops.aten
_MAX_PACKS = 4  # packs kept per step (one per row count)
LABEL = "autofuse::packed_linear"  # the torch.profiler event around a call on a pack
_profiling = torch._C._autograd._profiler_enabled  # () -> whether a torch.profiler is recording


@dataclasses.dataclass(frozen=True)
class Library:
    """One packed-linear implementation."""

    pack: Callable[[torch.Tensor, int], torch.Tensor]  # (weight [N, K], rows) -> the pack
    call: Callable[..., torch.Tensor]  # (x [M, K], pack, weight [N, K], bias or None, rows) -> [M, N]
    call_into: Optional[Callable[..., torch.Tensor]] = None  # call's arguments, then out [M, N]
    per_rows: bool = True  # a pack serves only the row count it was made for
    in_training: bool = True  # packing pays even when every training step changes the weight


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


_MKL = Library(pack=_mkl_pack, call=_mkl_linear)
_ONEDNN = Library(pack=_onednn_pack, call=_onednn_linear)
_ROWS_MAJOR = Library(pack=_rows_major, call=_mm, call_into=_mm_into, per_rows=False, in_training=False)


@dataclasses.dataclass(frozen=True)
class Choice:
    """One row of CHOICES: `library` serves its dtype on CPUs where `when` holds."""

    cpu: str  # the CPUs, in words
    when: Callable[[Dict[str, Any]], bool]  # (the CPU's capabilities, _capabilities) -> applies
    library: Library


# dtype -> its packed linears, the first whose condition holds on this CPU serving it (the module
# docstring says what each row was measured against).
CHOICES: Dict[torch.dtype, Tuple[Choice, ...]] = {
    torch.float32: (
        Choice("AVX-512, not Intel (MKL runs its AVX2 path there)",
               lambda c: c["onednn"] and c["avx512_f"] and c["vendor"] != "GenuineIntel", _ONEDNN),
        Choice("any with MKL", lambda c: c["mkl"], _MKL),
    ),
    torch.bfloat16: (
        Choice("AVX-512 BF16 without AMX (Zen 4)",
               lambda c: c["onednn"] and c["avx512_bf16"] and not c["amx_bf16"],
               dataclasses.replace(_ONEDNN, in_training=False)),
        Choice("any other with oneDNN (AMX where it has it)", lambda c: c["onednn"], _ROWS_MAJOR),
    ),
}


def _cpu_vendor() -> str:
    """The CPU vendor id ("GenuineIntel", "AuthenticAMD"); "" where /proc/cpuinfo lacks it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _capabilities() -> Dict[str, Any]:
    """What CHOICES' conditions read: torch.cpu.get_capabilities() (False for a feature it does
    not list), the vendor, and whether this torch has MKL's and oneDNN's packed linears."""
    get = getattr(torch.cpu, "get_capabilities", None)
    caps = collections.defaultdict(bool, get() if get is not None else {})
    caps["vendor"] = _cpu_vendor()
    caps["mkl"] = torch.backends.mkl.is_available() and hasattr(torch.ops.mkl, "_mkl_linear")
    caps["onednn"] = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    return caps


@functools.lru_cache(maxsize=None)
def libraries() -> Dict[torch.dtype, Library]:
    """dtype -> the packed linear this torch build and CPU have for it (CHOICES)."""
    caps = _capabilities()
    libs: Dict[torch.dtype, Library] = {}
    for dtype, rows in CHOICES.items():
        chosen = next((c.library for c in rows if c.when(caps)), None)
        if chosen is not None:
            libs[dtype] = chosen
    return libs


def available() -> bool:
    """Whether this torch has a packed linear for some dtype."""
    return bool(libraries())


def sees_every_write() -> bool:
    """Whether a parameter's version counter moves with every write to it in this process: not
    once torch.distributed is initialized (FSDP and other sharding write unsharded parameters
    keeping their versions)."""
    dist = torch.distributed
    return not (dist.is_available() and dist.is_initialized())


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
               plain: Callable[[list], torch.Tensor], plain_into: Optional[Callable[[list, Any], torch.Tensor]]
               ) -> Optional[Tuple[Callable[[list], torch.Tensor], Optional[Callable[[list, Any], torch.Tensor]]]]:
    """(env -> the node's value, (env, out) -> that value in `out` or None) through its dtype's
    Library on a cached pack of its weight, for `addmm(bias[N], x, w)` (beta = alpha = 1) or
    `mm(x, w)` whose `w` is a static input read as a linear weight (_weight); None for any
    other node. A weight without a version counter (an inference-mode tensor) runs `plain` or
    `plain_into`, the ATen call."""
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
    metas = [a.meta.get("val") for a in (x, mat2, bias) if isinstance(a, torch.fx.Node)]
    if any(not isinstance(m, torch.Tensor) or m.dtype != val.dtype for m in metas):
        return None
    if bias is not None and (not isinstance(bias, torch.fx.Node) or bias.meta["val"].dim() != 1):
        return None
    w_node, transposed = found
    w_slot, x_slot = slot_of(w_node), slot_of(x)
    b_slot = slot_of(bias) if bias is not None else None
    packs: Dict[tuple, torch.Tensor] = {}  # (pointer, version, shape, strides, rows) -> pack
    pack, per_rows = lib.pack, lib.per_rows

    def operands(env: list) -> tuple:
        """(x, the pack, W as [N, K], bias or None, rows)."""
        w, x_t = env[w_slot], env[x_slot]
        rows = x_t.shape[0]
        key = (w.data_ptr(), w._version, w.shape, w.stride(), rows if per_rows else None)
        weight = w if transposed else w.t()  # [N, K]
        p = packs.get(key)
        if p is None:
            if len(packs) >= _MAX_PACKS:
                packs.clear()
            p = packs[key] = pack(weight, rows)
        return x_t, p, weight, env[b_slot] if b_slot is not None else None, rows

    def run(env: list, call: Callable = lib.call) -> torch.Tensor:
        if env[w_slot].is_inference():
            return plain(env)
        if _profiling():
            with torch.profiler.record_function(LABEL):
                return call(*operands(env))
        return call(*operands(env))

    def run_into(env: list, out: Any, call: Callable = lib.call_into) -> torch.Tensor:
        if env[w_slot].is_inference():
            return plain_into(env, out)
        if _profiling():
            with torch.profiler.record_function(LABEL):
                return call(*operands(env), out)
        return call(*operands(env), out)

    return run, (run_into if lib.call_into is not None and plain_into is not None else None)
