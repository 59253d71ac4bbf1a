"""The ATen -> Graph IR op table: which ATen overloads map to which registry kind, and how.

Each row is a *rule*: a function of the FX node's bound arguments that returns a `Plan` (the
Graph IR kind, its operands and the dtype every operand must be cast to, its attributes) or a
string saying why the op cannot be a fusible node (it then becomes `opaque`). View ops have
their own small table (`VIEW_RULES`). fx_to_graph.py applies the plans; this file only decides.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Union

import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

aten = torch.ops.aten
prims = torch.ops.prims


@dataclasses.dataclass
class Operand:
    """One operand of a planned node: an FX node (a tensor) or a Python scalar, and the dtype the
    kernel reads it as (a cast is inserted when the tensor's dtype differs; a scalar becomes a
    `const` of that dtype)."""

    value: Any  # torch.fx.Node or a Python number
    dtype: torch.dtype


@dataclasses.dataclass
class Plan:
    """A fusible Graph IR node for one FX node: `kind` over `operands`, with `attrs`."""

    kind: str
    operands: List[Operand]
    attrs: Dict[str, Any] = dataclasses.field(default_factory=dict)


Rule = Callable[[Dict[str, Any], torch.Tensor], Union[Plan, str]]


def meta_of(value: Any) -> Any:
    """The FakeTensor (or Python value) an FX argument stands for."""
    if isinstance(value, torch.fx.Node):
        return value.meta.get("val")
    return value


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float)) and not isinstance(value, torch.SymInt)


def _check_operand(value: Any) -> Optional[str]:
    """None when `value` can be a kernel operand (a tensor node or a plain number)."""
    if isinstance(value, torch.fx.Node):
        if isinstance(meta_of(value), torch.Tensor):
            return None
        return f"operand %{value.name} is not a tensor"
    if _is_scalar(value):
        return None
    return f"operand {value!r} is not a tensor or a number"


def _promoted(*values: Any) -> torch.dtype:
    """torch's result dtype of the default elementwise promotion over `values`."""
    metas = [meta_of(v) for v in values]
    return elementwise_dtypes(*metas, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]


def _plan(kind: str, values: List[Any], dtypes: List[torch.dtype], **attrs: Any) -> Union[Plan, str]:
    for v in values:
        bad = _check_operand(v)
        if bad:
            return bad
    return Plan(kind, [Operand(v, d) for v, d in zip(values, dtypes)], attrs)


def unary(kind: str, **attrs: Any) -> Rule:
    """kind(self): the operand is read as the result dtype (int -> float ops cast first)."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        return _plan(kind, [a["self"]], [out.dtype], **attrs)

    return rule


def binary(kind: str, lhs: str = "self", rhs: str = "other") -> Rule:
    """kind(lhs, rhs): both operands read as the result dtype (torch's type promotion)."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        if a.get("alpha", 1) != 1:
            return f"alpha={a['alpha']} is not supported"
        return _plan(kind, [a[lhs], a[rhs]], [out.dtype, out.dtype])

    return rule


def compare(kind: str) -> Rule:
    """kind(self, other) -> bool: operands promoted to their common dtype, then compared."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        common = _promoted(a["self"], a["other"])
        return _plan(kind, [a["self"], a["other"]], [common, common])

    return rule


def classify(kind: str) -> Rule:
    """isnan/isinf: the operand keeps its dtype."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        m = meta_of(a["self"])
        dtype = m.dtype if isinstance(m, torch.Tensor) else out.dtype
        return _plan(kind, [a["self"]], [dtype])

    return rule


def logical(kind: str, arity: int) -> Rule:
    """logical_*: operands read as bool (x != 0), result bool."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        values = [a["self"]] if arity == 1 else [a["self"], a["other"]]
        if out.dtype != torch.bool:
            return f"{kind} with a {out.dtype} result"
        return _plan(kind, values, [torch.bool] * arity)

    return rule


def bitwise(kind: str, arity: int, lhs: str = "self", rhs: str = "other") -> Rule:
    """bitwise_* and shifts on integer or bool tensors: operands read as the result dtype."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        values = [a[lhs]] if arity == 1 else [a[lhs], a[rhs]]
        if out.dtype.is_floating_point or out.dtype.is_complex:
            return f"{kind} on {out.dtype}"
        return _plan(kind, values, [out.dtype] * arity)

    return rule


def div_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """div.Tensor/Scalar and their rounding_mode variants."""
    mode = a.get("rounding_mode")
    kind = {None: "div", "floor": "div_floor", "trunc": "div_trunc"}.get(mode)
    if kind is None:
        return f"rounding_mode={mode!r}"
    return _plan(kind, [a["self"], a["other"]], [out.dtype, out.dtype])


def where_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """where(cond, self, other): cond read as bool, the branches as the result dtype."""
    if out.dtype.is_complex:
        return f"where on {out.dtype}"
    return _plan("where", [a["condition"], a["self"], a["other"]], [torch.bool, out.dtype, out.dtype])


def clamp_rule(lo_key: str, hi_key: str) -> Rule:
    """clamp / clamp_min / clamp_max / hardtanh by which bounds are present."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        lo, hi = a.get(lo_key), a.get(hi_key)
        d = out.dtype
        if lo is not None and hi is not None:
            return _plan("clamp", [a["self"], lo, hi], [d, d, d])
        if lo is not None:
            return _plan("clamp_min", [a["self"], lo], [d, d])
        if hi is not None:
            return _plan("clamp_max", [a["self"], hi], [d, d])
        return "clamp without bounds"

    return rule


def round_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    if a.get("decimals", 0) != 0:
        return f"round with decimals={a['decimals']}"
    return _plan("round", [a["self"]], [out.dtype])


def gelu_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    approximate = a.get("approximate", "none")
    if approximate not in ("none", "tanh"):
        return f"gelu approximate={approximate!r}"
    attrs = {"approximate": approximate} if approximate != "none" else {}
    return _plan("gelu", [a["self"]], [out.dtype], **attrs)


def to_copy_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """_to_copy with only a dtype change (same device, strided, default or preserved format)."""
    src = meta_of(a["self"])
    if not isinstance(src, torch.Tensor):
        return "operand is not a tensor"
    if a.get("layout") not in (None, torch.strided):
        return f"layout {a['layout']}"
    if a.get("device") is not None and torch.device(a["device"]) != src.device:
        return f"device change to {a['device']}"
    if a.get("memory_format") not in (None, torch.preserve_format):
        return f"memory_format {a['memory_format']}"
    return _plan("cast", [a["self"]], [src.dtype])


def clone_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """clone (e.g. the `.contiguous()` of a decomposed layer_norm/softmax on a transposed input,
    a convolution's input made channels-last) is a same-dtype cast: a copy into the result's
    layout (its meta strides, whichever memory_format gave them), fusible with its neighbours."""
    src = meta_of(a["self"])
    if not isinstance(src, torch.Tensor):
        return "operand is not a tensor"
    return _plan("cast", [a["self"]], [src.dtype])


def convert_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    src = meta_of(a["a"])
    if not isinstance(src, torch.Tensor):
        return "operand is not a tensor"
    return _plan("cast", [a["a"]], [src.dtype])


def scalar_tensor_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """scalar_tensor(v) -> const v (rank 0)."""
    if not _is_scalar(a["s"]):
        return "symbolic scalar"
    return Plan("const", [], {"value": a["s"]})


def full_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """full(size, v) -> const v, broadcast to `size` (a rank-0 full is the const itself)."""
    if not _is_scalar(a["fill_value"]):
        return "symbolic fill value"
    if a.get("layout") not in (None, torch.strided):
        return f"layout {a['layout']}"
    if out.dim() == 0:
        return Plan("const", [], {"value": a["fill_value"]})
    return Plan("broadcast", [Operand(a["fill_value"], out.dtype)], {})


def _float_ops(*names: str) -> Dict[Any, Rule]:
    return {getattr(aten, n).default: unary(n) for n in names}


# The elementwise table: ATen overload -> rule.
ELEMENTWISE_RULES: Dict[Any, Rule] = {
    **_float_ops(
        "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sigmoid", "tanh",
        "erf", "sin", "cos", "relu", "silu", "neg", "abs", "sign", "floor", "ceil", "trunc",
    ),
    aten.round.default: round_rule,
    aten.round.decimals: round_rule,
    aten.gelu.default: gelu_rule,
    aten.special_expit.default: unary("sigmoid"),
    aten.add.Tensor: binary("add"),
    aten.add.Scalar: binary("add"),
    aten.sub.Tensor: binary("sub"),
    aten.sub.Scalar: binary("sub"),
    aten.mul.Tensor: binary("mul"),
    aten.mul.Scalar: binary("mul"),
    aten.div.Tensor: div_rule,
    aten.div.Scalar: div_rule,
    aten.div.Tensor_mode: div_rule,
    aten.div.Scalar_mode: div_rule,
    aten.pow.Tensor_Scalar: binary("pow", "self", "exponent"),
    aten.pow.Tensor_Tensor: binary("pow", "self", "exponent"),
    aten.pow.Scalar: binary("pow", "self", "exponent"),
    aten.maximum.default: binary("maximum"),
    aten.minimum.default: binary("minimum"),
    aten.clamp.default: clamp_rule("min", "max"),
    aten.clamp.Tensor: clamp_rule("min", "max"),
    aten.clamp_min.default: clamp_rule("min", "__none__"),
    aten.clamp_min.Tensor: clamp_rule("min", "__none__"),
    aten.clamp_max.default: clamp_rule("__none__", "max"),
    aten.clamp_max.Tensor: clamp_rule("__none__", "max"),
    aten.hardtanh.default: clamp_rule("min_val", "max_val"),
    aten.where.self: where_rule,
    aten.isnan.default: classify("isnan"),
    aten.isinf.default: classify("isinf"),
    aten.logical_not.default: logical("logical_not", 1),
    aten.logical_and.default: logical("logical_and", 2),
    aten.logical_or.default: logical("logical_or", 2),
    aten.logical_xor.default: logical("logical_xor", 2),
    aten.bitwise_not.default: bitwise("bitwise_not", 1),
    aten.remainder.Tensor: binary("remainder"),
    aten.remainder.Scalar: binary("remainder"),
    aten.remainder.Scalar_Tensor: binary("remainder", "self", "other"),
    aten.fmod.Tensor: binary("fmod"),
    aten.fmod.Scalar: binary("fmod"),
    aten._to_copy.default: to_copy_rule,
    aten.clone.default: clone_rule,
    prims.convert_element_type.default: convert_rule,
    aten.scalar_tensor.default: scalar_tensor_rule,
    aten.full.default: full_rule,
}
for _name in ("and", "or", "xor"):
    for _overload in ("Tensor", "Scalar", "Scalar_Tensor"):
        ELEMENTWISE_RULES[getattr(getattr(aten, f"bitwise_{_name}"), _overload)] = bitwise(f"bitwise_{_name}", 2)
for _name, _dunder in (("left_shift", "__lshift__"), ("right_shift", "__rshift__")):
    for _overload in ("Tensor", "Tensor_Scalar", "Scalar_Tensor"):
        ELEMENTWISE_RULES[getattr(getattr(aten, f"bitwise_{_name}"), _overload)] = bitwise(f"bitwise_{_name}", 2)
    for _overload in ("Tensor", "Scalar"):
        ELEMENTWISE_RULES[getattr(getattr(aten, _dunder), _overload)] = bitwise(f"bitwise_{_name}", 2)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    ELEMENTWISE_RULES[getattr(aten, _name).Tensor] = compare(_name)
    ELEMENTWISE_RULES[getattr(aten, _name).Scalar] = compare(_name)

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


# Reductions: ATen overload -> rule giving a Plan with kind reduce_*, one operand and attrs
# dims (sorted, unique, non-negative) and keepdim (docs: the reduce contract). The operand is
# read as the result dtype (sum/mean/prod with dtype= cast first, as eager); any/all read bool.
_FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def reduce_dims(dim: Any, rank: int, empty_is_all: bool = True) -> Union[List[int], str]:
    """The sorted reduced dims of a reduction over `dim` (an int, a list, or None for all dims;
    [] means all dims too when `empty_is_all`, as sum/mean/amax read it, and no dims for
    any/all.dims) of a rank-`rank` operand, or why the IR cannot express them."""
    if dim is None:
        dims = list(range(rank))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim) or (list(range(rank)) if empty_is_all else [])
    if rank == 0:
        return "reduction of a rank-0 tensor"
    if not dims:
        return "reduction over no dims"
    if any(not isinstance(d, int) or not -rank <= d < rank for d in dims):
        return f"reduction dims {dims} out of range for rank {rank}"
    out = sorted({_norm_dim(d, rank) for d in dims})
    if len(out) != len(dims):
        return f"repeated reduction dims {dims}"
    return out


def reduce_rule(kind: str, dim_key: Optional[str] = "dim", bool_operand: bool = False) -> Rule:
    """kind(self) over args[dim_key] (None: over all dims) with args["keepdim"] (default 0).

    Numeric reductions read the operand as the result dtype (which is `dtype=` when given);
    `bool_operand` (any/all) reads it as bool (x != 0), from a float or bool source only."""

    def rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
        src = meta_of(a["self"])
        if not isinstance(src, torch.Tensor):
            return "operand is not a tensor"
        dims = reduce_dims(a.get(dim_key) if dim_key else None, src.dim(), empty_is_all=not bool_operand)
        if isinstance(dims, str):
            return dims
        if bool_operand:
            if src.dtype.is_complex:
                return f"{kind} of a {src.dtype} tensor"
            dtype = torch.bool
        else:
            dtype = out.dtype
        if kind == "reduce_prod" and dtype in (torch.float16, torch.bfloat16):
            # Kernels accumulate in f32; eager multiplies f16/bf16 in the input dtype, which
            # differs beyond the low-precision tolerances.
            return f"reduce_prod on {out.dtype} (eager accumulates it in {out.dtype}, kernels in f32)"
        return _plan(kind, [a["self"]], [dtype], dims=dims, keepdim=int(bool(a.get("keepdim", False))))

    return rule


REDUCE_RULES: Dict[Any, Rule] = {
    aten.sum.dim_IntList: reduce_rule("reduce_sum"),
    aten.sum.default: reduce_rule("reduce_sum", None),
    aten.mean.dim: reduce_rule("reduce_mean"),
    aten.mean.default: reduce_rule("reduce_mean", None),
    aten.prod.dim_int: reduce_rule("reduce_prod"),
    aten.prod.default: reduce_rule("reduce_prod", None),
    aten.amax.default: reduce_rule("reduce_max"),
    aten.amin.default: reduce_rule("reduce_min"),
    aten.max.default: reduce_rule("reduce_max", None),
    aten.min.default: reduce_rule("reduce_min", None),
    aten.any.dim: reduce_rule("reduce_any", bool_operand=True),
    aten.any.dims: reduce_rule("reduce_any", bool_operand=True),
    aten.any.default: reduce_rule("reduce_any", None, bool_operand=True),
    aten.all.dim: reduce_rule("reduce_all", bool_operand=True),
    aten.all.dims: reduce_rule("reduce_all", bool_operand=True),
    aten.all.default: reduce_rule("reduce_all", None, bool_operand=True),
}

# (values, indices) reductions: max.dim / min.dim whose indices nobody reads are a reduce of
# the values (fx_to_graph applies these only then; the rule sees the values' meta as `out`).
VALUES_ONLY_RULES: Dict[Any, Rule] = {
    aten.max.dim: reduce_rule("reduce_max"),
    aten.min.dim: reduce_rule("reduce_min"),
}


# Concatenation: ATen overload -> rule giving a Plan with kind concat, one operand per input
# (each read as the result dtype: torch.cat promotes) and attr dim (non-negative).
def _is_zero(size: Any) -> bool:
    # Compared as an int (a SymInt comparison would add a guard; symbolic sizes are never 0).
    return isinstance(size, int) and size == 0


def concat_rule(a: Dict[str, Any], out: torch.Tensor) -> Union[Plan, str]:
    """cat(tensors, dim): the inputs one after another along `dim`. Inputs of extent 0 along
    `dim` add nothing and are left out, and so are torch's legacy 1-D empty tensors of any
    rank's cat (eager skips them: a KV cache starts as one); another rank than the result's,
    or all inputs empty, stay ATen."""
    tensors, rank = a["tensors"], out.dim()
    dim = a.get("dim", 0)
    if rank == 0 or not isinstance(dim, int) or not -rank <= dim < rank:
        return f"cat dim {dim!r} is out of range for a rank-{rank} result"
    d = _norm_dim(dim, rank)
    kept: List[Any] = []
    for v in tensors:
        src = meta_of(v)
        if not isinstance(v, torch.fx.Node) or not isinstance(src, torch.Tensor):
            name = f"%{v.name}" if isinstance(v, torch.fx.Node) else repr(v)
            return f"cat input {name} is not a tensor node"
        if src.dim() == 1 and _is_zero(src.shape[0]):
            continue
        if src.dim() != rank:
            return (f"cat input %{v.name} of shape {list(src.shape)} has rank {src.dim()}, the result "
                    f"rank {rank} (a legacy 1-D empty tensor)")
        if not _is_zero(src.shape[d]):
            kept.append(v)
    if not kept:
        return f"cat of inputs that are all empty along dim {d}"
    return Plan("concat", [Operand(v, out.dtype) for v in kept], {"dim": d})


# aten.concat / aten.concatenate decompose into aten.cat before the backend sees them; they are
# listed for graphs traced without that decomposition.
CONCAT_RULES: Dict[Any, Rule] = {
    aten.cat.default: concat_rule,
    aten.concat.default: concat_rule,
    aten.concatenate.default: concat_rule,
}


# View ops: ATen overload -> (Graph IR view kind, attrs from (args, operand meta, out meta)).
def _norm_dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


def _permute_attrs(a, src, out):
    return {"dims": [_norm_dim(d, src.dim()) for d in a["dims"]]}


def _transpose_attrs(a, src, out):
    dims = list(range(src.dim()))
    d0, d1 = _norm_dim(a["dim0"], src.dim()), _norm_dim(a["dim1"], src.dim())
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return {"dims": dims}


def _t_attrs(a, src, out):
    return {"dims": list(range(src.dim()))[::-1]}


def _shape_attrs(a, src, out):
    return {"shape": list(out.shape)}


def _unsqueeze_attrs(a, src, out):
    return {"dim": _norm_dim(a["dim"], out.dim())}


def _is_one(size) -> bool:
    # Compared as an int (a SymInt comparison would add a guard to the finished graph).
    return isinstance(size, int) and size == 1


def _squeeze_dim_attrs(a, src, out):
    if src.dim() == 0:
        return None
    d = _norm_dim(a["dim"], src.dim())
    if not _is_one(src.shape[d]):
        return None  # a no-op squeeze: left to ATen (an alias)
    return {"dim": d}


def _squeeze_dims_attrs(a, src, out):
    """squeeze.dims as the reshape to its result (BatchNorm's saved mean drops N, H and W)."""
    if not any(_is_one(src.shape[_norm_dim(d, src.dim())]) for d in a["dim"]):
        return None  # a no-op squeeze: left to ATen (an alias)
    return {"shape": list(out.shape)}


def _slice_attrs(a, src, out):
    rank = src.dim()
    d = _norm_dim(a["dim"], rank)
    size = src.shape[d]
    if not isinstance(size, int):
        return None
    start = a.get("start")
    end = a.get("end")
    step = a.get("step", 1)
    start = 0 if start is None else start
    end = size if end is None else end
    if not all(isinstance(v, int) for v in (start, end, step)):
        return None
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    return {"dim": d, "start": start, "end": end, "step": step}


VIEW_RULES: Dict[Any, tuple] = {
    aten.view.default: ("reshape", _shape_attrs),
    aten._unsafe_view.default: ("reshape", _shape_attrs),
    aten.reshape.default: ("reshape", _shape_attrs),
    aten.squeeze.default: ("reshape", _shape_attrs),
    aten.permute.default: ("permute", _permute_attrs),
    aten.transpose.int: ("permute", _transpose_attrs),
    aten.t.default: ("permute", _t_attrs),
    aten.unsqueeze.default: ("unsqueeze", _unsqueeze_attrs),
    aten.squeeze.dim: ("squeeze", _squeeze_dim_attrs),
    aten.squeeze.dims: ("reshape", _squeeze_dims_attrs),
    aten.slice.Tensor: ("slice", _slice_attrs),
    aten.expand.default: ("expand", _shape_attrs),
}


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
