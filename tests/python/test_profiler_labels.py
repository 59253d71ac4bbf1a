"""Under torch.profiler every kernel launch is an event named after the graph, the kernel and
the ATen ops it computes; without a profiler the plain run function runs."""

import torch

import autofuse
from helpers import compile_fn, only_record


def _layer_norm_gelu(x, w, b):
    return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b) + 1.0)


def test_kernels_are_profiler_events_named_by_their_aten_ops():
    autofuse.reset_records()
    x, w, b = torch.randn(64, 256), torch.randn(256), torch.randn(256)
    f = compile_fn(_layer_norm_gelu)
    expected = _layer_norm_gelu(x, w, b)
    torch.testing.assert_close(f(x, w, b), expected)
    rec = only_record()
    with torch.profiler.profile() as prof:
        got = f(x, w, b)
    torch.testing.assert_close(got, expected)
    names = [e.name for e in prof.events()]
    kernels = [n for n in names if n.startswith(f"autofuse::{rec.name}.k")]
    assert len(kernels) == rec.num_kernels, names
    ops = set(kernels[0].split(" ", 1)[1].split("+"))
    assert {"native_layer_norm", "gelu", "add"} <= ops, kernels
    assert f"autofuse::{rec.name}" in names  # the run function as a whole
    # The labelled run function is printed once, on the first profiled call, and the plain one
    # keeps running without a profiler.
    assert "record_function" not in rec.runner.source
    torch.testing.assert_close(f(x, w, b), expected)
