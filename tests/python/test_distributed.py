"""Distributed training with a compiled model: DDP and FSDP2 (fully_shard) over gloo, 2 processes
on localhost, every rank compiling with backend="autofuse" into one shared JIT cache. The
losses, gradients and parameters after a few steps match the same training run eagerly."""

import os
import socket
import tempfile

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD = 2
STEPS = 3


class _Block(torch.nn.Module):
    """A transformer-style MLP block: layer norm, GELU, a residual (fusible work between linears)."""

    def __init__(self, d=64):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)
        self.head = torch.nn.Linear(d, 10)

    def forward(self, x):
        h = x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))
        return self.head(torch.nn.functional.silu(h))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wrap(model, kind):
    if kind == "ddp":
        return torch.nn.parallel.DistributedDataParallel(model)
    from torch.distributed.fsdp import fully_shard

    fully_shard(model)
    return model


def _train(kind, compiled, rank):
    """(losses, gradients, parameters) of STEPS SGD steps on this rank's data, full tensors."""
    torch.manual_seed(0)
    model = _wrap(_Block(), kind)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = torch.compile(model, backend="autofuse") if compiled else model
    gen = torch.Generator().manual_seed(100 + rank)
    losses = []
    for _ in range(STEPS):
        x, y = torch.randn(16, 64, generator=gen), torch.randint(0, 10, (16,), generator=gen)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(step(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())

    def full(t):
        return t.full_tensor() if hasattr(t, "full_tensor") else t

    grads = [full(p.grad).clone() for p in model.parameters()]
    params = [full(p.detach()).clone() for p in model.parameters()]
    return torch.stack(losses), grads, params


def _rank(rank, kind, port, cache, result_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), AUTOFUSE_CACHE_DIR=cache)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        import autofuse

        eager = _train(kind, False, rank)
        torch._dynamo.reset()
        ours = _train(kind, True, rank)
        fallbacks = [r.fallback for r in autofuse.compiled_graphs() if r.fallback]
        kernels = sum(r.num_kernels for r in autofuse.compiled_graphs())
        torch.save({"eager": eager, "ours": ours, "fallbacks": fallbacks, "kernels": kernels},
                   os.path.join(result_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _run(kind):
    with tempfile.TemporaryDirectory(prefix="autofuse-dist-") as tmp:
        cache = os.path.join(tmp, "cache")  # one JIT cache shared by every rank
        mp.spawn(_rank, args=(kind, _free_port(), cache, tmp), nprocs=WORLD, join=True)
        return [torch.load(os.path.join(tmp, f"rank{r}.pt")) for r in range(WORLD)]


def _check(results):
    for rank, res in enumerate(results):
        assert res["fallbacks"] == [], (rank, res["fallbacks"])
        assert res["kernels"] > 0, rank
        (el, eg, ep), (ol, og, op) = res["eager"], res["ours"]
        torch.testing.assert_close(ol, el, msg=lambda m: f"rank {rank} losses: {m}")
        for what, got, want in (("gradient", og, eg), ("parameter", op, ep)):
            for i, (g, w) in enumerate(zip(got, want)):
                torch.testing.assert_close(g, w, msg=lambda m: f"rank {rank} {what} {i}: {m}")
    # Synchronised training: every rank ends with the same parameters.
    for a, b in zip(results[0]["ours"][2], results[1]["ours"][2]):
        torch.testing.assert_close(a, b)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="torch was built without gloo")
def test_ddp_training_matches_eager_ddp():
    _check(_run("ddp"))


@pytest.mark.skipif(not dist.is_gloo_available(), reason="torch was built without gloo")
def test_fsdp2_training_matches_eager_fsdp2():
    _check(_run("fsdp2"))
