"""Inputs a graph writes (a static KV cache's index_copy_) are updated in place
(input_updates.py): the same values as eager, without copies of the whole input."""

import torch

import autofuse  # noqa: F401  (registers the backend)


class CacheWrite(torch.nn.Module):
    """A static cache written at `pos` and read whole, as Hugging Face's StaticCache layer is."""

    def __init__(self, read_before: bool = False):
        super().__init__()
        self.register_buffer("keys", torch.zeros(2, 16, 8))
        self.read_before = read_before

    def forward(self, pos: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
        before = self.keys.sum() if self.read_before else 0.0
        self.keys.index_copy_(1, pos, new)
        return torch.softmax(self.keys * 2.0, dim=-1).sum(1) + before


def _ops(fn) -> dict:
    """aten op name -> [input shapes of each call] over one call of `fn` under torch.profiler."""
    with torch.profiler.profile(record_shapes=True) as prof:
        fn()
    calls: dict = {}
    for e in prof.events():
        calls.setdefault(e.name, []).append(e.input_shapes)
    return calls


def _run(read_before: bool):
    torch._dynamo.reset()
    eager, compiled = CacheWrite(read_before), CacheWrite(read_before)
    step = torch.compile(compiled, backend="autofuse")
    ops, got = None, []
    with torch.no_grad():
        for t in range(6):
            pos, new = torch.tensor([t]), torch.randn(2, 1, 8)
            want = eager(pos, new)
            if t == 5:  # the graph is compiled by now: count its ops
                ops = _ops(lambda: got.append(step(pos, new)))
            else:
                got.append(step(pos, new))
            torch.testing.assert_close(got[-1], want)
            torch.testing.assert_close(compiled.keys, eager.keys)
    return ops


def test_cache_write_runs_in_place_and_matches_eager():
    ops = _run(read_before=False)
    # The functional index_put clones the whole cache; the in-place one writes one row. (The
    # wrapper's copy_ of the updated input onto itself is still called and returns at once.)
    assert "aten::index_put_" in ops and "aten::index_put" not in ops, sorted(ops)
    clones = [s for s in ops.get("aten::clone", []) if s[:1] == [[2, 16, 8]]]
    assert not clones, clones


def test_cache_read_before_its_write_stays_out_of_place():
    # The input's old value is read after nothing else: the update must not clobber it first.
    ops = _run(read_before=True)
    assert "aten::index_put" in ops, sorted(ops)
