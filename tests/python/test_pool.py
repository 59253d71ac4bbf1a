"""Max pooling in inference graphs as the maximum of strided views of the -inf padded input
(pool_decompositions.py): kernels instead of ATen's NCHW max_pool2d; under grad ATen's op."""

import pytest
import torch
import torch.nn.functional as F

import autofuse
from autofuse._C import StepKind
from helpers import compile_fn, only_record


@pytest.mark.parametrize("args", [(3, 2, 1), (2, 2, 0), (3, 1, 1), ((3, 2), (2, 1), (1, 0)), (3, 2, 1, 2)])
@pytest.mark.parametrize("shape", [(2, 8, 17, 19), (3, 9, 10)])
def test_max_pool2d_in_inference_is_kernels(args, shape):
    torch.manual_seed(0)
    x = torch.randn(shape)
    x.view(-1)[5] = float("nan")  # NaN propagates through the window's maximum, as eager's

    def f(x):
        return torch.relu(F.max_pool2d(x, *args))

    with torch.no_grad():
        torch.testing.assert_close(compile_fn(f)(x), f(x), equal_nan=True)
    rec = only_record()
    left = [rec.translation.nodes[s.ops[0]].origin for s in rec.steps if s.kind == StepKind.opaque]
    assert not any("max_pool" in o for o in left), left
    assert any(s.kind == StepKind.kernel for s in rec.steps)


def test_max_pool2d_under_grad_keeps_atens_op():
    """A differentiated pooling keeps ATen's op (its backward reads the indices)."""
    torch.manual_seed(0)
    x = torch.randn(2, 4, 12, 12)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    f = lambda x: torch.relu(F.max_pool2d(x, 3, 2, 1)) * 2  # noqa: E731
    compile_fn(f)(xb).sum().backward()
    f(xa).sum().backward()
    torch.testing.assert_close(xb.grad, xa.grad)
    fw = [r for r in autofuse.compiled_graphs() if r.tag == "fw"][0]
    assert any("max_pool2d_with_indices" in fw.translation.nodes[s.ops[0]].origin
               for s in fw.steps if s.kind == StepKind.opaque)


def test_max_pool2d_beyond_the_rule_keeps_atens_op():
    """ceil_mode and windows over MAX_TAPS taps keep ATen's op, with its result."""
    x = torch.randn(2, 3, 16, 16)
    for f in (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), lambda x: F.max_pool2d(x, 7, 1, 3)):
        autofuse.reset_records()
        with torch.no_grad():
            torch.testing.assert_close(compile_fn(f)(x), f(x))
        assert any("max_pool" in n.origin for n in only_record().translation.nodes)
