"""Linear layers run on oneDNN/MKL with packed weights (packed_linear.py): same results as eager;
in inference kept across calls and repacked after any write to the weight through PyTorch
(`.data` included); in training packed per call where that pays; never for activations; off on
request."""

import dataclasses
import itertools

import pytest
import torch

import autofuse
from autofuse import packed_linear
from helpers import check_packs_kept_until_written, compile_fn

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


def _write_every_way(m):
    """Changes m's weights through each path a user has: through the parameter, `.data` (its own
    version counter), a NumPy view (none), a new storage, load_state_dict."""
    with torch.no_grad():
        yield m.fc1.weight.mul_(-0.5)
    yield m.fc1.weight.data.mul_(0.5)
    if m.fc1.weight.dtype == torch.float32:
        yield m.fc2.weight.detach().numpy().__imul__(-2)
    m.fc2.weight.data = torch.randn_like(m.fc2.weight) * 0.1
    yield
    yield m.load_state_dict({k: torch.randn_like(v) * 0.1 for k, v in m.state_dict().items()})


@pytest.fixture
def pack_count(monkeypatch):
    """A list that grows by one per pack made by graphs compiled after the fixture starts."""
    made = []
    libs = {d: lib if lib.pack is None else dataclasses.replace(lib, pack=lambda w, rows, f=lib.pack: made.append(1) or f(w, rows))
            for d, lib in packed_linear.libraries().items()}
    monkeypatch.setattr(packed_linear, "libraries", lambda: libs)
    return made


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("conv1d", [False, True])
@pytest.mark.parametrize("rows", [10, 512])
def test_inference_keeps_packs_and_sees_every_write(dtype, conv1d, rows, pack_count):
    # Packed where a library serves the dtype on this CPU (CHOICES), ATen's call elsewhere;
    # right either way. bf16: the bias add moves into GELU's kernel (bias_epilogue.py) and
    # rounds after the product does, as ATen's addmm does too but not always in the same order:
    # results near zero differ by a bf16 rounding of the product (up to 0.019 in 12,288 values
    # of magnitude up to 4). f16: GELU's kernel (AVX-512: a polynomial, not eager's erf formula)
    # rounds a value to f16 the other way now and then, which fc2 and w3 carry to the output
    # (4.6e-5 where eager's default tolerance is 1e-5; both as far from float64, RMS 2.7e-4).
    linears = 3 if conv1d else 2
    packs = dtype in packed_linear.libraries()
    tol = {torch.bfloat16: dict(atol=3e-2, rtol=1.6e-2), torch.float16: dict(atol=1e-3, rtol=1e-3)}.get(dtype, {})
    torch.manual_seed(0)
    m = Mlp(conv1d).to(dtype).eval()
    f = compile_fn(m)
    x = torch.randn(rows, 32, dtype=dtype)
    with torch.no_grad():
        out, calls = _linear_calls(f, x)
        torch.testing.assert_close(out, m(x), **tol)
        assert calls == (linears if packs else 0)
        check_packs_kept_until_written(f, m, x, _write_every_way, pack_count, tol)


def test_a_write_through_an_earlier_raw_pointer_is_not_seen(monkeypatch):
    # The documented limit (docs/reliability.md): a NumPy view taken before the first call
    # writes the storage without PyTorch, so nothing tells the kept pack; no packing sees it.
    # (A library that keeps no pack, oneDNN on the plain weight, sees it: test below.)
    kept = packed_linear._ONEDNN if torch.backends.mkldnn.is_available() else packed_linear._MKL
    libs = {**packed_linear.libraries(), torch.float32: kept}
    monkeypatch.setattr(packed_linear, "libraries", lambda: libs)
    torch.manual_seed(0)
    m = Mlp().eval()
    view = m.fc1.weight.detach().numpy()
    x = torch.randn(3, 32)
    f, g = compile_fn(m), compile_fn(m, autofuse.CompilerConfig(pack_weights=False))
    with torch.no_grad():
        before = f(x)
        g(x)
        view *= -1
        torch.testing.assert_close(f(x), before)
        torch.testing.assert_close(g(x), m(x))
        assert not torch.allclose(before, m(x))


def test_the_plain_weight_library_keeps_nothing_and_sees_every_write(monkeypatch):
    # oneDNN's linear on the weight as it is: no reorder, no second copy, so even a write
    # through a raw pointer taken before the first call is seen.
    if not torch.backends.mkldnn.is_available():
        pytest.skip("torch without oneDNN")
    libs = {**packed_linear.libraries(), torch.float32: packed_linear._ONEDNN_PLAIN}
    monkeypatch.setattr(packed_linear, "libraries", lambda: libs)
    torch.manual_seed(0)
    m = Mlp(conv1d=True).eval()
    view = m.fc1.weight.detach().numpy()
    f = compile_fn(m)
    x = torch.randn(3, 32)
    with torch.no_grad():
        out, calls = _linear_calls(f, x)
        torch.testing.assert_close(out, m(x))
        assert calls == 3
        with torch.profiler.profile() as prof:
            view *= -1
            torch.testing.assert_close(f(x), m(x))
    assert not any("reorder" in e.name for e in prof.events())


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


@pytest.fixture
def per_call_packs(monkeypatch):
    """This CPU's fp32 library, packing on each training call from 512 rows (the table's rows
    for some CPUs: MKL's), so the per-call path runs on every machine."""
    lib = packed_linear.libraries().get(torch.float32)
    if lib is None:
        pytest.skip("no fp32 packed linear")
    pinned = {**packed_linear.libraries(), torch.float32: dataclasses.replace(lib, per_call_rows=512)}
    monkeypatch.setattr(packed_linear, "libraries", lambda: pinned)


@pytest.mark.parametrize("rows", [4, 512])
def test_training_steps_see_each_optimizer_step(rows, per_call_packs):
    # A training graph keeps no pack: from Library.per_call_rows rows it packs on each call.
    torch.manual_seed(0)
    m, ref = Mlp(), Mlp()
    ref.load_state_dict(m.state_dict())
    f = compile_fn(m)
    opt, opt_ref = torch.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(rows, 32)
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


def test_backward_reads_the_saved_weights_packed(per_call_packs):
    torch.manual_seed(0)
    m, ref = Mlp(), Mlp()
    ref.load_state_dict(m.state_dict())
    f = compile_fn(m)
    x = torch.randn(512, 32, requires_grad=True)
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


def test_training_packs_per_call_only_where_the_table_says():
    # On Zen 4 oneDNN's fp32 per-call packs made whole training steps slower (packed_linear).
    torch.manual_seed(0)
    m = Mlp()
    f = compile_fn(m)
    x = torch.randn(512, 32)
    f(x).sum().backward()  # compiles forward and backward
    with torch.profiler.profile() as prof:
        f(x).square().sum().backward()
    assert sum(e.name in _PACKED for e in prof.events()) == _per_call_packs(torch.float32, 512)


def _per_call_packs(dtype: torch.dtype, rows: int) -> int:
    """How many packs a training step of Mlp makes at `rows` rows by the table: the forward's
    two linears and the backward's input gradient of fc2 (x needs none), or none."""
    lib = packed_linear.libraries().get(dtype)
    lib = lib.training or lib if lib is not None else None
    packs = lib is not None and lib.per_call_rows is not None and lib.per_call_rows <= rows
    return 3 if packs else 0


def test_bf16_packs_in_training_only_where_the_table_says():
    # A training step would repack every bf16 weight for no measured gain, except where bf16 is
    # computed in fp32 (a CPU without bf16 arithmetic).
    torch.manual_seed(0)
    m = Mlp().to(torch.bfloat16)
    ref = Mlp().to(torch.bfloat16)
    ref.load_state_dict(m.state_dict())
    f = compile_fn(m)
    x = torch.randn(512, 32, dtype=torch.bfloat16)
    f(x).float().sum().backward()  # compiles forward and backward
    with torch.profiler.profile() as prof:
        out = f(x)
        out.float().square().sum().backward()
    assert sum(e.name in _PACKED for e in prof.events()) == _per_call_packs(torch.bfloat16, 512)
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
    if lib.call is packed_linear._onednn_linear and (
            not torch.backends.mkldnn.is_available()
            or dtype == torch.bfloat16 and not torch.ops.mkldnn._is_mkldnn_bf16_supported()):
        pytest.skip("oneDNN does not run this dtype on this CPU")
    tol = dict(atol=1e-2, rtol=1.6e-2) if dtype == torch.bfloat16 else {}
    torch.manual_seed(0)
    x, w, b = (torch.randn(*s, dtype=dtype) for s in ((rows, 48), (40, 48), (40,)))
    for pack_rows in (rows,) if lib.per_rows else (rows, rows + 3):
        pack = w if lib.pack is None else lib.pack(w, pack_rows)
        for bias, want in ((b, torch.addmm(b, x, w.t())), (None, torch.mm(x, w.t()))):
            torch.testing.assert_close(lib.call(x, pack, w, bias, rows), want, **tol)
            if lib.call_into is not None:
                out = torch.empty(rows, 40, dtype=dtype)
                lib.call_into(x, pack, w, bias, rows, out)
                torch.testing.assert_close(out, want, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_linear_rows_matches_eager_at_every_row_count_and_tail(dtype):
    # The runtime's few-row linear (runtime/linear_rows.h) on [N, K] and [K, N] weights: every row count
    # it takes, K with and without a vector tail, rows of x and W apart by more than K, bias or
    # none; as close to float64 as eager's linear (bf16: the same products and one rounding).
    if not packed_linear.linear_rows_supported(dtype):
        pytest.skip("this CPU lacks the instructions")
    torch.manual_seed(0)
    for rows in (*range(1, 10), 16, 17, 30):
        for n, k in ((1, 1), (7, 33), (13, 64), (40, 200), (130, 97), (2100, 6)):
            x = torch.randn(rows, k + 5, dtype=dtype)[:, :k]
            w_nk = torch.randn(n, k + 3, dtype=dtype)[:, :k]
            w_kn = torch.randn(k, n + 3, dtype=dtype)[:, :n]  # GPT-2's Conv1D: stored [K, N]
            for b, w in itertools.product((torch.randn(n, dtype=dtype), None), (w_nk, w_kn)):
                kn = w is w_kn
                got = packed_linear._few_rows(x, w, b, kn)  # also where it would not pay
                if kn:
                    w = w.t()
                exact = x.double() @ w.double().t() + (0 if b is None else b.double())
                eager = torch.nn.functional.linear(x, w, b)
                bound = (eager.double() - exact).abs().max().item()
                ulp = exact.abs().max().item() * (2 ** -8 if dtype == torch.bfloat16 else 2 ** -23)
                assert (got.double() - exact).abs().max().item() <= 2 * bound + ulp, (rows, n, k, b is None, kn)
    # Rows of x that overlap (an expanded row: stride 0) go to the library's own call.
    x = torch.randn(1, 40, dtype=dtype).expand(3, 40)
    w, b = torch.randn(24, 40, dtype=dtype), torch.randn(24, dtype=dtype)
    assert not packed_linear._few_rows_pay(x, w, b, False)
