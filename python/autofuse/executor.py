"""Runs a compiled program: generated kernels for the fused steps, ATen for everything else.

At build time the steps of `Program.steps()` become a flat list of small tuples over integer
value slots (Graph IR node indices), with every shape, stride, dtype and closure precomputed and
each value freed after its last use. A view an eager step needs is one `as_strided` of the
tensor it aliases (a kernel reads views through their root pointer and never needs one). Per
call the executor binds the inputs, checks cheaply that they have the dtypes and strides the
kernels were compiled for (else it runs the graph eagerly, warning once), reads the size
symbols (dynamic shapes) off the arguments, then runs the steps. Large kernel outputs come from
per-output pools (_OutputPool); so do the results of the ATen matmuls, which run through their
out= overloads (aten_table.OUT_VARIANTS).
The last env slot holds the symbol values, which size-dependent closures read. The list is
printed once as a straight-line function (executor_codegen.py): no per-step dispatch per call.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .fx_to_graph import Translation
from .ir_nodes import GNode, TType
from .symbolic import Size, check, to_size
from .executor_codegen import EAGER as _EAGER
from .executor_codegen import KERNEL as _KERNEL
from .executor_codegen import SIZE as _SIZE
from .executor_codegen import VIEW as _VIEW
from .executor_codegen import print_run
from .executor_codegen import reinterpret as _alias

log = logging.getLogger("autofuse")

_POOL_MIN_BYTES = 1 << 20  # kernel outputs this large are recycled (see _OutputPool)
_profiling = torch._C._autograd._profiler_enabled  # () -> whether a torch.profiler is recording
_use_count = torch._C._storage_Use_Count  # (StorageImpl address) -> its C++ use count


def _storage_holders(t: torch.Tensor) -> Tuple[int, int, bool]:
    """(C++ uses, Python references, whether shared with other processes) of the storage of
    `t`, as this function sees them.

    A storage has one Python object (`t.untyped_storage()` returns the same one each time),
    and torch 2.13 keeps it alive, holding one use of the storage, as long as anything else
    uses the storage (PyObject preservation, c10/util/intrusive_ptr.h). So a user's
    `st = out.untyped_storage()` adds no use, only a Python reference: both counts are
    needed. A storage moved to shared memory (`share_memory_()`, or sent to another process
    by torch.multiprocessing) may be held by another process, which no count shows.
    `_FREE_STORAGE` is what this returns when one tensor alone holds the storage."""
    s = t.untyped_storage()
    return _use_count(s._cdata), sys.getrefcount(s), s.is_shared()


def _calibrate() -> Tuple[int, int, bool]:
    t = torch.empty(1)
    t.untyped_storage()  # the state of a pool buffer after its first check: the object kept
    return _storage_holders(t)


_FREE_STORAGE = _calibrate()  # (2, 3, False) on torch 2.13 / CPython 3.11


class _OutputPool:
    """Recycles a large kernel output buffer once nobody but the pool holds it.

    A fresh multi-MB CPU allocation costs a page fault per 4 KiB on first touch, often more than
    the kernel itself (a 65 MB embedding gradient: about 19 ms of faults per step). The pool
    keeps the last two buffers of one output slot and hands out aliases of them (a new tensor
    on the buffer's storage, so a result the pool still holds is never the caller's tensor
    object: autograd steals an unshared gradient instead of copying it). A buffer is handed out
    again only when no tensor but the pool's own uses its storage (no user variable, no view, no
    autograd saved tensor, no gradient), no Python object refers to it (the user's
    UntypedStorage or TypedStorage) and it was never moved to shared memory (another process
    may map it): _storage_holders. So reuse is never observable, except through a weakref to
    the storage object, which does not count as a holder.
    """

    __slots__ = ("shape", "strides", "dtype", "buffers", "min_numel")

    def __init__(self, shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: torch.dtype):
        self.shape, self.strides, self.dtype = shape, strides, dtype
        self.buffers: List[torch.Tensor] = []
        self.min_numel = _POOL_MIN_BYTES // dtype.itemsize  # smaller dynamic outputs: not pooled

    def take(self) -> torch.Tensor:
        for t in self.buffers:
            if _storage_holders(t) == _FREE_STORAGE:  # the pool's tensor alone
                return _alias(t, self.shape, self.strides, 0)
        t = torch.empty_strided(self.shape, self.strides, dtype=self.dtype)
        self.buffers = [t] + self.buffers[:1]
        return _alias(t, self.shape, self.strides, 0)

    def take_sized(self, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> torch.Tensor:
        """take() for an output whose sizes depend on the call (dynamic shapes), pooled while
        consecutive calls keep the same sizes. The run function asks only for outputs of at
        least `min_numel` elements."""
        if shape != self.shape or strides != self.strides:
            self.shape, self.strides, self.buffers = shape, strides, []
        return self.take()


_NOT_COMPUTED = {"input", "opaque"}  # kinds whose eager value already has eager's layout
_VIEW_KINDS = {"reshape", "permute", "unsqueeze", "squeeze", "slice", "expand"}


def _launch_errors() -> Tuple[type, ...]:
    """The exception types a kernel launch raises (the extension's CompileError)."""
    from . import _C

    return (_C.CompileError, _C.ToolchainError)


class ExecutorError(RuntimeError):
    """The program's steps do not describe a runnable schedule (a bug; the caller falls back)."""


class Executor:
    """Callable running one compiled graph; `fallback` is the eager graph module."""

    def __init__(self, tr: Translation, program: Any, fallback: Callable[..., Any], name: str,
                 device: torch.device = torch.device("cpu")):
        self.name = name
        self.program = program
        self.device = device  # where the graph's tensors live: cpu, or cuda (launch_cuda)
        self.fallback = fallback
        self.nodes = tr.nodes
        self.symbols = tr.symbols
        self._read_symbols = tr.read_symbols
        self.kernel_steps = 0
        self._warned = False
        self._broken = False
        self._runtime_errors = _launch_errors()
        self._template: List[Any] = [None] * (len(tr.nodes) + 1)  # + the symbol values
        self._inputs = list(tr.placeholders)
        self._checks = self._input_checks(tr)
        self._checked_inputs = {tr.placeholders[pos] for pos, _, strides in self._checks if strides is not None}
        self._outputs = tr.outputs
        self.kernel_labels: Dict[int, str] = {}  # kernel -> its torch.profiler label (_build)
        self._steps = self._build(tr, program.steps())
        self.source = ""  # the run function's text (executor_codegen.py)
        self._profiled_fn: Optional[Callable] = None  # the run function with profiler labels
        self._label = f"autofuse::{name}"
        self.regenerate()

    # Build -----------------------------------------------------------------------------------

    def _input_checks(self, tr: Translation) -> List[Tuple[int, torch.dtype, Any]]:
        """(arg position, dtype, strides or None when symbolic) per tensor input."""
        checks = []
        for pos, slot in enumerate(tr.placeholders):
            t = tr.nodes[slot].type
            if t is not None:
                static = all(isinstance(s, int) for s in t.strides)
                checks.append((pos, t.dtype, tuple(t.strides) if static else None))
        return checks

    def _build(self, tr: Translation, steps: Sequence[Any]) -> List[tuple]:
        """The plan of `steps` (the program's _C.Step records, whose value ids are slots)."""
        from ._C import StepKind

        nodes = tr.nodes
        # Steps name values by stable id: the frontend's node order (graph::Node::id).
        unknown = {i for st in steps for i in (*st.ops, *st.inputs, *st.outputs) if not 0 <= i < len(nodes)}
        if unknown:
            raise ExecutorError(f"the program's steps name value ids {sorted(unknown)[:8]} the translation "
                                f"lacks ({len(nodes)} nodes)")
        available = set(tr.placeholders)
        plan: List[tuple] = []
        reads: List[List[int]] = []  # per plan entry, the slots it reads
        kernels = [st for st in steps if st.kind == StepKind.kernel]
        self._kernel_outs = {s for st in kernels for s in st.outputs}

        for i, n in enumerate(nodes):
            if n.kind == "const":
                self._template[i] = n.run([])
                available.add(i)

        def ensure(slot: int, stack: Tuple[int, ...] = ()) -> None:
            """Appends eager steps computing `slot` (and what it needs) unless available."""
            if slot in available:
                return
            if slot in stack:
                raise ExecutorError(f"cycle at %{nodes[slot].name}")
            step = self._view_step(slot)
            operands = [step[2]] if step is not None else nodes[slot].operands
            for op in operands:
                ensure(op, stack + (slot,))
            plan.append(step if step is not None else self._eager_step(slot))
            reads.append(list(operands))
            available.add(slot)

        for st in steps:
            name, k, in_slots, out_slots = st.name, st.kernel, list(st.inputs), list(st.outputs)
            if st.kind != StepKind.kernel:
                # Views are aliases without effects: computed when an eager step or the
                # outputs need them (a kernel reads through their root instead).
                for s in in_slots + list(st.ops) + out_slots:
                    if nodes[s].kind not in _VIEW_KINDS:
                        ensure(s)
                continue
            # A view read by a kernel is not evaluated: the kernel gets its root's pointer plus
            # the view's offset (its strides are compiled into the kernel).
            in_refs = [self._view_root(s) for s in in_slots]
            for r, _ in in_refs:
                ensure(r)
            n_in, n_out = self.program.kernel_io(k)
            if n_in != len(in_slots) or n_out != len(out_slots):
                raise ExecutorError(f"kernel {name}: {n_in}/{n_out} args vs step {len(in_slots)}/{len(out_slots)}")
            syms_of = tuple(self.program.kernel_symbols(k))
            missing = [x for x in syms_of if x not in self.symbols]
            if missing:
                raise ExecutorError(f"kernel {name} takes size symbol(s) the graph lacks: {missing}")
            outs = []
            for s in out_slots:
                t = nodes[s].type
                if t is None:
                    raise ExecutorError(f"kernel {name} writes %{nodes[s].name} of unknown type")
                outs.append(self._kernel_out(s, t))
            plan.append((_KERNEL, k, tuple(in_refs), tuple(outs), syms_of, ()))
            self.kernel_labels[k] = self._kernel_label(k, st.ops)
            reads.append([r for r, _ in in_refs])
            available.update(out_slots)
            self.kernel_steps += 1
        out_slots = [v for is_node, v in self._outputs if is_node]
        for s in out_slots:
            ensure(s)
        return self._with_frees(plan, reads, set(out_slots) | set(self._inputs))

    def _kernel_label(self, k: int, op_slots: Sequence[int]) -> str:
        """`autofuse::g0.k3 native_layer_norm+add`: the graph, the kernel and the ATen ops it
        computes (each FX node's original op before decomposition, in graph order), the name
        torch.profiler shows for the kernel's launches."""
        names: List[str] = []
        for s in op_slots:
            fx = self.nodes[s].fx
            if fx is None or fx.op != "call_function":
                continue
            op = fx.meta.get("original_aten") or fx.target
            name = getattr(op, "__name__", str(op)).split(".")[0]
            if name not in names:
                names.append(name)
        return f"autofuse::{self.name}.k{k} {'+'.join(names)}"

    def _kernel_out(self, slot: int, t: TType) -> tuple:
        """(slot, shape, strides, dtype, pool or None) of a kernel output (or an eager op's out=
        tensor): on the CPU, static outputs of 1 MiB or more, and every dynamic one, get a pool
        (_OutputPool.take / take_sized); on a GPU none does (its caching allocator recycles)."""
        if self.device.type != "cpu":
            return (slot, tuple(t.shape), tuple(t.strides), t.dtype, None)
        if not t.is_static():
            return (slot, tuple(t.shape), tuple(t.strides), t.dtype, _OutputPool((), (), t.dtype))
        nbytes = t.dtype.itemsize
        for d in t.shape:
            nbytes *= d
        pool = _OutputPool(tuple(t.shape), tuple(t.strides), t.dtype) if nbytes >= _POOL_MIN_BYTES else None
        return (slot, tuple(t.shape), tuple(t.strides), t.dtype, pool)

    def _view_root(self, slot: int) -> Tuple[int, int]:
        """(root slot, byte offset) of a kernel input: views resolve to the tensor they alias."""
        n = self.nodes[slot]
        if n.kind not in _VIEW_KINDS or n.type is None or not isinstance(n.type.offset, int):
            return slot, 0
        root = slot
        while self.nodes[root].kind in _VIEW_KINDS:
            root = self.nodes[root].operands[0]
        if self.nodes[root].type is None:
            return slot, 0
        return root, n.type.offset * n.type.dtype.itemsize

    def _view_step(self, slot: int) -> Optional[tuple]:
        """A view (or chain of views) computed as one `as_strided` of the tensor it aliases, or
        None when the types say too little. One call instead of one dispatched ATen op per view.
        Roots whose layout this executor guarantees (kernel outputs, inputs whose strides the
        entry check compares, eager results it relayouts) need no check; for any other root the
        run function compares its strides with its type's and, on a mismatch (never expected:
        the types come from eager's own meta), runs the chain of ATen view ops instead."""
        n = self.nodes[slot]
        if n.kind not in _VIEW_KINDS or n.type is None:
            return None
        chain = []
        root = slot
        while self.nodes[root].kind in _VIEW_KINDS:
            if self.nodes[root].type is None:
                return None
            chain.append((root, self.nodes[root].run))
            root = self.nodes[root].operands[0]
        root_t = self.nodes[root].type
        if root_t is None:
            return None
        known = root in self._kernel_outs or root in self._checked_inputs or self._guard(root) is not None
        view = (tuple(n.type.shape), tuple(n.type.strides), n.type.offset)
        root_strides = None if known else tuple(root_t.strides)
        return (_VIEW, slot, root, view, root_strides, tuple(reversed(chain)), ())

    def _guard(self, slot: int) -> Optional[tuple]:
        """(shape, strides, dtype) an eager step's result is relayouted to when it differs
        (ATen may pick other strides than the meta kernel did), or None when not checked."""
        n = self.nodes[slot]
        if n.kind in _NOT_COMPUTED or n.kind in _VIEW_KINDS or n.type is None:
            return None
        return (tuple(n.type.shape), tuple(n.type.strides), n.type.dtype)

    def _eager_step(self, slot: int) -> tuple:
        n: GNode = self.nodes[slot]
        if n.kind == "input":
            raise ExecutorError(f"input %{n.name} is not bound")
        size = self._size_expr(n)
        if size is not None:
            return (_SIZE, slot, size, ())
        into = None
        if n.run_into is not None and n.type.is_contiguous():
            # An op with an out= overload writes a result large enough for a pool into a
            # recycled buffer of the type's layout, as a kernel does (smaller: ATen allocates).
            _, shape, strides, _, pool = self._kernel_out(slot, n.type)
            if pool is not None:
                into = (n.run_into, shape, strides, pool)
        return (_EAGER, slot, n.run, self._guard(slot), into, ())

    def _size_expr(self, n: GNode) -> Optional[Size]:
        """The value of an integer node (a SymInt the graph computes, e.g. the row count
        s27*s77 of a reshape) as an expression over the symbols the run function reads, which
        it prints as arithmetic instead of calling the FX op; None for any other node."""
        if n.kind != "opaque" or n.fx is None or not isinstance(n.fx.meta.get("val"), torch.SymInt):
            return None
        e = to_size(n.fx.meta["val"])
        if e is None or isinstance(e, int):
            return e
        if {x.name for x in e.free_symbols} <= set(self.symbols) and check(e):
            return e
        return None

    @staticmethod
    def _with_frees(plan: List[tuple], reads: List[List[int]], keep: set) -> List[tuple]:
        last: Dict[int, int] = {}
        for i, slots in enumerate(reads):
            for s in slots:
                last[s] = i
        frees: List[List[int]] = [[] for _ in plan]
        for s, i in last.items():
            if s not in keep:
                frees[i].append(s)
        return [p[:-1] + (tuple(f),) for p, f in zip(plan, frees)]

    # Run -------------------------------------------------------------------------------------

    def __call__(self, *args: Any) -> List[Any]:
        if self._broken:
            return self.fallback(*args)
        for pos, dtype, strides in self._checks:
            a = args[pos]
            if a.dtype != dtype or (strides is not None and a.stride() != strides):
                return self._eager(args, pos, a, dtype, strides)
        try:
            if _profiling():
                return self._profiled(args)
            return self._run_fn(args)
        except self._runtime_errors as e:
            # A kernel launch failed (e.g. its tiling function rejected the sizes): the graph
            # is functional, so running it eagerly from the start is safe.
            self._broken = True
            log.warning("autofuse: graph %s failed at run time (%s); running it eagerly from now on", self.name, e)
            return self.fallback(*args)
        except Exception as e:
            # A step failed. The eager graph on the same arguments says whose error it is: when
            # it raises too, the model's (the user sees eager's own exception, the executor
            # stays); when it does not, ours, which never reaches the model.
            out = self.fallback(*args)
            self._broken = True
            log.warning("autofuse: graph %s failed at run time (%s: %s); running it eagerly from now on",
                        self.name, type(e).__name__, e)
            return out

    @property
    def broken(self) -> bool:
        """Whether a run failed in autofuse and every call now runs the eager graph."""
        return self._broken

    def regenerate(self) -> None:
        """Prints the steps again as the run function (after a change to `_steps`)."""
        self._profiled_fn = None
        self.source, self._run_fn = self._print()

    def _print(self, labels: Optional[Dict[int, str]] = None) -> Tuple[str, Callable]:
        try:
            cuda = self.device.type == "cuda"
            return print_run(self._steps, self._inputs, self._outputs, self._template, self.symbols,
                             self._read_symbols, self.program.launch_cuda if cuda else self.program.launch,
                             labels, self.device)
        except ValueError as e:
            raise ExecutorError(str(e))

    def _profiled(self, args: Sequence[Any]) -> List[Any]:
        """The call under torch.profiler: the whole run and each kernel launch are labelled
        events (`autofuse::g0`, kernel_labels), so a profile shows our kernels by name next to
        the ATen ops. Printed on the first profiled call; plain calls never pay for it."""
        if self._profiled_fn is None:
            self._profiled_fn = self._print(self.kernel_labels)[1]
        with torch.profiler.record_function(self._label):
            return self._profiled_fn(args)

    def _eager(self, args: Sequence[Any], pos: int, a: Any, dtype: torch.dtype, strides: Any) -> Any:
        if not self._warned:
            self._warned = True
            got = f"{a.dtype} strides {tuple(a.stride())}"
            log.warning(
                "autofuse: graph %s input %d is %s, compiled for %s strides %s; running this "
                "graph eagerly for such calls", self.name, pos, got, dtype, strides)
        return self.fallback(*args)
