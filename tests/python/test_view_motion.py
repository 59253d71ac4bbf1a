"""view_motion.py's permute sink: an elementwise op whose operands are one permutation of values
laid out row-major, one of them computed by a kernel, runs in that kernel, in the values' own
order (ConvNeXt's residual add after its layer scale); results and their strides equal eager's.
(Reshapes sinking and hoisting: test_norms.py's GroupNorm tests.)"""

import torch
import torch.nn.functional as F

import autofuse
from helpers import compile_fn, kernel_steps

C = 8


def _tail(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """ConvNeXt's block after its convolution: the NHWC LayerNorm (kernel A), a matmul, the layer
    scale (kernel B) and the residual add of the NCHW input (channels-last) to the scaled value
    permuted back."""
    h = F.layer_norm(x.permute(0, 2, 3, 1), (C,))
    s = (h.reshape(-1, C) @ w).reshape(h.shape) * 0.5
    return x + s.permute(0, 3, 1, 2)


def _two_permutes(x: torch.Tensor, w: torch.Tensor, dims=(0, 3, 1, 2)) -> torch.Tensor:
    """Both operands of the add are permutes of values kernels compute (A's and B's)."""
    h = F.layer_norm(x, (C,))
    s = (h.reshape(-1, C) @ w).reshape(h.shape) * 0.5
    return h.permute(0, 3, 1, 2) + s.permute(*dims)


def _kernel_ops(rec):
    return [set(ops) for _, ops, _, _ in kernel_steps(rec)]


def _strides(t: torch.Tensor) -> list:
    """t's strides where they matter (size-1 dims' strides are free, as in eager's own checks)."""
    return [st for st, n in zip(t.stride(), t.shape) if n > 1]


def _check(fn, *args):
    with torch.no_grad():
        want = fn(*args)
        got = compile_fn(fn)(*args)
    torch.testing.assert_close(got, want)
    assert _strides(got) == _strides(want), (got.stride(), want.stride())
    (rec,) = autofuse.compiled_graphs()
    assert rec.fallback == "", rec.fallback
    return _kernel_ops(rec)


def _joined(kernels, *ops) -> bool:
    """Whether one kernel computes every op whose name starts with one of `ops`."""
    return any(all(any(o.startswith(p) for o in k) for p in ops) for k in kernels)


def test_residual_add_of_a_channels_last_input_joins_the_layer_scale_kernel():
    x = torch.randn(2, C, 5, 6).contiguous(memory_format=torch.channels_last)
    kernels = _check(_tail, x, torch.randn(C, C))
    assert len(kernels) == 2 and _joined(kernels, "mul", "add"), kernels


def test_add_of_two_permuted_kernel_values_joins_one_kernel():
    kernels = _check(_two_permutes, torch.randn(2, 5, 6, C), torch.randn(C, C))
    assert len(kernels) == 2 and _joined(kernels, "mul", "add"), kernels


def test_different_permutations_stay_apart():
    """permute(h, [0, 3, 1, 2]) + permute(s, [0, 3, 2, 1]): no one order serves both operands."""
    kernels = _check(lambda x, w: _two_permutes(x, w, (0, 3, 2, 1)), torch.randn(2, 6, 6, C), torch.randn(C, C))
    assert len(kernels) == 3, kernels


def test_a_row_major_operand_keeps_the_add_apart():
    """x NCHW row-major: x + permute(s) reads x across its rows, so the add stays its own kernel
    in x's layout (eager's output strides)."""
    kernels = _check(_tail, torch.randn(2, C, 5, 6), torch.randn(C, C))
    assert len(kernels) == 3, kernels


def test_permute_sink_under_dynamic_shapes():
    """Symbolic sizes: the sink compares shapes and layouts without guarding on them."""
    torch.manual_seed(0)
    w = torch.randn(C, C)
    f = torch.compile(_two_permutes, backend="autofuse", dynamic=True)
    with torch.no_grad():
        for n, h in [(2, 5), (3, 7), (4, 3)]:
            x = torch.randn(n, h, 6, C)
            got, want = f(x, w), _two_permutes(x, w)
            torch.testing.assert_close(got, want)
            assert _strides(got) == _strides(want)
    recs = autofuse.compiled_graphs()
    assert recs and all(r.fallback == "" and len(_kernel_ops(r)) == 2 for r in recs), recs


def test_a_clone_to_row_major_keeps_its_permute():
    """clone(permute(y), contiguous_format) chooses its layout: it is no permute's consumer to
    sink below (the view after it reads the row-major copy, as in eager)."""
    def f(x):
        return (torch.tanh(x).permute(0, 2, 1).contiguous().view(x.shape[0], -1) * 2).view(-1, 3)

    _check(f, torch.randn(2, 6, 5))


def test_size_one_dims_end_the_pass():
    """At 1 x 1 pixels a channels-last value a kernel computes is row-major too (the layout
    checks see both): the pass ends and the results and strides equal eager's."""
    x = torch.randn(3, C, 1, 1).contiguous(memory_format=torch.channels_last)
    _check(lambda x, w: _tail(torch.relu(x), w), x, torch.randn(C, C))
