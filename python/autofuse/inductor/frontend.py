"""The Inductor frontend (roadmap 2): Inductor captures, decomposes, lowers and fuses; autofuse
compiles each fusion group from AscIR on (scheduling.py).

    torch.compile(model, backend="autofuse", options={"frontend": "inductor"})

`compile_graph` runs Inductor's compile_fx on a Dynamo graph with `AutofuseScheduling` as the
CPU Scheduling only while Inductor compiles this graph (`_registered`), with Inductor's FX graph
and AOTAutograd caches off (a cached module from a plain Inductor compile must not stand in for
ours, nor ours for it). Every other compile in the process keeps Inductor's own C++ backend.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import threading
from typing import Any, Callable, Iterator, List

import torch

from .. import dumps
from ..config import CompilerConfig
from ..log import logger
from ..records import RecordLog
from . import runtime
from .scheduling import GroupRecord, Session, make_scheduling
from .torch_internals import (codegen_common, compile_fx, compile_fx_inner, forget_output_strides, functorch_config,
                              inductor_config)

_registration_lock = threading.RLock()
_counter = itertools.count()


@dataclasses.dataclass
class InductorGraphRecord:
    """One graph Inductor compiled for autofuse: its fusion groups and what became of each."""

    name: str
    groups: List[GroupRecord]
    fallback: str = ""  # why the graph's AscIR kernels were dropped ("" when they run)

    @property
    def kernels(self) -> List[GroupRecord]:
        return [g for g in self.groups if g.kernel]


_log: RecordLog[InductorGraphRecord] = RecordLog()
compiled_graphs, reset_records, collect_records = _log.compiled_graphs, _log.reset_records, _log.collect_records


@contextlib.contextmanager
def _registered(session: Session) -> Iterator[None]:
    """AutofuseScheduling as the CPU Scheduling for the duration of the block, then Inductor's
    registration exactly as it was."""
    with _registration_lock:
        codegen_common.init_backend_registration()
        before = codegen_common.device_codegens["cpu"]
        codegen_common.device_codegens["cpu"] = dataclasses.replace(before, scheduling=make_scheduling(session))
        try:
            yield
        finally:
            codegen_common.device_codegens["cpu"] = before


def compile_graph(gm: torch.fx.GraphModule, example_inputs: List[Any], config: CompilerConfig) -> Callable:
    """Compiles a Dynamo graph through Inductor with autofuse's kernels for its fusion groups."""
    from .. import _C

    def schedule(builder: Any, name: str) -> Any:
        return _C.schedule_kernel(builder, name, isa=config.isa, target=config.target, cann=config.cann_version,
                                  soc=config.ascend_soc)

    def inner(gm: torch.fx.GraphModule, example_inputs: List[Any], **kwargs: Any) -> Any:
        name = f"i{next(_counter)}"
        session = Session(config.compile_options(), schedule)
        rec = InductorGraphRecord(name, session.groups)

        def inductors_own(e: Exception) -> Any:
            """The graph compiled again by Inductor alone, after autofuse's part failed."""
            if not config.fallback_on_error:
                raise e
            runtime.discard_pending(session.kept)
            rec.fallback = f"{type(e).__name__}: {e}"
            logger.warning("autofuse: graph %s runs on Inductor's own kernels: %s", name, rec.fallback)
            forget_output_strides()
            return compile_fx_inner(gm, example_inputs, **kwargs)

        try:
            with _registered(session), inductor_config.patch(fx_graph_cache=False):
                compiled = compile_fx_inner(gm, example_inputs, **kwargs)
        except Exception as e:  # a bug of ours inside Inductor's codegen must not fail the compile
            _log.publish(rec)
            return inductors_own(e)
        _log.publish(rec)
        if not rec.kernels:
            return compiled
        try:
            runtime.compile_pending(name)
        except (_C.CompileError, _C.ToolchainError) as e:
            return inductors_own(e)
        logger.info("autofuse: Inductor graph %s: %d of %d fusion groups are AscIR kernels",
                    name, len(rec.kernels), len(rec.groups))
        from .report import dump

        dump(rec, dumps.usable_dir(config.dump_dir))  # "" (after a warning) when unusable: none
        return compiled

    with functorch_config.patch(enable_autograd_cache=False):
        return compile_fx(gm, example_inputs, inner_compile=inner)
