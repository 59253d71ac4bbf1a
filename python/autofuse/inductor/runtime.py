"""The Inductor frontend's kernels at run time: what Inductor's generated wrapper calls.

Each AscIR kernel the frontend accepted is an `AscKernel` in the wrapper's header (its name,
AscIR text and compile options) and one `run` line per call site. The kernels of one Inductor
graph are compiled together, as one translation unit, when the graph's compile finishes: from
the ScheduledKernels the frontend made when it checked each group (`keep`), so no kernel is
scheduled twice; a kernel of a wrapper reloaded without them compiles from its text. Compiling
goes through autofuse's JIT cache: the same kernel compiles once per machine.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

_lock = threading.Lock()
_pending: List["AscKernel"] = []  # kernels created but not compiled yet, oldest first
# (kernel name, its compile options as json) -> its _C.ScheduledKernel, until compiled: a name
# is a hash of the unscheduled kernel, the same for every target it may be scheduled for.
_scheduled: Dict[Tuple[str, str], Any] = {}


def options_key(options: Dict[str, Any]) -> str:
    """Compile options as the one json text that keys kernels compiled together."""
    return json.dumps(options, sort_keys=True)


def keep(kernel: Any, options: Dict[str, Any]) -> Tuple[str, str]:
    """Keeps a _C.ScheduledKernel the wrapper being generated calls, scheduled with compile
    options `options`, for compile_pending; returns its key (discard_pending's `kept`)."""
    key = (kernel.name, options_key(options))
    with _lock:
        _scheduled[key] = kernel
    return key


class AscKernel:
    """One AscIR kernel called from an Inductor wrapper: run(inputs, outputs, sizes), `sizes`
    the values of the size symbols named `symbols` (the kernel takes the ones it uses, in its
    own order: `take`)."""

    def __init__(self, name: str, text: str, options: str, symbols: Sequence[str] = ()):
        self.name = name
        self.text = text
        self.options = json.loads(options)
        self.symbols = list(symbols)
        self.program: Any = None
        self.index = 0
        self.take: Optional[List[int]] = None  # positions in `sizes` of the kernel's symbols
        with _lock:
            _pending.append(self)

    def run(self, inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor], sizes: Sequence[int]) -> None:
        """Launches the kernel on the tensors' data (inputs, then outputs) with the values of
        its size symbols, in `symbols` order."""
        if self.program is None:
            compile_pending()
        # Outputs first: data_ptr gives a copy-on-write output a storage of its own, which an
        # input aliasing it must then read; an input only read keeps its shared storage.
        outs = [t.data_ptr() for t in outputs]
        ptrs = [t.const_data_ptr() for t in inputs] + outs
        if self.take is not None:
            sizes = [sizes[i] for i in self.take]
        self.program.launch(self.index, ptrs, sizes, torch.get_num_threads())

    def _loaded(self, program: Any, index: int) -> None:
        wanted = program.kernel_symbols(index)
        missing = [s for s in wanted if s not in self.symbols]
        if missing:
            raise RuntimeError(f"autofuse: kernel needs size symbols {missing} its call does not pass")
        take = [self.symbols.index(s) for s in wanted]
        self.take = None if take == list(range(len(self.symbols))) else take
        self.program, self.index = program, index


_arange: List[torch.Tensor] = []


def arange(length: int) -> torch.Tensor:
    """An int64 tensor whose element i is i, of at least `length` elements: the table an AscIR
    kernel reads an iota (Inductor's index_expr) from. One per process, grown by doubling."""
    if not _arange or _arange[0].numel() < length:
        with _lock:
            if not _arange or _arange[0].numel() < length:
                _arange[:] = [torch.arange(max(1 << max(length - 1, 1).bit_length(), 1024), dtype=torch.int64)]
    return _arange[0]


def compile_pending(name: str = "inductor") -> int:
    """Compiles every kernel created and not yet compiled, grouped by compile options, one
    translation unit per group; returns how many. Raises CompileError / ToolchainError."""
    from .. import _C

    with _lock:
        batch = list(_pending)
        _pending.clear()
    groups: Dict[str, List[AscKernel]] = {}
    for k in batch:
        groups.setdefault(options_key(k.options), []).append(k)
    try:
        for options, kernels in groups.items():
            names = list(dict.fromkeys(k.name for k in kernels))  # each kernel once
            with _lock:
                scheduled = [_scheduled.get((n, options)) for n in names]
            if all(scheduled):
                program = _C.compile_kernels(scheduled, name=name, **kernels[0].options)
            else:  # a wrapper reloaded in a process that did not trace it
                texts = {k.name: k.text for k in kernels}
                program = _C.compile_ascir("".join(texts[n] for n in names), name=name, **kernels[0].options)
            for k in kernels:
                k._loaded(program, names.index(k.name))
            with _lock:
                for n in names:
                    _scheduled.pop((n, options), None)
    except Exception:
        with _lock:  # let a later call try again (and fail the same way, loudly)
            _pending[:0] = [k for k in batch if k.program is None]
        raise
    return len(batch)


def discard_pending(kept: Sequence[Tuple[str, str]] = ()) -> None:
    """Forgets the pending kernels and the scheduled ones `kept` (keep's keys): a graph that
    fell back to Inductor's kernels never runs them."""
    with _lock:
        for key in [*kept, *((k.name, options_key(k.options)) for k in _pending)]:
            _scheduled.pop(key, None)
        _pending.clear()
