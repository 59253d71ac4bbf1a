"""FX (ATen) graph -> Graph IR text (docs/ir.md), plus the eager meaning of every Graph IR node.

Every FX node becomes a Graph IR node of the same (sanitised) name: placeholders `input`
{index}, mapped ATen ops their registry kind (the core's ATen op table, aten_table.plan), views their view kind,
reductions a reduce_* kind {dims, keepdim} (also the values of a max/min.dim whose indices
nobody reads), torch.cat a `concat` {dim}, everything else `opaque` {target}. Implicit type
promotion and broadcasting become explicit `cast`, `broadcast` and `const` nodes (reduce and
concat operands are cast, never broadcast). Types (dtype, shape, strides, offset) come from
node.meta["val"]; SymInt sizes (dynamic shapes) become size expressions over the graph's
symbols, declared in the header with their hints (symbolic.py). A value whose sizes use
symbols the executor cannot read off the arguments (unbacked, data-dependent) stays opaque.

Layouts. An elementwise result takes the layout eager gives it (a transposed input gives a
transposed result): its Graph IR type carries those strides, the kernel stores through them and
the Schedule iterates in that memory order. Only dense layouts are fusible.

Besides the text, every Graph IR node keeps a closure `run(env)` that computes it eagerly from
its operands (env is indexed by node index); the executor uses these for the steps the C++
pipeline leaves to ATen.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import torch
import torch.fx

from . import aten_table, packed_linear
from .aten_table import Plan, bind_args
from .ir_nodes import (ArgRead, GNode, GraphRecords, TType, attr_record, dtype_name, graph_records, graph_text,
                       make_call, target_name)
from .symbolic import Size, SymbolReader, SymbolSources, py_sizes, simplify, to_size


@dataclasses.dataclass
class Translation:
    """The result of translate(): the Graph IR as the core takes it and the frontend's view of
    every node."""

    name: str
    graph: GraphRecords  # _C.compile's input (ir_nodes.graph_records)
    nodes: List[GNode]
    index: Dict[str, int]  # node name -> index
    placeholders: List[int]  # node index per FX placeholder, in order
    outputs: List[Tuple[bool, Any]]  # per FX output: (True, node index) or (False, a constant)
    fusible: int  # number of FX nodes mapped to a kernel-computable kind
    fx_ops: int  # number of FX call_function nodes (less getitems of values-only reductions)
    symbols: List[str]  # size symbols (header order); their values sit in env[-1] at run time
    read_symbols: Optional[SymbolReader]  # args -> symbol values
    absorbed: List[Tuple[str, str]]  # (ATen op, FX name) of expands their users broadcast

    @functools.cached_property
    def text(self) -> str:
        """The Graph IR text (printed by the core on first use: explain, dumps, tests)."""
        return graph_text(self.graph)


def tensor_type(val: Any, sources: SymbolSources, root_offset: Size = 0) -> Optional[TType]:
    """The TType of a (Fake)Tensor whose sizes are ints or expressions over bindable symbols and
    whose dtype the IR names; else None."""
    if not isinstance(val, torch.Tensor) or dtype_name(val.dtype) is None or val.layout != torch.strided:
        return None
    sizes = [to_size(d) for d in (*val.shape, *val.stride(), val.storage_offset())]
    if any(d is None or not sources.bindable(d) for d in sizes):
        return None
    rank = val.dim()
    return TType(val.dtype, tuple(sizes[:rank]), tuple(sizes[rank : 2 * rank]), simplify(sizes[-1] - root_offset))


def _const_value(value: Any, dtype: torch.dtype) -> Any:
    """The `value` attribute of a const of `dtype`: float for float dtypes, int otherwise; a
    Python int converted to an integer dtype as eager converts it (wrapped: uint8 + 300 adds
    44)."""
    if dtype.is_floating_point:
        return float(value)
    if dtype == torch.bool:
        return int(value)
    return int(torch.tensor(int(value), dtype=torch.int64).to(dtype))


# Ops whose f16/bf16 CPU kernels round a Python scalar operand to the tensor's dtype before
# computing in f32 (measured: x + 0.1 uses bf16(0.1); remainder and fmod too); mul and div use
# the scalar unrounded.
_ROUNDED_SCALAR_KINDS = {"add", "sub", "remainder", "fmod"}


def _eager_scalar(kind: str, value: Any, dtype: torch.dtype) -> Any:
    """The value eager computes with for a scalar operand of `kind` on a `dtype` tensor."""
    if kind in _ROUNDED_SCALAR_KINDS and dtype in (torch.float16, torch.bfloat16):
        return float(torch.tensor(float(value), dtype=dtype))
    return value


def _offset(val: Any) -> Size:
    off = to_size(val.storage_offset()) if isinstance(val, torch.Tensor) else 0
    return 0 if off is None else off


class _Builder:
    """Accumulates Graph IR nodes (unique names) and the FX -> Graph IR value maps."""

    def __init__(self, sources: SymbolSources):
        self.sources = sources
        self.hints = sources.hints()
        self.symbols = sorted(sources.sources, key=lambda s: s.name)
        self.symbol_hints = [(str(x), self.hints[x]) for x in self.symbols]  # the IR header's
        self.nodes: List[GNode] = []
        self.index: Dict[str, int] = {}
        self.fx_slot: Dict[torch.fx.Node, int] = {}  # FX value -> its node in logical order
        self.expand_src: Dict[torch.fx.Node, torch.fx.Node] = {}  # expand -> its source
        self.root_off: Dict[int, Size] = {}  # node -> FX storage offset of the root it aliases
        self.consts: Dict[Tuple[str, str], int] = {}
        self.values_of: Dict[torch.fx.Node, int] = {}  # values-only max/min.dim -> its reduce
        self.packable: Set[torch.fx.Node] = set()  # parameters whose linear layers run packed
        self.keep_packs = False  # their packs are kept across calls (inference)

    def add(self, node: GNode, root_off: Size = 0) -> int:
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in node.name) or "v"
        name, k = base, 1
        while name in self.index:
            name, k = f"{base}_{k}", k + 1
        node.name = name
        i = len(self.nodes)
        self.index[name] = i
        self.nodes.append(node)
        self.root_off[i] = root_off
        return i

    def type_of(self, i: int) -> Optional[TType]:
        return self.nodes[i].type

    def tensor_type(self, val: Any, root_offset: Size = 0) -> Optional[TType]:
        return tensor_type(val, self.sources, root_offset)

    def shape_of(self, fx: torch.fx.Node) -> Tuple[Size, ...]:
        return tuple(to_size(d) for d in fx.meta["val"].shape)

    def sizes_fn(self, sizes: Sequence[Size]) -> Callable[[list], Tuple[int, ...]]:
        """env -> the values of `sizes` (symbol values are in env[-1])."""
        if all(isinstance(d, int) for d in sizes):
            const = tuple(sizes)
            return lambda env: const
        f = py_sizes(list(sizes), [str(x) for x in self.symbols])
        return lambda env: f(env[-1])

    def reads(self, slots: Optional[Dict[torch.fx.Node, int]] = None) -> Callable[[torch.fx.Node], ArgRead]:
        """make_call's slot_of: a SymInt argument over bindable symbols (a size in a view's
        shape, full's size, arange's end) is computed from the symbol values, so no step has to
        produce it first; any other node is read from `slots` (default: its logical slot)."""
        table = self.fx_slot if slots is None else slots

        def slot_of(a: torch.fx.Node) -> ArgRead:
            val = a.meta.get("val")
            e = to_size(val) if isinstance(val, torch.SymInt) else None
            if e is not None and self.sources.bindable(e):
                if isinstance(e, int):
                    return lambda env, v=e: v
                f = self.sizes_fn([e])
                return lambda env: f(env)[0]
            return table[a]

        return slot_of

    # Values in logical order ---------------------------------------------------------------------

    def logical(self, fx: torch.fx.Node) -> int:
        """The node holding FX value `fx` in its eager shape and layout."""
        i = self.fx_slot.get(fx)
        if i is not None:
            return i
        # An expand whose users all declined to absorb it: materialize it.
        src = self.logical(self.expand_src[fx])
        shape = self.shape_of(fx)
        run = lambda env, s=src, sh=self.sizes_fn(shape): env[s].expand(sh(env))  # noqa: E731
        tt = TType.contiguous(self.type_of(src).dtype, shape)
        i = self.add(GNode(fx.name, "broadcast", [src], {}, tt, run, fx, target_name(fx.target)))
        self.fx_slot[fx] = i
        return i

    # Synthesized nodes -------------------------------------------------------------------------

    def const(self, value: Any, dtype: torch.dtype, origin: str) -> int:
        v = _const_value(value, dtype)
        key = (dtype_name(dtype), repr(v))
        if key not in self.consts:
            run = lambda env, v=v, d=dtype: torch.scalar_tensor(v, dtype=d)  # noqa: E731
            node = GNode("c", "const", [], {"value": v}, TType(dtype, (), ()), run, None, origin)
            self.consts[key] = self.add(node)
        return self.consts[key]

    def cast(self, src: int, dtype: torch.dtype, origin: str) -> int:
        n = self.nodes[src]
        if n.type.dtype == dtype:
            return src
        if n.kind == "const":
            return self.const(n.attrs["value"], dtype, origin)
        run = lambda env, s=src, d=dtype: env[s].to(d)  # noqa: E731
        tt = TType.contiguous(dtype, n.type.shape)
        return self.add(GNode(f"{n.name}_{dtype_name(dtype)}", "cast", [src], {}, tt, run, None, origin))

    def broadcast(self, src: int, shape: Tuple[Size, ...], origin: str) -> int:
        n = self.nodes[src]
        if n.type.shape == shape or n.kind == "const":
            return src
        run = lambda env, s=src, sh=self.sizes_fn(shape): env[s].expand(sh(env))  # noqa: E731
        tt = TType.contiguous(n.type.dtype, shape)
        return self.add(GNode(f"{n.name}_b", "broadcast", [src], {}, tt, run, None, origin))

    def operand(self, fx: torch.fx.Node, dtype: torch.dtype, shape: Tuple[Size, ...], origin: str) -> int:
        """FX value `fx` as an operand of an elementwise op of `shape`: cast to `dtype` and
        broadcast to `shape`."""
        if fx in self.expand_src and fx not in self.fx_slot:
            return self.operand(self.expand_src[fx], dtype, shape, origin)
        return self.broadcast(self.cast(self.logical(fx), dtype, origin), shape, origin)


def translate(gm: torch.fx.GraphModule, name: str, packed_weights: Sequence[int] = (),
              keep_packs: bool = False) -> Translation:
    """Translates `gm` (an ATen FX graph with meta vals) into a Graph IR graph named `name`.

    An op the core declines as its kind (a broken Graph IR rule, a dtype the registry's row
    lacks, an empty reduction: _candidate_reason) becomes opaque with the core's reason. `packed_weights`: the positions of the inputs (parameters) whose linear layers run on
    packed weights (packed_linear.py), kept across calls if `keep_packs` (an inference graph).
    """
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    sources = SymbolSources(phs)
    b = _Builder(sources)
    b.packable = {phs[i] for i in packed_weights if i < len(phs)}
    b.keep_packs = keep_packs
    placeholders: List[int] = []
    outputs: List[Tuple[bool, Any]] = []
    fusible = fx_ops = 0
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        if node.op == "placeholder":
            tt = b.tensor_type(val, _offset(val))
            pos = len(placeholders)
            gnode = GNode(node.name, "input", [], {"index": pos}, tt, _never, node, "input")
            i = b.add(gnode, _offset(val))
            b.fx_slot[node] = i
            placeholders.append(i)
        elif node.op == "output":
            out = node.args[0]
            for v in out if isinstance(out, (list, tuple)) else [out]:
                outputs.append((True, b.logical(v)) if isinstance(v, torch.fx.Node) else (False, v))
        elif node.op == "call_function":
            fx_ops += 1
            origin = target_name(node.target)
            done = (
                _try_alias(b, node)
                or _try_view(b, node, val, origin)
                or _try_values_item(b, node)
                or _try_reduce(b, node, val, origin)
                or _try_concat(b, node, val, origin)
                or _try_elementwise(b, node, val, origin)
            )
            if done is None:
                why = f"not an elementwise, broadcast, reduce or concat op; runs as ATen {origin}"
                _opaque(b, node, val, origin, why)
            elif done == "fused":
                fusible += 1
            elif done == "alias":  # tuple indexing into a values-only reduction: not an op
                fx_ops -= 1
        else:
            _opaque(b, node, val, node.op, f"{node.op} node")
    returns: List[int] = []
    for is_node, v in outputs:
        if is_node and v not in returns:
            returns.append(v)
    symbols = b.symbol_hints
    graph = graph_records(name, b.nodes, returns, symbols)
    reader = sources.reader(b.symbols) if b.symbols else None
    absorbed = [(target_name(n.target), n.name) for n in b.expand_src if n not in b.fx_slot]
    return Translation(
        name, graph, b.nodes, b.index, placeholders, outputs, fusible, fx_ops,
        [n for n, _ in symbols], reader, absorbed,
    )


def _never(env: list) -> Any:
    raise RuntimeError("graph inputs are bound by the executor")


def _opaque(b: _Builder, node: torch.fx.Node, val: Any, origin: str, reason: str) -> str:
    operands: List[int] = []
    for a in node.all_input_nodes:
        s = b.logical(a)
        if s not in operands:
            operands.append(s)
    if node.op == "get_attr":
        run = lambda env, n=node: _get_attr(n)  # noqa: E731
    else:
        run = make_call(node, b.reads())
    out_op = aten_table.OUT_VARIANTS.get(node.target)
    run_into = make_call(node, b.reads(), out_op) if out_op is not None else None
    packed = (packed_linear.packed_run(node, lambda a: b.fx_slot[a], b.packable, run, run_into, b.keep_packs)
              if b.packable else None)
    if packed is not None:
        run, run_into = packed
    tt = b.tensor_type(val, _offset(val))
    gnode = GNode(node.name, "opaque", operands, {"target": origin}, tt, run, node, origin, reason)
    if tt is not None:
        gnode.run_into = run_into
    b.fx_slot[node] = b.add(gnode, _offset(val))
    return "opaque"


def _get_attr(node: torch.fx.Node) -> Any:
    obj = node.graph.owning_module
    for part in str(node.target).split("."):
        obj = getattr(obj, part)
    return obj


def _try_view(b: _Builder, node: torch.fx.Node, val: Any, origin: str) -> Optional[str]:
    if aten_table.family(node.target) != "view":
        return None
    args = bind_args(node)
    src_fx = args.get("self")
    if not isinstance(src_fx, torch.fx.Node) or not isinstance(src_fx.meta.get("val"), torch.Tensor):
        return None
    if b.tensor_type(val) is None or b.tensor_type(src_fx.meta["val"]) is None:
        return _opaque(b, node, val, origin, "view of a tensor of unsupported type or sizes")
    if node.target is torch.ops.aten.expand.default and _all_users_elementwise(node):
        # A value-semantics expand feeding only elementwise ops: its users broadcast the source.
        b.expand_src[node] = src_fx
        return "view"
    plan = aten_table.plan(node, args, val)
    if isinstance(plan, str):
        return _opaque(b, node, val, origin, plan)
    attrs = dict(plan.attrs, shape=list(val.shape)) if plan.result_shape else plan.attrs
    for key, v in list(attrs.items()):
        if isinstance(v, list):
            attrs[key] = [to_size(x) for x in v]
            if any(x is None or not b.sources.bindable(x) for x in attrs[key]):
                return _opaque(b, node, val, origin, f"view attribute {key} has unsupported sizes")
    src = b.logical(src_fx)
    tt = b.tensor_type(val, b.root_off[src])
    run = make_call(node, b.reads())
    b.fx_slot[node] = b.add(GNode(node.name, plan.kind, [src], attrs, tt, run, node, origin), b.root_off[src])
    return "view"


def _all_users_elementwise(node: torch.fx.Node) -> bool:
    users = list(node.users)
    return bool(users) and all(
        u.op == "call_function" and aten_table.family(u.target) == "elementwise" for u in users
    )


def _checked_plan(
    b: _Builder, node: torch.fx.Node, val: Any, out_val: Any, origin: str, broadcasts: bool = False
) -> Tuple[Optional[Plan], Optional[TType]]:
    """(plan, result type) of `node` by the core's ATen op table; (None, None) after making the
    node opaque with the reason when the result has no IR type, the table says no or the core declines the plan
    (_candidate_reason). `out_val` is the meta value of the result the plan computes; `broadcasts`:
    the plan's tensor operands are broadcast to the result's shape (elementwise ops)."""
    out_t = b.tensor_type(out_val)
    plan = None
    bad = "result has a dtype or sizes the IR lacks" if out_t is None else None
    if not bad:
        plan = aten_table.plan(node, bind_args(node), out_val)
        bad = plan if isinstance(plan, str) else _candidate_reason(b, node, plan, out_t, broadcasts)
    if bad:
        _opaque(b, node, val, origin, bad)
        return None, None
    return plan, out_t


def _candidate_reason(b: _Builder, node: torch.fx.Node, plan: Plan, out_t: TType, broadcasts: bool) -> Optional[str]:
    """Why the core (fusion::candidate_reason) declines `plan` as node `node`'s Graph IR kind
    with result type `out_t`, or None. It is asked with the op after what the builder would emit
    for its operands: each tensor an input of its type, cast to the dtype the plan reads it as
    and, when the op broadcasts, broadcast to the result's shape; each scalar a const."""
    from . import _C

    if plan.kind == "const":
        return None
    records: List[Tuple[Any, ...]] = []
    index: Dict[Any, int] = {}

    def emit(key: Any, name: str, kind: str, operands: List[int], attrs: Dict[str, Any], t: TType) -> int:
        if key not in index:
            index[key] = len(records)
            records.append((name, kind, operands, attrs, t.record()))
        return index[key]

    operands: List[int] = []
    for op in plan.operands:
        dtype = dtype_name(op.dtype)
        if dtype is None:
            return f"operand dtype {op.dtype} is not in the IR"
        if not isinstance(op.value, torch.fx.Node):
            v = _const_value(op.value, op.dtype)
            operands.append(emit((dtype, repr(v)), f"c{len(records)}", "const", [], {"value": v}, TType(op.dtype, (), ())))
            continue
        src = op.value
        while broadcasts and src in b.expand_src and src not in b.fx_slot:  # as _Builder.operand
            src = b.expand_src[src]
        t = b.tensor_type(src.meta.get("val"))
        if t is None:
            return f"operand %{src.name} has a dtype or sizes the IR lacks"
        inputs = sum(1 for r in records if r[1] == "input")
        i = emit(src, src.name, "input", [], {"index": inputs}, t)
        if t.dtype != op.dtype:
            i = emit((src, dtype), f"{src.name}_{dtype}", "cast", [i], {}, TType.contiguous(op.dtype, t.shape))
        if broadcasts and t.shape != out_t.shape:
            shape = out_t.shape
            i = emit((src, dtype, shape), f"{src.name}_b", "broadcast", [i], {}, TType.contiguous(op.dtype, shape))
        operands.append(i)
    attrs = {k: attr_record(v) for k, v in plan.attrs.items()}
    records.append((node.name, plan.kind, operands, attrs, out_t.record()))
    return _C.candidate_reason(b.symbol_hints, records)


def _try_elementwise(b: _Builder, node: torch.fx.Node, val: Any, origin: str) -> Optional[str]:
    if aten_table.family(node.target) != "elementwise":
        return None
    plan, out_t = _checked_plan(b, node, val, val, origin, broadcasts=True)
    if plan is None:
        return "opaque"
    if plan.kind == "const":
        v = _const_value(plan.operands[0].value, out_t.dtype)
        run = make_call(node, b.reads())
        b.fx_slot[node] = b.add(GNode(node.name, "const", [], {"value": v}, out_t, run, node, origin))
        return "view"  # not counted as fusible work

    operands: List[int] = []
    slot_of_fx: Dict[torch.fx.Node, int] = {}
    for op in plan.operands:
        if isinstance(op.value, torch.fx.Node):
            s = b.operand(op.value, op.dtype, out_t.shape, origin)
            slot_of_fx.setdefault(op.value, s)
        else:
            s = b.const(_eager_scalar(plan.kind, op.value, op.dtype), op.dtype, origin)
        operands.append(s)
    # Eagerly the op runs on its (cast, broadcast) operands; scalars stay literal.
    run = make_call(node, b.reads(slot_of_fx))
    b.fx_slot[node] = b.add(GNode(node.name, plan.kind, operands, dict(plan.attrs), out_t, run, node, origin))
    return "fused"


def _try_alias(b: _Builder, node: torch.fx.Node) -> Optional[str]:
    """aten.alias / aten.detach read only by ops (not returned): their source itself, so a
    kernel reading it reads what the source's kernel computes (relu's saved output)."""
    if node.target not in (torch.ops.aten.alias.default, torch.ops.aten.detach.default):
        return None
    src = node.args[0] if node.args else None
    if not isinstance(src, torch.fx.Node) or not all(u.op == "call_function" for u in node.users):
        return None
    b.fx_slot[node] = b.logical(src)
    return "alias"


def _try_values_item(b: _Builder, node: torch.fx.Node) -> Optional[str]:
    """getitem(max/min.dim, 0) of a values-only reduction: the reduce node itself."""
    if node.target is not operator.getitem or node.args[0] not in b.values_of:
        return None
    b.fx_slot[node] = b.values_of[node.args[0]]
    return "alias"


def _values_only(node: torch.fx.Node) -> bool:
    """True when every user of the (values, indices) node `node` reads only the values."""
    users = list(node.users)
    return bool(users) and all(
        u.op == "call_function" and u.target is operator.getitem and u.args[1] == 0 for u in users
    )


def _try_reduce(b: _Builder, node: torch.fx.Node, val: Any, origin: str) -> Optional[str]:
    """A reduction (the table's reduce family, or its values_only one when the indices are
    unused) as one reduce_* node over its (cast) operand."""
    fam = aten_table.family(node.target)
    if fam not in ("reduce", "values_only"):
        return None
    values_only = fam == "values_only"
    out_val = val
    if values_only:
        if not _values_only(node):
            return _opaque(b, node, val, origin, f"the indices of {origin} are used (only values are fused)")
        out_val = val[0]
    plan, out_t = _checked_plan(b, node, val, out_val, origin)
    if plan is None:
        return "opaque"
    (op,) = plan.operands
    src = b.cast(b.logical(op.value), op.dtype, origin)
    call = make_call(node, b.reads({op.value: src}))  # eagerly: the ATen op on the cast operand
    run = (lambda env: call(env)[0]) if values_only else call
    i = b.add(GNode(node.name, plan.kind, [src], dict(plan.attrs), out_t, run, node, origin))
    if values_only:
        b.values_of[node] = i
    else:
        b.fx_slot[node] = i
    return "fused"


def _try_concat(b: _Builder, node: torch.fx.Node, val: Any, origin: str) -> Optional[str]:
    """torch.cat (the table's concat family) as one concat node {dim} over its inputs, each cast
    to the result dtype (once per distinct input)."""
    if aten_table.family(node.target) != "concat":
        return None
    plan, out_t = _checked_plan(b, node, val, val, origin)
    if plan is None:
        return "opaque"
    cast_of: Dict[torch.fx.Node, int] = {}
    for op in plan.operands:
        if op.value not in cast_of:
            cast_of[op.value] = b.cast(b.logical(op.value), op.dtype, origin)
    operands = [cast_of[op.value] for op in plan.operands]
    # Eagerly: torch.cat of the (cast) operands (it reads no other slot: the inputs left out are
    # empty along dim, and the executor only computes a step's operands before it).
    dim = plan.attrs["dim"]
    run = lambda env, ops=tuple(operands): torch.cat([env[s] for s in ops], dim)  # noqa: E731
    gnode = GNode(node.name, "concat", operands, dict(plan.attrs), out_t, run, node, origin)
    b.fx_slot[node] = b.add(gnode)
    return "fused"
