"""The frontend's side of the ATen op table, and what ATen runs for the executor.

The table itself is the core's (src/aten/op_table.h): which ATen overloads a Graph IR node
computes and how (its kind, its operands and the dtype each is read as, its attributes), or why
none does. Here an FX call is described to it (`plan`: arguments bound to the op's schema, the
result's dtype and sizes) and the answer read back as a `Plan` over FX values; `family` is the
question FX rewrites ask ("does a kernel compute this op?"). Then the ATen side: the ops kept out
of the decomposition table, those run whole, their out= variants and cheaper eager equivalents.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Dict, List, Optional, Union

import torch

aten = torch.ops.aten
prims = torch.ops.prims


@dataclasses.dataclass
class Operand:
    """One operand of a planned node: an FX node (a tensor) or a Python scalar, and the dtype the
    kernel reads it as (a cast is inserted when the tensor's dtype differs; a scalar becomes a
    `const` of that dtype; None for a view's source)."""

    value: Any  # torch.fx.Node or a Python number
    dtype: Optional[torch.dtype]


@dataclasses.dataclass
class Plan:
    """A fusible Graph IR node for one FX node: `kind` over `operands`, with `attrs`; a view
    with `result_shape` takes its result's sizes as its `shape` attribute."""

    kind: str
    operands: List[Operand]
    attrs: Dict[str, Any] = dataclasses.field(default_factory=dict)
    result_shape: bool = False


@functools.lru_cache(maxsize=None)
def family(target: Any) -> str:
    """How the core's table maps FX target `target`: "elementwise", "reduce", "values_only"
    (max/min.dim whose indices nobody reads), "concat", "view", or "" (it runs as ATen)."""
    from . import _C

    return _C.aten_family(str(target)) if isinstance(target, torch._ops.OpOverload) else ""


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


_NUMBER_TYPES = {bool: "bool", int: "int", float: "float", torch.SymBool: "bool", torch.SymInt: "int",
                 torch.SymFloat: "float"}


def _encode(v: Any) -> Any:
    """An argument as the core's table takes it (python/bindings/aten.cpp)."""
    if isinstance(v, torch.fx.Node):
        m = v.meta.get("val")
        if isinstance(m, torch.Tensor):
            return ("t", v.name, _dtype_name(m.dtype), [str(d) for d in m.shape], str(m.device))
        return ("n", v.name, _NUMBER_TYPES.get(type(m), ""))
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    return ("o", str(v), repr(v))


def plan(node: torch.fx.Node, args: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """The core's plan of FX call `node` (its arguments `args`, bind_args) whose result is
    `out` (the values of a values-only reduction), or why no Graph IR node computes it."""
    from . import _C

    r = _C.aten_plan(str(node.target), {k: _encode(v) for k, v in args.items()}, _dtype_name(out.dtype),
                     [str(d) for d in out.shape], _dtype_name(torch.get_default_dtype()))
    if isinstance(r, str):
        return r
    kind, operands, attrs, result_shape = r
    ops = [Operand(args[a] if i < 0 else args[a][i], getattr(torch, d) if d else None) for a, i, d in operands]
    return Plan(kind, ops, attrs, result_shape)


# The ops the backend keeps out of the decomposition table because a rule in this file handles
# them whole (decomposed, they would become several ops or lose their single-kind identity).
NATIVE_OPS = [
    aten.silu.default,
    aten.gelu.default,
    aten.sigmoid.default,
    aten.special_expit.default,
    aten.tanh.default,
    aten.hardtanh.default,
    aten.clamp_min.default,
    aten.clamp_max.default,
    aten.clamp_min.Tensor,
    aten.clamp_max.Tensor,
    aten.clamp.Tensor,
    aten.special_erf.default,
    aten.special_exp2.default,
    aten.special_expm1.default,
    aten.special_log1p.default,
    aten.special_round.default,
    # Reductions with their own reduce kind (the core table rewrites all() as not(any(not x))).
    aten.all.default,
    aten.all.dim,
    aten.all.dims,
]

# Composite ops the backend never decomposes: ATen's own kernel for the whole op beats any
# split into registry ops and ATen steps. The CPU flash-attention kernel streams blocks of the
# scores through its caches (decomposed, attention materializes the score matrix, a softmax
# kernel and permute copies around two bmm calls), and torch's decomposition of it returns the
# attention weights where its backward expects the logsumexp (wrong gradients); embedding's backward accumulates into a
# zeroed table in place (decomposed, a functional index_put clones the whole table first: a
# 50257 x 768 vocabulary costs 154 MB of copy per step).
KEPT_WHOLE = [
    aten._scaled_dot_product_flash_attention_for_cpu.default,
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default,
    aten.embedding_dense_backward.default,
]

def embedding_dense_backward_into(grad_output: torch.Tensor, indices: torch.Tensor, num_weights: int,
                                  padding_idx: int, scale_grad_by_freq: bool, *, out: torch.Tensor) -> torch.Tensor:
    """embedding_dense_backward written into `out` ([num_weights, D], contiguous): zeroed, then
    each row of grad_output added to its index's row in index order, skipping padding_idx, as
    ATen's CPU kernel adds them. (ATen's own .out overload computes into a fresh table and
    copies it.) scale_grad_by_freq runs ATen's op."""
    if scale_grad_by_freq:
        return out.copy_(aten.embedding_dense_backward.default(grad_output, indices, num_weights, padding_idx, True))
    idx = indices.reshape(-1)
    rows = grad_output.reshape(idx.numel(), out.shape[1])
    if padding_idx >= 0:
        keep = idx != padding_idx
        idx, rows = idx[keep], rows[keep]
    return out.zero_().index_add_(0, idx, rows)


def convert_element_type(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """prims.convert_element_type run eagerly: ATen's _to_copy, the same copy (strides kept).
    The prim's Python implementation costs about 100 us per call; a dynamic-shape Llama graph
    runs 13 of them (Dynamo's unspecialized floats, integer positions), 1.3 ms per forward."""
    return aten._to_copy.default(x, dtype=dtype)


# Ops an eager step runs through another call with the same result that costs less.
EAGER_EQUIVALENTS = {
    prims.convert_element_type.default: convert_element_type,
}


# ATen ops the executor runs with an `out=` tensor it allocates itself, pooled across calls
# when large (executor._OutputPool), as it does for kernel outputs: the matmul family, whose
# results are the largest buffers ATen makes in a fused model, and the embedding gradient (a
# Llama training step's fills: 28.8 ms with a fresh 32000 x 512 table, 9.8 ms with a pooled
# one). Functional -> out overload running the same kernel, or a function doing its work in out.
OUT_VARIANTS = {
    aten.mm.default: aten.mm.out,
    aten.addmm.default: aten.addmm.out,
    aten.bmm.default: aten.bmm.out,
    aten.baddbmm.default: aten.baddbmm.out,
    aten.embedding_dense_backward.default: embedding_dense_backward_into,
}

# Core ATen ops outside the core decomposition table whose decompositions are chains of
# registry ops (so they fuse instead of staying ATen).
EXTRA_DECOMPOSED = [
    aten.elu.default,
    aten.leaky_relu.default,
]


def bind_args(node: torch.fx.Node) -> Optional[Dict[str, Any]]:
    """The FX node's arguments by schema name (defaults filled in); None without a schema."""
    target = node.target
    schema = getattr(target, "_schema", None)
    if schema is None:
        return None
    bound: Dict[str, Any] = {}
    params = schema.arguments
    for p, v in zip(params, node.args):
        bound[p.name] = v
    for p in params[len(node.args):]:
        if p.name in node.kwargs:
            bound[p.name] = node.kwargs[p.name]
        elif p.has_default_value():
            bound[p.name] = p.default_value
    return bound
