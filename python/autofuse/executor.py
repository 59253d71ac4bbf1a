"""Runs a compiled program: generated kernels for the fused steps, ATen for everything else.

At build time the steps of `Program.steps()` become a flat list of small tuples over integer
value slots (Graph IR node indices), with every shape, stride, dtype and closure precomputed and
each value freed after its last use. Per call the executor binds the inputs, checks cheaply that
they have the dtypes and strides the kernels were compiled for (else it runs the graph eagerly,
warning once), then walks the list.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .fx_to_graph import Translation
from .ir_nodes import GNode

log = logging.getLogger("autofuse")

_KERNEL, _EAGER = 0, 1
_NOT_COMPUTED = {"input", "opaque"}  # kinds whose eager value already has eager's layout
_VIEW_KINDS = {"reshape", "permute", "unsqueeze", "squeeze", "slice", "expand"}


class ExecutorError(RuntimeError):
    """The program's steps do not describe a runnable schedule (a bug; the caller falls back)."""


class Executor:
    """Callable running one compiled graph; `fallback` is the eager graph module."""

    def __init__(self, tr: Translation, program: Any, fallback: Callable[..., Any], name: str):
        self.name = name
        self.program = program
        self.fallback = fallback
        self.nodes = tr.nodes
        self.kernel_steps = 0
        self._warned = False
        self._template: List[Any] = [None] * len(tr.nodes)
        self._inputs = list(tr.placeholders)
        self._checks = self._input_checks(tr)
        self._outputs = tr.outputs
        self._steps = self._build(tr, program.steps())

    # Build -----------------------------------------------------------------------------------

    def _input_checks(self, tr: Translation) -> List[Tuple[int, torch.dtype, Tuple[int, ...]]]:
        checks = []
        for pos, slot in enumerate(tr.placeholders):
            t = tr.nodes[slot].type
            if t is not None:
                checks.append((pos, t.dtype, tuple(t.strides)))
        return checks

    def _build(self, tr: Translation, steps: Sequence[tuple]) -> List[tuple]:
        index = tr.index
        nodes = tr.nodes
        available = set(tr.placeholders)
        plan: List[tuple] = []
        reads: List[List[int]] = []  # per plan entry, the slots it reads

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
            for op in nodes[slot].operands:
                ensure(op, stack + (slot,))
            plan.append(self._eager_step(slot))
            reads.append(list(nodes[slot].operands))
            available.add(slot)

        for kind, name, ops, inputs, outputs, k, reason in steps:
            in_slots = [index[x] for x in inputs]
            out_slots = [index[x] for x in outputs]
            if kind == "kernel":
                # A view read by a kernel is not evaluated: the kernel gets its root's pointer
                # plus the view's offset (its strides are compiled into the kernel).
                in_refs = [self._view_root(s) for s in in_slots]
                for r, _ in in_refs:
                    ensure(r)
                if self.program.kernel_symbols(k):
                    raise ExecutorError(f"kernel {name} takes size symbols (dynamic shapes)")
                n_in, n_out = self.program.kernel_io(k)
                if n_in != len(in_slots) or n_out != len(out_slots):
                    raise ExecutorError(f"kernel {name}: {n_in}/{n_out} args vs step {len(in_slots)}/{len(out_slots)}")
                outs = []
                for s in out_slots:
                    t = nodes[s].type
                    if t is None:
                        raise ExecutorError(f"kernel {name} writes %{nodes[s].name} of unknown type")
                    outs.append((s, tuple(t.shape), tuple(t.strides), t.dtype))
                plan.append((_KERNEL, k, tuple(in_refs), tuple(outs), ()))
                reads.append([r for r, _ in in_refs])
                available.update(out_slots)
                self.kernel_steps += 1
            else:
                for s in in_slots:
                    ensure(s)
                for s in [index[x] for x in ops]:
                    if s not in available:
                        for op in nodes[s].operands:
                            ensure(op)
                        plan.append(self._eager_step(s))
                        reads.append(list(nodes[s].operands))
                        available.add(s)
                for s in out_slots:
                    ensure(s)
        out_slots = [v for is_node, v in self._outputs if is_node]
        for s in out_slots:
            ensure(s)
        return self._with_frees(plan, reads, set(out_slots) | set(self._inputs))

    def _view_root(self, slot: int) -> Tuple[int, int]:
        """(root slot, byte offset) of a kernel input: views resolve to the tensor they alias."""
        n = self.nodes[slot]
        if n.kind not in _VIEW_KINDS or n.type is None:
            return slot, 0
        root = slot
        while self.nodes[root].kind in _VIEW_KINDS:
            root = self.nodes[root].operands[0]
        if self.nodes[root].type is None:
            return slot, 0
        return root, n.type.offset * n.type.dtype.itemsize

    def _eager_step(self, slot: int) -> tuple:
        n: GNode = self.nodes[slot]
        if n.kind == "input":
            raise ExecutorError(f"input %{n.name} is not bound")
        guard = None
        if n.kind not in _NOT_COMPUTED and n.kind not in _VIEW_KINDS and n.type is not None:
            guard = (tuple(n.type.shape), tuple(n.type.strides), n.type.dtype)
        return (_EAGER, slot, n.run, guard, ())

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
        for pos, dtype, strides in self._checks:
            a = args[pos]
            if a.dtype != dtype or a.stride() != strides:
                return self._eager(args, pos, a, dtype, strides)
        env = self._template.copy()
        for slot, a in zip(self._inputs, args):
            env[slot] = a
        launch = self.program.launch
        nthreads = torch.get_num_threads()
        empty_strided = torch.empty_strided
        for step in self._steps:
            if step[0] == _KERNEL:
                _, k, in_refs, outs, frees = step
                ptrs = [env[s].data_ptr() + off for s, off in in_refs]
                for s, shape, strides, dtype in outs:
                    t = empty_strided(shape, strides, dtype=dtype)
                    env[s] = t
                    ptrs.append(t.data_ptr())
                launch(k, ptrs, (), nthreads)
            else:
                _, s, run, guard, frees = step
                v = run(env)
                if guard is not None and (v.stride() != guard[1] or v.dtype != guard[2]):
                    fixed = empty_strided(guard[0], guard[1], dtype=guard[2])
                    fixed.copy_(v)
                    v = fixed
                env[s] = v
            for s in frees:
                env[s] = None
        return [env[v] if is_node else v for is_node, v in self._outputs]

    def _eager(self, args: Sequence[Any], pos: int, a: Any, dtype: torch.dtype, strides: Tuple[int, ...]) -> Any:
        if not self._warned:
            self._warned = True
            got = f"{a.dtype} strides {tuple(a.stride())} on {a.device}"
            log.warning(
                "autofuse: graph %s input %d is %s, compiled for %s strides %s; running this "
                "graph eagerly for such calls", self.name, pos, got, dtype, strides)
        return self.fallback(*args)
