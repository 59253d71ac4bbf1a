"""autofuse: automatic fusion of memory-bound PyTorch work into generated C++ CPU kernels.

    import torch
    model = torch.compile(model, backend="autofuse")

`backend="autofuse"` is registered through the `torch_dynamo_backends` entry point of the
installed package (and here, when the package runs from a source tree without one).
"""

from __future__ import annotations

from .backend import (
    GraphRecord,
    autofuse_backend,
    collect_records,
    compiled_graphs,
    get_backend,
    reset_records,
)
from .config import CompilerConfig
from .explain import ExplainReport, explain
from .export_ascendc import AscendcExport, export_ascendc
from .log import configure as _configure_logging, logger

__all__ = [
    "AscendcExport",
    "CompilerConfig",
    "ExplainReport",
    "GraphRecord",
    "autofuse_backend",
    "collect_records",
    "compiled_graphs",
    "explain",
    "export_ascendc",
    "get_backend",
    "host_isas",
    "logger",
    "reset_records",
    "stats",
]


def stats() -> dict:
    """Process-wide C++ compile counters: cxx_compiles, cache_hits, compile_seconds."""
    from . import _C

    return _C.stats()


def host_isas() -> list:
    """The kernel ISAs this host runs, widest first: the values CompilerConfig(isa=...) takes."""
    from . import _C

    return list(_C.host_isas())


def _register_without_entry_point() -> None:
    # With the entry point, torch loads autofuse.backend itself; registering here as well would
    # make its lookup fail with "duplicate name".
    try:
        from importlib.metadata import entry_points

        if "autofuse" in entry_points(group="torch_dynamo_backends").names:
            return
        from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend

        if "autofuse" not in _COMPILER_FNS:
            register_backend(autofuse_backend, name="autofuse")
    except Exception:  # registration is a convenience; get_backend() always works
        pass


_configure_logging()
_register_without_entry_point()
