"""Every torch._inductor internal the Inductor frontend relies on, imported in this one module.

torch does not promise these names; tests/python/test_inductor_torch_surface.py fails loudly,
naming what moved, when a torch upgrade changes them. Nothing else in autofuse.inductor imports
from torch._inductor.
"""

from __future__ import annotations

import torch
import torch._guards

from torch._functorch import config as functorch_config
from torch._inductor import config as inductor_config
from torch._inductor.codegen import common as codegen_common
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.compile_fx import compile_fx, compile_fx_inner
from torch._inductor.ops_handler import DefaultHandler
from torch._inductor.scheduler import SchedulerNode
from torch._inductor.sizevars import SizeVarAllocator
from torch._inductor.virtualized import V
from torch.utils._sympy.functions import FloorDiv, ModularIndexing

__all__ = ["CppScheduling", "DefaultHandler", "FloorDiv", "ModularIndexing", "SchedulerNode", "SizeVarAllocator", "V",
           "codegen_common", "compile_fx", "compile_fx_inner", "forget_output_strides", "functorch_config",
           "inductor_config"]


def forget_output_strides() -> None:
    """Lets compile_fx_inner run again on the same graph (the fallback after a failed JIT):
    the first run recorded the outputs' strides in the TracingContext, the second must not
    find them there."""
    context = torch._guards.TracingContext.try_get()
    if context is not None and context.output_strides is not None:
        context.output_strides.clear()
