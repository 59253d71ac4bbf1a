"""The disk cache: the same program in a second fresh process compiles nothing."""

import json
import os
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import json, logging, torch, autofuse
    logging.getLogger("autofuse").setLevel(logging.DEBUG)
    def fn(x, w, b):
        return torch.nn.functional.silu(x * w + b) - 0.25
    x, w, b = torch.randn(16, 48), torch.randn(48), torch.randn(48)
    out = torch.compile(fn, backend="autofuse", dynamic=False)(x, w, b)
    torch.testing.assert_close(out, fn(x, w, b))
    print("STATS " + json.dumps(autofuse.stats()))
    """
)


def _run(cache_dir):
    env = dict(os.environ, AUTOFUSE_CACHE_DIR=str(cache_dir))
    env.pop("AUTOFUSE_DUMP", None)
    proc = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("STATS ")][-1]
    log = [l for l in proc.stderr.splitlines() if "autofuse/" in l]  # torch's format: file:line] message
    return json.loads(line[len("STATS "):]), log


def test_second_process_compiles_nothing(tmp_path):
    first, first_log = _run(tmp_path)
    assert first["cxx_compiles"] >= 1
    assert any("cache miss" in l for l in first_log), first_log
    second, second_log = _run(tmp_path)
    assert second["cxx_compiles"] == 0
    assert second["cache_hits"] >= 1
    assert any("cache hit" in l for l in second_log), second_log


def test_a_kernel_another_graph_compiled_is_not_compiled_again(tmp_path):
    """The kernel index (jit/kernel_index.h): a graph whose kernel an earlier graph compiled,
    under another name, loads that graph's module for it and compiles only its new kernels."""
    import torch

    import autofuse

    def norm(x):
        return torch.softmax(x * 2.0, dim=-1)

    def norm_then_project(x, w):
        return torch.nn.functional.gelu(norm(x) @ w)  # the same softmax kernel, then a new one

    backend = autofuse.get_backend(autofuse.CompilerConfig(cache_dir=str(tmp_path)))
    x, w = torch.randn(8, 64), torch.randn(64, 32)
    with torch.no_grad(), autofuse.collect_records() as recs:
        torch.testing.assert_close(torch.compile(norm, backend=backend, dynamic=False)(x), norm(x))
        got = torch.compile(norm_then_project, backend=backend, dynamic=False)(x, w)
    torch.testing.assert_close(got, norm_then_project(x, w))
    first, second = recs
    assert (first.num_kernels, first.cxx_compiles, first.cache_hits) == (1, 1, 0)
    assert (second.num_kernels, second.cxx_compiles, second.cache_hits) == (2, 1, 1)
    with torch.no_grad(), autofuse.collect_records() as recs:  # both kernels known now
        torch._dynamo.reset()
        got = torch.compile(norm_then_project, backend=backend, dynamic=False)(x * 3.0, w)
    torch.testing.assert_close(got, norm_then_project(x * 3.0, w))
    assert (recs[0].cxx_compiles, recs[0].cache_hits) == (0, 2)  # the two modules above
