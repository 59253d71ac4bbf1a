"""PyTorch's OpInfo samples as a test suite: what PyTorch itself considers each op's contract.

Every op autofuse fuses, or decomposes into fused ops, runs every sample input OpInfo gives for
it on the CPU, in fp32, bf16, fp16 and the integer/bool dtypes the op takes, compiled with
autofuse (static shapes), against eager: the forward results, and for differentiable float ops
the gradients of the outputs' sum. A result (and a gradient) matches eager's at the dtype's
assert_close tolerance (bf16's for f16/bf16), or, where eager's own rounding moves it, the one
computed a precision wider (f16/bf16 in fp32, as helpers.reference_in_float; fp32 in fp64)
rounded once.

`make test` runs a slice (the largest sample of every op in fp32, of every fourth op in bf16);
`make opinfo` (AUTOFUSE_OPINFO=all) runs all of it. A sample we knowingly differ on is listed
in XFAIL with its reason. op_db needs `expecttest` (a development dependency).
"""

import os

import pytest
import torch

from torch.testing._internal.common_methods_invocations import op_db  # needs expecttest

from torch.utils import _pytree as pytree

import autofuse
from helpers import compile_fn

# OpInfo names (name, variant_test_name) autofuse fuses or decomposes into fused ops
# (python/autofuse/aten_table.py and decompositions.py).
OPS = [
    # unary pointwise
    "abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt",
    "reciprocal", "sigmoid", "tanh", "erf", "sin", "cos", "sign", "floor", "ceil", "trunc",
    "round", "frac", "square", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not",
    "nn.functional.relu", "nn.functional.silu", "nn.functional.gelu", "nn.functional.elu",
    "nn.functional.leaky_relu", "nn.functional.hardtanh", "nn.functional.relu6",
    "nn.functional.hardsigmoid", "nn.functional.hardswish", "nn.functional.softplus",
    "nn.functional.mish", "nn.functional.tanhshrink", "nn.functional.softsign",
    "nn.functional.logsigmoid",
    # binary pointwise
    "add", "sub", "mul", ("div", "no_rounding_mode"), ("div", "trunc_rounding"),
    ("div", "floor_rounding"), "true_divide", ("max", "binary"), ("min", "binary"), "pow", "maximum", "minimum",
    "clamp", "clamp_min", "clamp_max", "where", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "lerp", "addcmul", "addcdiv", "rsub", "xlogy", "remainder", "fmod", "floor_divide",
    "bitwise_left_shift", "bitwise_right_shift",
    # reductions
    "sum", "mean", "amax", "amin", "prod", "var", "std", "var_mean", "std_mean", "logsumexp",
    "norm", "linalg.vector_norm", "all", "any", ("max", "reduction_with_dim"),
    ("min", "reduction_with_dim"), ("max", "reduction_no_dim"), ("min", "reduction_no_dim"),
    # normalizations and softmaxes
    "softmax", "log_softmax", ("softmax", "with_dtype"), ("log_softmax", "with_dtype"), "_softmax_backward_data", "nn.functional.softmin",
    "nn.functional.layer_norm", "nn.functional.rms_norm", "nn.functional.group_norm",
    "nn.functional.normalize", "nn.functional.batch_norm",
    # losses
    "nn.functional.cross_entropy", "nn.functional.nll_loss", "nn.functional.mse_loss",
    "nn.functional.l1_loss", "nn.functional.smooth_l1_loss", "nn.functional.huber_loss",
    "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
    "nn.functional.kl_div",
    # concatenation
    "cat", "stack", "hstack", "vstack",
]

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool]

# test id ("div.trunc_rounding-bfloat16-5") -> why our result differs from eager there
# (strict: a case that starts passing must leave this table).
XFAIL = {}


LOW = (torch.bfloat16, torch.float16)


def _find(entry):
    name, variant = entry if isinstance(entry, tuple) else (entry, "")
    for op in op_db:
        if op.name == name and op.variant_test_name == variant:
            return op
    raise LookupError(f"no OpInfo {entry!r} in this torch")


def _cases():
    full = os.environ.get("AUTOFUSE_OPINFO") == "all"
    for n, entry in enumerate(OPS):
        op = _find(entry)
        name = ".".join(entry) if isinstance(entry, tuple) else entry
        for dtype in DTYPES:
            if dtype not in op.supported_dtypes("cpu"):
                continue
            if not full and dtype != torch.float32 and (dtype != torch.bfloat16 or n % 4):
                continue
            torch.manual_seed(0)
            grad = op.supports_autograd and dtype.is_floating_point
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=grad))  # as the test makes them
            # The slice: the sample with the most elements (the first ones are often scalars).
            largest = max(range(len(samples)), key=lambda i: _numel(samples[i]))
            picked = range(len(samples)) if full else [largest]
            for i in picked:
                case = f"{name}-{str(dtype)[6:]}-{i}"
                marks = [pytest.mark.xfail(reason=XFAIL[case], strict=True)] if case in XFAIL else []
                yield pytest.param(op, dtype, i, id=case, marks=marks)


def _numel(sample):
    return sum(t.numel() for t in _tensors((sample.input, sample.args, sample.kwargs)))


def _tensors(tree):
    return [t for t in pytree.tree_leaves(tree) if isinstance(t, torch.Tensor)]


def _tolerance(dtype):
    return {"atol": 1e-2, "rtol": 1.6e-2} if dtype in LOW else {}


def _widened(tree, dtype):
    """The sample with every `dtype` tensor a fresh leaf one precision wider (f16/bf16 -> fp32,
    fp32 -> fp64), requires_grad kept, and a `dtype` argument naming it widened too; an integer
    or bool sample as it is (exact already, and bitwise ops take no float)."""
    if not dtype.is_floating_point:
        return tree
    wide = torch.float32 if dtype in LOW else torch.float64

    def up(t):
        if isinstance(t, torch.Tensor) and t.dtype == dtype:
            return t.detach().to(wide).requires_grad_(t.requires_grad)
        if isinstance(t, torch.dtype) and t == dtype:  # _softmax_backward_data's input_dtype
            return wide
        return t
    return pytree.tree_map(up, tree)


def _grads(outputs, inputs):
    outs = [o for o in _tensors(outputs) if o.requires_grad]
    if not outs:
        return None
    return torch.autograd.grad([o.double().sum() for o in outs], inputs, allow_unused=True)


def _no_worse_than_eager(got, eager, wide, dtype):
    """Per element, got is at most as far from `wide` (the result a precision wider) as eager
    is, plus the dtype's tolerance: after a cancellation (bf16 binary_cross_entropy_with_logits,
    `(1 - y) * x - log_sigmoid(x)` of two values near -3.9) eager, a kernel keeping fp32 and
    the fp32 result all differ by more than bf16's tolerance, and the kernel is the closest),
    with 2 f16/bf16 ulps at the tensor's scale to spare."""
    rtol, atol = (1.6e-2, 1e-2) if dtype in LOW else (1.3e-6, 1e-5)
    for g, e, w in zip(_tensors(got), _tensors(eager), _tensors(wide)):
        if g.dtype in (torch.bool,) or not g.is_floating_point():
            return False
        low = e.dtype if e.dtype in LOW else None
        g, e, w = g.detach().double(), e.detach().double(), w.detach().double()
        same = (g == e) | (torch.isnan(g) & torch.isnan(e))
        # plus 2 ulps of f16/bf16 at the tensor's scale: a cancellation of two rounded terms
        # leaves an ulp of the terms, which side gets less is luck (as the fuzzers allow)
        finite = torch.isfinite(w)
        scale = w[finite].abs().max().item() if bool(finite.any()) else 0.0
        slack = 2 * torch.finfo(low).eps * scale if low is not None else 0.0
        ok = same | ((g - w).abs() <= (e - w).abs() + atol + rtol * w.abs() + slack)
        if not bool(ok.all()):
            return False
    return True


def _assert_close_to_either(got, eager, wide, what, dtype):
    """got matches eager's result at the dtype's tolerance, or the one computed a precision
    wider and rounded to eager's dtypes (where eager's own rounding moves it off the math: a
    kernel keeps fp32 between f16/bf16 ops; eager's fp32 layer_norm of one element leaves a
    residue of 2e-5 in x - mean where the math, fp64 and a fused kernel have 0), or is no
    farther from the wider result than eager (_no_worse_than_eager)."""
    try:
        torch.testing.assert_close(got, eager, equal_nan=True, **_tolerance(dtype))
    except AssertionError as first:
        rounded = pytree.tree_map(lambda w, e: w.to(e.dtype) if isinstance(w, torch.Tensor) else w, wide, eager)
        try:
            torch.testing.assert_close(got, rounded, equal_nan=True, **_tolerance(dtype))
        except AssertionError as second:
            if not _no_worse_than_eager(got, eager, wide, dtype):
                raise AssertionError(f"{what}: vs eager: {first}\nvs one precision wider: {second}") from None


@pytest.mark.parametrize("op,dtype,index", list(_cases()))
def test_opinfo(op, dtype, index):
    grad = op.supports_autograd and dtype.is_floating_point
    torch.manual_seed(0)
    sample = list(op.sample_inputs("cpu", dtype, requires_grad=grad))[index]
    call = (sample.input, sample.args, sample.kwargs)
    compiled = compile_fn(lambda x, args, kwargs: op(x, *args, **kwargs))
    got = compiled(*call)
    crashed = [r.fallback for r in autofuse.compiled_graphs() if r.fallback and "failed" in r.fallback]
    assert not crashed, crashed

    eager = op(call[0], *call[1], **call[2])
    wide_call = _widened(call, dtype)
    wide = op(wide_call[0], *wide_call[1], **wide_call[2])
    _assert_close_to_either(got, eager, wide, "result", dtype)
    if not grad:
        return
    inputs = [t for t in _tensors(call) if t.requires_grad]
    ours, theirs = _grads(got, inputs), _grads(eager, inputs)
    if ours is None or theirs is None:
        assert (ours is None) == (theirs is None)
        return
    wide_grads = _grads(wide, [t for t in _tensors(wide_call) if t.requires_grad])
    _assert_close_to_either(list(ours), list(theirs), list(wide_grads), "gradients", dtype)
