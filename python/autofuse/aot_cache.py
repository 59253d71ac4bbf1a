"""Compiled graphs kept in AOTAutograd's cache: a warm start skips AOTAutograd's tracing.

A process that compiles a model its caches have seen before (a second run of the same script, a
second model with the same graphs) still traces each Dynamo graph through AOTAutograd, about a
second a graph of a 6-layer Llama, before autofuse's compile hits its JIT cache. Inductor skips
that tracing through AOTAutograd's own cache (torch._functorch._aot_autograd.autograd_cache): a
backend takes part by compiling through SerializableAOTDispatchCompiler and returning an
OutputCode that pickles (the "bundled" cache); a hit unpickles it and calls its post_compile.

What autofuse keeps there is not its kernels (the JIT cache keeps those, by source) but what its
compile starts from: the ATen graph AOTAutograd traced, its tensors' metadata (torch.fx's
GraphPickler, symbolic sizes included), the example inputs and the AotFacts. A hit compiles that
graph again with the current CompilerConfig, as a miss would have.

The key is AOTAutograd's (the Dynamo graph, its inputs, torch's configs) with a tag naming
autofuse and a hash of its Python sources (the decompositions AOTAutograd traced with): neither
Inductor nor another build of autofuse is served an entry of this one. Only inference graphs are
kept: a training forward hands AOTAutograd its outputs' strides while compiling
(channels_last.py), which a hit would not redo.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import hashlib
import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import torch
from torch._functorch._aot_autograd.autograd_cache import BypassAOTAutogradCache
from torch._functorch._aot_autograd.schemas import SerializableAOTDispatchCompiler
from torch._inductor.output_code import OutputCode

from .log import logger

_Compile = Callable[..., Callable]  # backend.compile_graph's signature
_compiling: "contextvars.ContextVar[Optional[Tuple[_Compile, Dict[str, Any]]]]" = contextvars.ContextVar(
    "autofuse_aot_compile", default=None)


@functools.lru_cache(maxsize=None)
def source_hash() -> str:
    """A hash of autofuse's Python sources: what AOTAutograd traced with (decompositions) and
    what an entry's pickled recipe names."""
    h = hashlib.sha256()
    root = os.path.dirname(os.path.abspath(__file__))
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                h.update(os.path.relpath(os.path.join(folder, name), root).encode())
                with open(os.path.join(folder, name), "rb") as f:
                    h.update(f.read())
    return h.hexdigest()[:16]


@dataclasses.dataclass
class KeptGraph(OutputCode):
    """One compiled graph as AOTAutograd's cache keeps it: the recipe (GraphPickler's bytes of
    the traced ATen graph, its example inputs and AotFacts) and, while live, the compiled
    callable."""

    recipe: bytes = b""  # b"": this graph is not kept (a bypass when AOTAutograd saves it)
    _boxed_call: bool = True  # AOTAutograd calls it with one list of inputs

    def __post_init__(self) -> None:
        self._run: Optional[Callable] = None

    def __call__(self, inputs: Sequence[Any]) -> Any:
        assert self._run is not None, "a kept graph is called before post_compile rebuilt it"
        return self._run(inputs)

    def prepare_for_serialization(self) -> None:
        if not self.recipe:
            raise BypassAOTAutogradCache("autofuse keeps inference graphs only")
        self._run = None

    def post_compile(self, example_inputs: Sequence[Any], constants: Any, graph_kwargs: Any) -> None:
        if self._run is None:
            self._run = _rebuild(self.recipe)

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_run"] = None
        return state


def _rebuild(recipe: bytes) -> Callable:
    """The compiled callable of a kept graph, compiled again from its recipe by the backend
    compiling now."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx._graph_pickler import GraphPickler
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    current = _compiling.get()
    if current is None:  # only autofuse's backend loads entries with its tag
        raise RuntimeError("an autofuse graph was loaded from AOTAutograd's cache outside autofuse's backend")
    compile_graph, kwargs = current
    loaded, example_inputs, facts = GraphPickler.loads(recipe, FakeTensorMode(shape_env=ShapeEnv()))
    # a GraphModule of its own class with its forward (the unpickled one has neither), as
    # AOTAutograd hands one to a compiler
    gm = torch.fx.GraphModule(loaded, loaded.graph)
    return compile_graph(gm, list(example_inputs), tag="inference", facts=facts, **kwargs)


_KEPT_META = frozenset({"val", "original_aten", "stack_trace"})  # the node metadata compile_graph and explain read


def _recipe(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], facts: Any) -> bytes:
    """GraphPickler's bytes of what compiling `gm` starts from; b"" where they do not pickle."""
    from torch.fx._graph_pickler import GraphPickler, Options

    try:
        return GraphPickler.dumps((gm, tuple(example_inputs), facts), Options(node_metadata_key_filter=_KEPT_META.__contains__))
    except Exception as e:  # an op or a value GraphPickler does not take: this graph is not kept
        logger.info("autofuse: a graph is not kept in AOTAutograd's cache: %s: %s", type(e).__name__, e)
        return b""


def keeping(compile_graph: _Compile, tag: str, **kwargs: Any) -> SerializableAOTDispatchCompiler:
    """AOTAutograd's compiler of `tag` graphs ("fw", "bw", "inference") through `compile_graph`
    (backend.compile_graph, with `kwargs`), whose results AOTAutograd's cache can keep."""

    def compile_kept(gm: torch.fx.GraphModule, example_inputs: List[Any]) -> KeptGraph:
        from .backend import AotFacts

        facts = AotFacts.of_current_graph()
        kept = KeptGraph(recipe=_recipe(gm, example_inputs, facts) if tag == "inference" else b"")
        # the recipe is pickled before compile_graph's passes rewrite `gm`
        kept._run = compile_graph(gm, example_inputs, tag=tag, facts=facts, **kwargs)
        return kept

    return SerializableAOTDispatchCompiler(KeptGraph, compile_kept)


@contextlib.contextmanager
def cache_scope(compile_graph: _Compile, kwargs: Dict[str, Any]) -> Iterator[None]:
    """Inside: AOTAutograd keeps autofuse's graphs (bundled cache, autofuse's key tag) and a hit
    rebuilds through `compile_graph` with `kwargs`."""
    import torch._functorch.config as functorch_config

    user_tag = torch.compiler.config.cache_key_tag
    token = _compiling.set((compile_graph, kwargs))
    try:
        with functorch_config.patch(bundled_autograd_cache=True), \
                torch.compiler.config.patch(cache_key_tag=f"{user_tag}|autofuse:{source_hash()}"):
            yield
    finally:
        _compiling.reset(token)
