"""The frontend's half of the golden model tests (tests/lit/golden): the Graph IR the frontend
writes for each benchmark model graph (AUTOFUSE_DUMP's gN.graph.ir, from bench/models.py at the
default shapes, compiled as bench_models.py compiles it) is the golden file's body, whose fusion,
schedule and C++ the lit tests hash. A change meant to change what the frontend writes reruns
`tests/lit/golden/update_golden.py --inputs DIR` and says so in its commit."""

import glob
import os
import sys

import pytest
import torch

import autofuse

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "lit", "golden")
sys.path[:0] = [os.path.join(HERE, "..", "..", "bench"), GOLDEN]

import bench_models  # noqa: E402  (bench/: the benchmark's own entry points)
from update_golden import body_of  # noqa: E402

# "bert_fp32", "gpt2_train", ...: the (model, config) of each golden pair of graphs.
CASES = sorted({os.path.basename(p)[:-3].rsplit("_", 1)[0] for p in glob.glob(os.path.join(GOLDEN, "*.ir"))})


def _without_name(text: str) -> str:
    """The Graph IR text with the graph's name (a process-wide counter) left out."""
    head, _, rest = text.partition("(")
    assert head.startswith("graph @"), head
    return "graph @_(" + rest


@pytest.mark.parametrize("case", CASES)
def test_frontend_writes_the_golden_graph_ir(case, tmp_path, pin_cpu):
    # the goldens' CPU (Zen 4): its layouts and bf16 math
    pin_cpu(avx512_f=True, avx512_bf16=True, amx_bf16=False, avx_ne_convert=False, vendor="AuthenticAMD")
    name, config = case.split("_")
    train = config == "train"
    torch._dynamo.reset()
    mods, kw, _ = bench_models.setup(name, config)
    m = mods["eager"]
    fn = torch.compile(bench_models.forward, backend=autofuse.get_backend(autofuse.CompilerConfig(dump_dir=str(tmp_path))))
    if train:
        bench_models.train_step(fn, m, kw)
    else:
        with torch.no_grad():
            fn(m, kw)
    parts = ("forward", "backward") if train else ("forward",)
    dumped = {("backward" if "_bw" in os.path.basename(p) else "forward"): p for p in glob.glob(str(tmp_path / "*.graph.ir"))}
    assert sorted(dumped) == sorted(parts), dumped
    for part in parts:
        want = body_of(os.path.join(GOLDEN, f"{case}_{part}.ir"))
        got = open(dumped[part]).read()
        assert _without_name(got) == _without_name(want), f"{case} {part}: the frontend's Graph IR changed"
