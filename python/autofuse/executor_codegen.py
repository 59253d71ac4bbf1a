"""The executor's step list printed as one straight-line Python function.

Interpreting the steps costs a loop, a tag dispatch and a tuple unpacking per step on every
call; in a model whose weights stream through the caches between steps that work runs cold and
costs tens of microseconds per call. Printing the list once, with every constant bound by name
in the function's scope, leaves only the work itself (Inductor's wrapper has the same shape).
The printed text is kept (`Executor.source`) for debugging; the function reads and writes the
same `env` slots the steps name, so eager closures keep reading their operands from it.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

# Step tags (executor.py builds the steps).
KERNEL, KERNEL_DYN, EAGER, VIEW = 0, 1, 2, 3


def _guarded(guard: Tuple[Callable, torch.dtype]) -> Callable[[torch.Tensor, tuple], torch.Tensor]:
    """v, syms -> v, or a copy of v in the layout and dtype its type promised."""
    layout, dtype = guard

    def fix(v: torch.Tensor, syms: tuple) -> torch.Tensor:
        shape, strides = layout(syms)
        if v.stride() != strides or v.dtype != dtype:
            fixed = torch.empty_strided(shape, strides, dtype=dtype)
            fixed.copy_(v)
            return fixed
        return v

    return fix


def _chain(chain: Sequence[Tuple[int, Callable]]) -> Callable[[list], None]:
    """env -> None: runs the ATen view ops of a view chain into their slots."""

    def run(env: list) -> None:
        for slot, op in chain:
            env[slot] = op(env)

    return run


class _Printer:
    """Collects the lines and the named constants of the generated function."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.scope: Dict[str, Any] = {}

    def bind(self, name: str, value: Any) -> str:
        self.scope[name] = value
        return name

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)


def _ptr(slot: int, offset: int) -> str:
    return f"env[{slot}].data_ptr() + {offset}" if offset else f"env[{slot}].data_ptr()"


def print_run(steps: Sequence[tuple], inputs: Sequence[int], outputs: Sequence[Tuple[bool, Any]],
              template: list, read_symbols: Optional[Callable], executor: Any) -> Tuple[str, Callable]:
    """(source, function args -> outputs) running `steps` as executor.Executor describes them;
    kernels launch through `executor.program`, read once per call."""
    p = _Printer()
    p.bind("template", template)
    p.bind("executor", executor)
    p.bind("get_num_threads", torch.get_num_threads)
    p.bind("empty_strided", torch.empty_strided)
    if read_symbols is not None:
        p.bind("read_symbols", read_symbols)
        p.emit("syms = read_symbols(args)")
    else:
        p.emit("syms = ()")
    p.emit("env = template.copy()")
    p.emit("env[-1] = syms")
    for i, slot in enumerate(inputs):
        p.emit(f"env[{slot}] = args[{i}]")
    p.emit("launch = executor.program.launch")
    p.emit("nthreads = get_num_threads()")
    for j, step in enumerate(steps):
        tag = step[0]
        if tag == KERNEL:
            _, k, in_refs, outs, frees = step
            ptrs = [_ptr(s, off) for s, off in in_refs]
            for n, (s, shape, strides, dtype, pool) in enumerate(outs):
                if pool is None:
                    d = p.bind(f"dtype_{j}_{n}", dtype)
                    p.emit(f"env[{s}] = empty_strided({tuple(shape)!r}, {tuple(strides)!r}, dtype={d})")
                else:
                    p.emit(f"env[{s}] = {p.bind(f'pool_{j}_{n}', pool)}.take()")
                ptrs.append(_ptr(s, 0))
            p.emit(f"launch({k}, [{', '.join(ptrs)}], (), nthreads)")
        elif tag == KERNEL_DYN:
            _, k, in_refs, outs, syms_of, frees = step
            ptrs = [_ptr(s, off) for s, off in in_refs]
            for n, (s, layout, pool) in enumerate(outs):
                lay, pl = p.bind(f"layout_{j}_{n}", layout), p.bind(f"pool_{j}_{n}", pool)
                p.emit(f"env[{s}] = {pl}.take_sized(*{lay}(syms))")
                ptrs.append(_ptr(s, 0))
            p.emit(f"launch({k}, [{', '.join(ptrs)}], {p.bind(f'syms_{j}', syms_of)}(syms), nthreads)")
        elif tag == VIEW:
            _, s, root, view, root_strides, chain, frees = step
            p.emit(f"base = env[{root}]")
            p.emit(f"if base.stride() == {p.bind(f'root_strides_{j}', root_strides)}(syms):")
            p.emit(f"    shape, strides, off = {p.bind(f'view_{j}', view)}(syms)")
            p.emit(f"    env[{s}] = base.as_strided(shape, strides, base.storage_offset() + off)")
            p.emit("else:")
            p.emit(f"    {p.bind(f'chain_{j}', _chain(chain))}(env)")
        else:
            _, s, run, guard, frees = step
            call = f"{p.bind(f'run_{j}', run)}(env)"
            if guard is not None:
                call = f"{p.bind(f'guard_{j}', _guarded(guard))}({call}, syms)"
            p.emit(f"env[{s}] = {call}")
        for s in frees:
            p.emit(f"env[{s}] = None")
    p.emit("return [" + "".join((f"env[{v}], " if is_node else f"{p.bind(f'out_{i}', v)}, ")
                                 for i, (is_node, v) in enumerate(outputs)) + "]")
    source = "def run(args):\n" + "\n".join(p.lines) + "\n"
    exec(compile(source, "<autofuse executor>", "exec"), p.scope)  # noqa: S102 (printed above)
    return source, p.scope["run"]
