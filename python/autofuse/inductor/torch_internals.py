"""Every torch._inductor internal the Inductor frontend relies on, imported in this one module.

torch does not promise these names; `check()` (run by tests/python/test_inductor_frontend.py)
fails loudly, naming what moved, when a torch upgrade changes them. Nothing else in
autofuse.inductor imports from torch._inductor.
"""

from __future__ import annotations

import inspect
from typing import List

from torch._functorch import config as functorch_config
from torch._inductor import config as inductor_config
from torch._inductor.codegen import common as codegen_common
from torch._inductor.codegen.cpp import CppScheduling, OuterLoopFusedSchedulerNode
from torch._inductor.compile_fx import compile_fx, compile_fx_inner
from torch._inductor.ops_handler import DefaultHandler
from torch._inductor.scheduler import (
    BaseSchedulerNode,
    FusedSchedulerNode,
    SchedulerNode,
)
from torch._inductor.utils import sympy_subs
from torch._inductor.virtualized import V

__all__ = [
    "BaseSchedulerNode", "CppScheduling", "DefaultHandler", "FusedSchedulerNode",
    "OuterLoopFusedSchedulerNode", "SchedulerNode", "V", "check", "codegen_common",
    "compile_fx", "compile_fx_inner", "functorch_config", "inductor_config", "sympy_subs",
]


def check() -> List[str]:
    """What of the pinned surface is missing or changed shape ([] when all is as expected)."""
    problems: List[str] = []

    def need(obj, attr: str, where: str) -> None:
        if not hasattr(obj, attr):
            problems.append(f"{where}.{attr} is gone")

    need(codegen_common, "device_codegens", "torch._inductor.codegen.common")
    need(codegen_common, "register_backend_for_device", "torch._inductor.codegen.common")
    need(codegen_common, "init_backend_registration", "torch._inductor.codegen.common")
    for attr in ("codegen_node", "flush", "can_fuse_vertical", "can_fuse_horizontal", "group_fn"):
        need(CppScheduling, attr, "CppScheduling")
    for attr in ("_body", "_sizes", "get_nodes", "mark_run", "get_outputs"):
        need(SchedulerNode, attr, "SchedulerNode")
    need(inductor_config, "fx_graph_cache", "torch._inductor.config")
    need(functorch_config, "enable_autograd_cache", "torch._functorch.config")
    params = inspect.signature(compile_fx).parameters
    if "inner_compile" not in params:
        problems.append("compile_fx lost its inner_compile parameter")
    params = inspect.signature(codegen_common.register_backend_for_device).parameters
    for p in ("device", "device_scheduling", "device_wrapper_codegen", "device_cpp_wrapper_codegen"):
        if p not in params:
            problems.append(f"register_backend_for_device lost its {p} parameter")
    need(DefaultHandler, "_default", "DefaultHandler")
    return problems
