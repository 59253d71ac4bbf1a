"""The cuda target on a GPU (issue 44): graphs of CUDA tensors compiled by autofuse, their
kernels compiled by NVRTC and launched through the driver API, against eager on the same GPU.
Every test here skips without a usable GPU (the reason: torch has no CUDA, or
_C.cuda_unavailable()); `make gpu-check` runs them on a GPU machine, with a slice of each
fuzzer's programs (AUTOFUSE_GPU_FUZZ_CASES per fuzzer)."""

import importlib
import os

import pytest
import torch
import torch.nn.functional as F

import autofuse
from autofuse import _C


def _why_not() -> str:
    if not torch.cuda.is_available():
        return "torch has no CUDA device here"
    return _C.cuda_unavailable()


pytestmark = pytest.mark.skipif(bool(_why_not()), reason=_why_not() or "")

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
       torch.float16: dict(rtol=1e-3, atol=1e-3)}


def _cuda_kernels(recs) -> int:
    """The cuda kernels of the graphs compiled (each graph compiled, none left eager)."""
    assert recs and all(not r.fallback for r in recs), [(r.name, r.fallback) for r in recs]
    targets = [r.program.kernel_target(k) for r in recs for k in range(r.num_kernels)]
    assert targets and set(targets) == {"cuda"}, targets
    return len(targets)


def _check(fn, *args, dynamic=False, tol=None):
    """fn compiled by autofuse on CUDA tensors `args` against eager; returns the records."""
    expected = fn(*args)
    with autofuse.collect_records() as recs:
        got = torch.compile(fn, backend="autofuse", dynamic=dynamic)(*args)
    torch.cuda.synchronize()
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        torch.testing.assert_close(g, e, **(tol or TOL[e.dtype]))
    return recs


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dtype)


@pytest.mark.parametrize("shape", [(4, 16), (33, 1000), (2, 3, 4097)])
def test_an_elementwise_chain_x_gamma_beta_into_sigmoid(shape):
    x, g, b = rand(*shape), rand(shape[-1]), rand(shape[-1])
    _cuda_kernels(_check(lambda x, g, b: torch.sigmoid(x * g + b) * 2 - 1, x, g, b))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cols", [64, 768, 5000])
def test_layer_norm_and_softmax_rows(dtype, cols):
    x, w, b = rand(37, cols, dtype=dtype), rand(cols, dtype=dtype), rand(cols, dtype=dtype)
    _cuda_kernels(_check(lambda x, w, b: (F.layer_norm(x, (cols,), w, b), torch.softmax(x, -1)), x, w, b))


def test_rms_norm_in_bf16():
    x, w = rand(8, 128, 512, dtype=torch.bfloat16), rand(512, dtype=torch.bfloat16)

    def rms(x, w):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return w * (x.float() * torch.rsqrt(v + 1e-6)).to(torch.bfloat16)

    _cuda_kernels(_check(rms, x, w))


def test_a_column_sum():
    x = rand(300, 77)
    _cuda_kernels(_check(lambda x: (x * 3).sum(0), x, tol=dict(rtol=1e-5, atol=1e-4)))


def test_rotary_concat():
    x, cos, sin = rand(2, 8, 64, 128), rand(64, 128), rand(64, 128)

    def rotary(x, cos, sin):
        x1, x2 = x[..., :64], x[..., 64:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    _cuda_kernels(_check(rotary, x, cos, sin))


def test_dynamic_shapes_one_graph_over_several_lengths():
    fn = torch.compile(lambda x, g: F.gelu(x * g).sum(-1), backend="autofuse", dynamic=True)
    g = rand(256)
    with autofuse.collect_records() as recs:
        for n in (3, 17, 1000):
            x = rand(n, 256)
            torch.testing.assert_close(fn(x, g), F.gelu(x * g).sum(-1), rtol=1e-5, atol=1e-4)
    _cuda_kernels(recs)


def test_f64_ops_run_as_aten_ops_beside_cuda_kernels():
    x = rand(64, 64)
    recs = _check(lambda x: (torch.sigmoid(x) * 2, (x.double() * 3).exp()), x)
    assert any("runs as an ATen op" in st.reason for r in recs for st in r.steps)
    _cuda_kernels(recs)


def test_kernels_run_on_the_current_stream():
    x = rand(1024, 1024)
    fn = torch.compile(lambda x: torch.tanh(x) * x + 1, backend="autofuse")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        got = fn(x)
    s.synchronize()
    torch.testing.assert_close(got, torch.tanh(x) * x + 1)


FUZZ_CASES = int(os.environ.get("AUTOFUSE_GPU_FUZZ_CASES", "25"))


@pytest.mark.parametrize("fuzzer", ["test_random_graphs", "test_random_reduce_graphs", "test_random_concat_graphs"])
def test_a_slice_of_each_fuzzer_on_cuda(fuzzer):
    """The fuzzers' first programs with their inputs on the GPU, compiled and run against eager
    on the GPU (eager's own CUDA kernels), at the dtype's tolerance."""
    from helpers import mixed_f64_tolerance

    module = importlib.import_module(fuzzer)
    ran = 0
    for seed in range(FUZZ_CASES):
        case = module.Case(seed)
        args = [a.cuda() if isinstance(a, torch.Tensor) else a for a in case.inputs()]
        try:
            expected = case.fn(*args)
        except RuntimeError:  # an integer division by 0 raises as eager does
            continue
        torch._dynamo.reset()
        got = torch.compile(case.fn, backend="autofuse", dynamic=False)(*args)
        for k, (g, e) in enumerate(zip(got, expected)):
            tol = mixed_f64_tolerance(case.repro(), e.dtype)
            if e.dtype in (torch.float16, torch.bfloat16):
                tol = dict(rtol=2e-2, atol=2e-2)
            torch.testing.assert_close(g, e, equal_nan=True, **tol, msg=lambda m: f"output {k}: {m}\n{case.repro()}")
        ran += 1
    assert ran > FUZZ_CASES // 2
