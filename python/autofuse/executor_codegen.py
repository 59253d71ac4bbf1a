"""The executor's step list printed as one straight-line Python function.

Interpreting the steps costs a loop, a tag dispatch and a tuple unpacking per step on every
call; in a model whose weights stream through the caches between steps that work runs cold and
costs tens of microseconds per call. Printing the list once, with every constant bound by name
in the function's scope, leaves only the work itself (Inductor's wrapper has the same shape).
The printed text is kept (`Executor.source`) for debugging; the function reads and writes the
same `env` slots the steps name, so eager closures keep reading their operands from it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .symbolic import SymbolReader, py_text
from .weight_packs import HAS_CONST_DATA_PTR

# Step tags (executor.py builds the steps).
KERNEL, EAGER, VIEW, SIZE = 0, 1, 2, 3


def _dynamo_guards_fn(name: str, fallback: Callable) -> Callable:
    """A tensor helper Inductor's wrappers call (torch._C._dynamo.guards: no dispatcher, about
    half the host cost), or `fallback`, the public call with the same meaning."""
    guards = getattr(getattr(torch._C, "_dynamo", None), "guards", None)
    return getattr(guards, name, None) or fallback


# (shape, strides, dtype) -> a new CPU tensor.
_empty_strided = _dynamo_guards_fn(
    "_empty_strided_cpu", lambda shape, strides, dtype: torch.empty_strided(shape, strides, dtype=dtype))
# (tensor, shape, strides, element offset from the tensor's own) -> a tensor on its storage.
reinterpret = _dynamo_guards_fn(
    "_reinterpret_tensor", lambda t, shape, strides, inc: t.as_strided(shape, strides, t.storage_offset() + inc))


_SYMBOL = re.compile(r"[a-z]+[0-9]+")  # Dynamo's size symbols: s0, s27, u3 (locals of run())


def _relayout(v: torch.Tensor, shape: tuple, strides: tuple, dtype: torch.dtype) -> torch.Tensor:
    """A copy of v in the layout and dtype its type promised."""
    fixed = torch.empty_strided(shape, strides, dtype=dtype, device=v.device)
    fixed.copy_(v)
    return fixed


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


def _ptr(slot: int, offset: int, read_only: bool = False) -> str:
    """The address expression of env[slot] (plus `offset` bytes): an input a kernel only reads
    through const_data_ptr, which leaves a copy-on-write tensor (a weight with a kept pack,
    weight_packs.py) sharing its storage, where data_ptr would give it a copy of its own."""
    get = "const_data_ptr" if read_only and HAS_CONST_DATA_PTR else "data_ptr"
    return f"env[{slot}].{get}() + {offset}" if offset else f"env[{slot}].{get}()"


def _pooled(p: _Printer, tag: str, shape: tuple, strides: tuple, pool: Any) -> Tuple[str, Optional[str]]:
    """(the expression taking a buffer from `pool`, the condition under which the pool is
    asked): a static output always is (None); a dynamic one only when its element count at run
    time reaches the pool's minimum."""
    name = p.bind(f"pool_{tag}", pool)
    if all(isinstance(d, int) for d in shape):
        return f"{name}.take()", None
    numel = "*".join(py_text(d) for d in shape if d != 1) or "1"
    return f"{name}.take_sized({py_text(shape)}, {py_text(strides)})", f"{numel} >= {pool.min_numel}"


def _allocation(p: _Printer, tag: str, shape: tuple, strides: tuple, dtype: torch.dtype,
                pool: Any) -> str:
    """The expression allocating a kernel output: a fresh tensor, or the output's pool for
    static outputs of executor._POOL_MIN_BYTES or more and large dynamic ones (_pooled)."""
    fresh = f"empty_strided({py_text(shape)}, {py_text(strides)}, {p.bind(f'dtype_{tag}', dtype)})"
    if pool is None:
        return fresh
    take, cond = _pooled(p, tag, shape, strides, pool)
    return take if cond is None else f"{take} if {cond} else {fresh}"


def _eager_call(p: _Printer, j: int, s: int, run: Callable, guard: Optional[tuple]) -> List[str]:
    """The lines running eager step j into env[s], relayouting its result when `guard`'s
    (shape, strides, dtype) differ from what ATen returned."""
    call = f"{p.bind(f'run_{j}', run)}(env)"
    if guard is None:
        return [f"env[{s}] = {call}"]
    shape, strides, dtype = guard
    d = p.bind(f"dtype_{j}", dtype)
    return [f"v = {call}",
            f"if v.stride() != {py_text(strides)} or v.dtype != {d}:",
            f"    v = relayout(v, {py_text(shape)}, {py_text(strides)}, {d})",
            f"env[{s}] = v"]


def _cuda_stream_fn(device: torch.device) -> Callable[[], int]:
    """() -> the address of torch's current CUDA stream on `device` (what kernels launch on)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return lambda: raw(index)
    return lambda: torch.cuda.current_stream(index).cuda_stream


def print_run(steps: Sequence[tuple], inputs: Sequence[int], outputs: Sequence[Tuple[bool, Any]],
              template: list, symbols: Sequence[str], read_symbols: Optional[SymbolReader],
              launch: Callable, labels: Optional[Dict[int, str]] = None,
              device: Optional[torch.device] = None) -> Tuple[str, Callable]:
    """(source, function args -> outputs) running `steps` as executor.Executor describes them;
    kernels run through `launch` (the program's Program.launch; on a CUDA `device`, its
    launch_cuda, on torch's current stream). Shapes, strides and size arguments are printed as
    expressions over the symbols, which are locals of the function. `labels` (kernel -> name):
    each launch runs inside a torch.profiler event of that name."""
    for name in symbols:
        if not _SYMBOL.fullmatch(name):
            raise ValueError(f"size symbol {name!r} is not a plain name")
    p = _Printer()
    p.bind("template", template)
    p.bind("launch", launch)
    p.bind("get_num_threads", torch.get_num_threads)
    cuda = device is not None and device.type == "cuda"
    if cuda:
        p.bind("empty_strided", lambda shape, strides, dtype: torch.empty_strided(
            shape, strides, dtype=dtype, device=device))
        p.bind("current_stream", _cuda_stream_fn(device))
    else:
        p.bind("empty_strided", _empty_strided)
    p.bind("reinterpret", reinterpret)
    p.bind("relayout", _relayout)
    p.bind("record_function", torch.profiler.record_function)
    if read_symbols is not None:
        p.emit(f"syms = {read_symbols.expr('args')}")
        if symbols:
            p.emit(f"{', '.join(symbols)}, = syms")
    else:
        p.emit("syms = ()")
    p.emit("env = template.copy()")
    p.emit("env[-1] = syms")
    for i, slot in enumerate(inputs):
        p.emit(f"env[{slot}] = args[{i}]")
    if cuda:
        p.emit("stream = current_stream()")
    else:
        p.emit("nthreads = get_num_threads()")
    for j, step in enumerate(steps):
        tag = step[0]
        if tag == KERNEL:
            _, k, in_refs, outs, syms_of, frees = step
            ptrs = [_ptr(s, off, read_only=True) for s, off in in_refs]
            for n, (s, shape, strides, dtype, pool) in enumerate(outs):
                p.emit(f"env[{s}] = " + _allocation(p, f"{j}_{n}", shape, strides, dtype, pool))
                ptrs.append(_ptr(s, 0))
            where = f"{device.index or 0}, stream" if cuda else "nthreads"
            call = f"launch({k}, [{', '.join(ptrs)}], {py_text(syms_of)}, {where})"
            if labels is None:
                p.emit(call)
            else:
                p.emit(f"with record_function({labels[k]!r}):")
                p.emit("    " + call)
        elif tag == VIEW:
            _, s, root, (shape, strides, offset), root_strides, chain, frees = step
            view = f"env[{s}] = reinterpret(env[{root}], {py_text(shape)}, {py_text(strides)}, {py_text(offset)})"
            if root_strides is None:
                p.emit(view)
            else:
                p.emit(f"if env[{root}].stride() == {py_text(root_strides)}:")
                p.emit("    " + view)
                p.emit("else:")
                p.emit(f"    {p.bind(f'chain_{j}', _chain(chain))}(env)")
        elif tag == SIZE:
            _, s, size, frees = step
            p.emit(f"env[{s}] = {py_text(size)}")
        else:
            _, s, run, guard, into, frees = step
            plain = _eager_call(p, j, s, run, guard)
            if into is None:
                lines = plain
            else:  # large results: the op's out= overload into a pooled buffer
                run_into, shape, strides, pool = into
                take, cond = _pooled(p, str(j), shape, strides, pool)
                pooled = f"env[{s}] = {p.bind(f'run_into_{j}', run_into)}(env, {take})"
                lines = [pooled] if cond is None else (
                    [f"if {cond}:", "    " + pooled, "else:"] + ["    " + x for x in plain])
            for line in lines:
                p.emit(line)
        for s in frees:
            p.emit(f"env[{s}] = None")
    p.emit("return [" + "".join((f"env[{v}], " if is_node else f"{p.bind(f'out_{i}', v)}, ")
                                 for i, (is_node, v) in enumerate(outputs)) + "]")
    source = "def run(args):\n" + "\n".join(p.lines) + "\n"
    scope = dict(p.scope, max=max, min=min)
    exec(compile(source, "<autofuse executor>", "exec"), scope)  # noqa: S102 (printed above)
    return source, scope["run"]
