"""The torch internals the Inductor frontend relies on (autofuse.inductor.torch_internals) are
where it expects them: this test names what moved when a torch upgrade changes them."""

import inspect
import re
from typing import List

import torch
import torch._guards
import torch._inductor.codegen.wrapper
import torch._inductor.graph
from torch._inductor.scheduler import Scheduler

from autofuse.inductor.torch_internals import (CppScheduling, DefaultHandler, SchedulerNode, SizeVarAllocator,
                                               codegen_common, compile_fx, functorch_config, inductor_config)


def test_the_torch_internals_it_relies_on_are_in_place():
    problems: List[str] = []

    def need(obj, attr: str, where: str) -> None:
        if not hasattr(obj, attr):
            problems.append(f"{where}.{attr} is gone")

    def need_set(cls, attr: str) -> None:  # an instance attribute the class's code assigns
        if not re.search(rf"self\.{attr}\s*[:=]", inspect.getsource(cls)):
            problems.append(f"{cls.__name__} no longer sets self.{attr}")

    need(codegen_common, "device_codegens", "torch._inductor.codegen.common")
    need(codegen_common, "register_backend_for_device", "torch._inductor.codegen.common")
    need(codegen_common, "init_backend_registration", "torch._inductor.codegen.common")
    for attr in ("codegen_node", "flush", "can_fuse_vertical", "can_fuse_horizontal", "group_fn"):
        need(CppScheduling, attr, "CppScheduling")
    for attr in ("get_nodes", "mark_run", "get_outputs", "is_reduction"):
        need(SchedulerNode, attr, "SchedulerNode")
    need_set(SchedulerNode, "_body")
    need_set(SchedulerNode, "_sizes")
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
    need_set(torch._guards.TracingContext, "output_strides")
    need(SizeVarAllocator, "optimization_hint", "SizeVarAllocator")
    graph = torch._inductor.graph.GraphLowering
    for attr in ("get_dtype", "get_buffer", "get_output_names"):
        need(graph, attr, "GraphLowering")
    need_set(graph, "removed_buffers")
    need_set(graph, "cpp_wrapper")
    need_set(graph, "graph_inputs")
    wrapper = torch._inductor.codegen.wrapper.PythonWrapperCodegen
    for attr in ("define_kernel", "writeline", "codegen_python_sizevar"):
        need(wrapper, attr, "PythonWrapperCodegen")
    need_set(wrapper, "add_import_once")
    need(Scheduler, "can_buffer_be_removed_through_fusion", "Scheduler")
    need_set(Scheduler, "mutation_real_name")
    assert problems == []
