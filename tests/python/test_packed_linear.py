"""Linear layers run on oneDNN with packed weights (packed_linear.py): same results as eager,
repacked whenever the weight changes through PyTorch, never for activations, off on request."""

import pytest
import torch

import autofuse
from autofuse import packed_linear
from helpers import compile_fn

pytestmark = pytest.mark.skipif(not packed_linear.available(), reason="torch without oneDNN")


class Mlp(torch.nn.Module):
    def __init__(self, conv1d=False):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 16, bias=False)
        # GPT-2's Conv1D: a weight stored [in, out], read by addmm without a transpose.
        self.w3 = torch.nn.Parameter(torch.randn(16, 24)) if conv1d else None
        self.b3 = torch.nn.Parameter(torch.randn(24)) if conv1d else None

    def forward(self, x):
        y = self.fc2(torch.nn.functional.gelu(self.fc1(x)))
        if self.w3 is not None:
            y = torch.addmm(self.b3, y.reshape(-1, 16), self.w3).view(*x.shape[:-1], 24)
        return y


_PACKED = (packed_linear.LABEL,)


def _linear_calls(f, *args):
    """(result, number of packed linear calls) of one call of f under the profiler (after a
    first call, which compiles)."""
    f(*args)
    with torch.profiler.profile() as prof:
        out = f(*args)
    return out, sum(e.name in _PACKED for e in prof.events())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("conv1d", [False, True])
def test_inference_runs_packed_and_follows_weight_updates(dtype, conv1d):
    # Packed where a library serves the dtype on this CPU (fp32 MKL; bf16 by CPU feature,
    # packed_linear._BF16_LIBRARIES), ATen's call elsewhere; right either way.
    packs = dtype in packed_linear.libraries()
    # bf16: the bias add moves into GELU's kernel (bias_epilogue.py) and rounds after the
    # product does, as ATen's addmm does too but not always in the same order: results near
    # zero differ by a bf16 rounding of the product.
    tol = dict(atol=1e-2, rtol=1.6e-2) if dtype == torch.bfloat16 else {}
    torch.manual_seed(0)
    m = Mlp(conv1d).to(dtype).eval()
    f = compile_fn(m)
    x = torch.randn(2, 5, 32, dtype=dtype)
    with torch.no_grad():
        out, calls = _linear_calls(f, x)
        torch.testing.assert_close(out, m(x), **tol)
        assert calls == ((3 if conv1d else 2) if packs else 0)
        # In-place writes through PyTorch bump the version counter: the next call repacks.
        m.fc1.weight.mul_(-0.5)
        torch.testing.assert_close(f(x), m(x), **tol)
        m.fc2.weight.data = torch.randn_like(m.fc2.weight) * 0.1  # a new storage
        torch.testing.assert_close(f(x), m(x), **tol)
        m.load_state_dict({k: torch.randn_like(v) * 0.1 for k, v in m.state_dict().items()})
        torch.testing.assert_close(f(x), m(x), **tol)


def test_dynamic_row_counts_each_get_their_pack():
    # MKL's packed sgemm serves the row count it was packed for: each count gets its own.
    m = Mlp().eval()
    f = torch.compile(m, backend="autofuse", dynamic=True)
    with torch.no_grad():
        for rows in (5, 9, 5, 17, 3):
            x = torch.randn(rows, 32)
            out, calls = _linear_calls(f, x)
            torch.testing.assert_close(out, m(x))
            assert calls == 2


def test_training_steps_repack_after_each_optimizer_step():
    torch.manual_seed(0)
    m, ref = Mlp(), Mlp()
    ref.load_state_dict(m.state_dict())
    f = compile_fn(m)
    opt, opt_ref = torch.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(4, 32)
        outs = []
        for fn, o in ((f, opt), (ref, opt_ref)):
            o.zero_grad()
            outs.append(fn(x))
            outs[-1].square().mean().backward()
            o.step()
        torch.testing.assert_close(outs[0], outs[1])  # the forward saw the last step's weights
    x = torch.randn(4, 32)
    with torch.no_grad():
        torch.testing.assert_close(f(x), ref(x))
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q)


def test_activations_and_disabled_packing_use_plain_aten():
    torch.manual_seed(0)
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    f = compile_fn(lambda a, b: torch.mm(a.exp(), b) + 1)  # no parameter: nothing to pack
    with torch.no_grad():
        out, calls = _linear_calls(f, a, b)
    torch.testing.assert_close(out, torch.mm(a.exp(), b) + 1)
    assert calls == 0
    m = Mlp().eval()
    g = compile_fn(m, autofuse.CompilerConfig(pack_weights=False))
    x = torch.randn(3, 32)
    with torch.no_grad():
        out, calls = _linear_calls(g, x)
    torch.testing.assert_close(out, m(x))
    assert calls == 0


def test_inference_mode_weights_run_plain():
    with torch.inference_mode():
        m = Mlp().eval()
        x = torch.randn(3, 32)
        f = compile_fn(m)
        torch.testing.assert_close(f(x), m(x))


def test_backward_reads_the_saved_weights_packed():
    torch.manual_seed(0)
    m, ref = Mlp(), Mlp()
    ref.load_state_dict(m.state_dict())
    f = compile_fn(m)
    x = torch.randn(4, 32, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    f(x).sum().backward()  # compiles forward and backward
    m.zero_grad()
    x.grad = None
    with torch.profiler.profile() as prof:
        out = f(x)
        out.square().sum().backward()
    ref(x_ref).square().sum().backward()
    # Forward: fc1 and fc2; backward: the input gradients of fc2 and of fc1 (fc1's reaches x).
    assert sum(e.name in _PACKED for e in prof.events()) == 4
    torch.testing.assert_close(x.grad, x_ref.grad)
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_bf16_packs_for_inference_only():
    # A training step would repack every bf16 weight (a copy) for no measured gain.
    torch.manual_seed(0)
    m = Mlp().to(torch.bfloat16)
    ref = Mlp().to(torch.bfloat16)
    ref.load_state_dict(m.state_dict())
    f = compile_fn(m)
    x = torch.randn(4, 32, dtype=torch.bfloat16)
    f(x).float().sum().backward()  # compiles forward and backward
    with torch.profiler.profile() as prof:
        out = f(x)
        out.float().square().sum().backward()
    assert sum(e.name in _PACKED for e in prof.events()) == 0
    torch.testing.assert_close(out, ref(x))
    with torch.no_grad():
        out, calls = _linear_calls(f, x)
    torch.testing.assert_close(out, ref(x), atol=1e-2, rtol=1.6e-2)
    assert calls == (2 if torch.bfloat16 in packed_linear.libraries() else 0)


@pytest.mark.parametrize("dtype,row", [(d, i) for d, rows in packed_linear.CHOICES.items() for i in range(len(rows))])
@pytest.mark.parametrize("rows", [1, 7, 64])
def test_every_library_computes_the_linear(dtype, row, rows):
    # Every CPU's choice, run on this CPU where its library runs at all: the same values as
    # ATen's addmm/mm, and for a pack made for another row count where one pack serves any.
    choice = packed_linear.CHOICES[dtype][row]
    lib = choice.library
    if lib.pack is packed_linear._mkl_pack and not torch.backends.mkl.is_available():
        pytest.skip("torch without MKL")
    if lib.pack is not packed_linear._mkl_pack and (
            not torch.backends.mkldnn.is_available()
            or dtype == torch.bfloat16 and not torch.ops.mkldnn._is_mkldnn_bf16_supported()):
        pytest.skip("oneDNN does not run this dtype on this CPU")
    tol = dict(atol=1e-2, rtol=1.6e-2) if dtype == torch.bfloat16 else {}
    torch.manual_seed(0)
    x, w, b = (torch.randn(*s, dtype=dtype) for s in ((rows, 48), (40, 48), (40,)))
    for pack_rows in (rows,) if lib.per_rows else (rows, rows + 3):
        pack = lib.pack(w, pack_rows)
        for bias, want in ((b, torch.addmm(b, x, w.t())), (None, torch.mm(x, w.t()))):
            torch.testing.assert_close(lib.call(x, pack, w, bias, rows), want, **tol)
            if lib.call_into is not None:
                out = torch.empty(rows, 40, dtype=dtype)
                lib.call_into(x, pack, w, bias, rows, out)
                torch.testing.assert_close(out, want, **tol)
