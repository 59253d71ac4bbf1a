"""The cuda target's source without a GPU (issue 44): every kernel of the golden models that the
CUDA printer takes compiles with NVRTC for sm_90 (the device code embedded in the printed
source), and the kernels it does not take name their reason. tests/lit/codegen/cuda_kernel.ir
holds the printed source as golden text."""

import glob
import os
import re
import subprocess

import pytest

from autofuse import _C
from helpers import autofuse_opt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDENS = sorted(glob.glob(os.path.join(ROOT, "tests", "lit", "golden", "*.ir")))
# The launcher's NVRTC (runtime/cuda/nvrtc.h: the nvidia-cuda-nvrtc wheel the Makefile installs
# where pip can fetch it, or the system's): (version, path), or why there is none.
NVRTC = _C.nvrtc()
NO_NVRTC = NVRTC if isinstance(NVRTC, str) else ""


def compile_cubin(code: str, arch: str = "sm_90"):
    """(ok, cubin or NVRTC's log) of device code, compiled as the launcher compiles it."""
    ok, out = _C.nvrtc_compile(code, arch)
    return ok, out if ok else out.decode(errors="replace")


def cuda_source(path: str, ascir: bool = False) -> str:
    """What autofuse-opt prints for the graph in `path` (Graph IR, or AscIR) with --target=cuda
    (fuse, schedule and codegen)."""
    passes = ["--input=ascir", "--passes=schedule,codegen"] if ascir else ["--passes=fuse,schedule,codegen"]
    run = subprocess.run([autofuse_opt(), "--target=cuda", *passes, path], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout


def device_code(text: str) -> str:
    m = re.search(r'R"af_cuda\(\n(.*?)\)af_cuda";', text, re.S)
    return m.group(1) if m else ""


@pytest.mark.skipif(bool(NO_NVRTC), reason=NO_NVRTC)
def test_every_golden_kernel_the_cuda_printer_takes_compiles_with_nvrtc_for_sm_90():
    kernels = 0
    for path in GOLDENS:
        code = device_code(cuda_source(path))
        if not code:
            continue
        ok, log = compile_cubin(code)
        assert ok, f"{os.path.basename(path)}:\n{log}"
        kernels += code.count("__global__")
    print(f"{kernels} CUDA kernels of {len(GOLDENS)} golden models compiled with NVRTC {NVRTC[0]}")
    assert len(GOLDENS) == 20 and kernels >= 290  # 304 when written: all of them


@pytest.mark.skipif(bool(NO_NVRTC), reason=NO_NVRTC)
@pytest.mark.parametrize("name,ascir", [("cuda_kernel.ir", False), ("cuda_reduce.ir", False), ("cpu_gather.ir", True)])
def test_the_cuda_lit_graphs_compile_with_nvrtc(name, ascir):
    """The graphs whose CUDA source the lit tests check (a gather's among them) compile."""
    text = cuda_source(os.path.join(ROOT, "tests", "lit", "codegen", name), ascir)
    units = re.findall(r'R"af_cuda\(\n(.*?)\)af_cuda";', text, re.S)  # one per graph of the file
    assert sum(u.count("__global__") for u in units) >= 1
    for code in units:
        ok, log = compile_cubin(code)
        assert ok, log


def test_a_cpu_graph_with_the_cuda_target_runs_eagerly_with_the_reason():
    """The cuda target's kernels read device memory: CPU tensors stay with eager, and the
    record says why (no exception reaches the model)."""
    import torch

    import autofuse

    fn = lambda x: torch.sigmoid(x) * 2 + 1  # noqa: E731
    x = torch.randn(8, 16)
    with autofuse.collect_records() as recs:
        got = torch.compile(fn, backend=autofuse.get_backend(autofuse.CompilerConfig(target="cuda")))(x)
    torch.testing.assert_close(got, fn(x))
    assert len(recs) == 1 and "compiles graphs of CUDA tensors" in recs[0].fallback, recs


def cuda_graph_compile(fn, *shapes):
    """(records, compiled callable) of `fn` traced over fake CUDA tensors of `shapes` (no GPU
    needed) and given to the backend as AOTAutograd gives it an inference graph."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    import autofuse
    from autofuse.backend import AotFacts, compile_graph, decomposition_table

    with FakeTensorMode():
        inputs = [torch.empty(s, device="cuda") for s in shapes]
        gm = make_fx(fn, decomposition_table=decomposition_table())(*inputs)
        with autofuse.collect_records() as recs:
            compiled = compile_graph(gm, inputs, autofuse.CompilerConfig(), "inference", facts=AotFacts())
    return recs, compiled


def _norm_chain(x, g):
    import torch

    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), g)
    return torch.sigmoid(y) * 2 + x.sum(-1, keepdim=True), (x.double() * 3).exp()


@pytest.mark.skipif(not _C.cuda_unavailable(), reason="this machine can run cuda kernels")
def test_a_cuda_graph_where_the_cuda_target_cannot_run_runs_eagerly_with_the_reason():
    recs, _ = cuda_graph_compile(_norm_chain, (8, 16), (16,))
    assert len(recs) == 1, recs
    assert "the cuda target cannot run here: " + _C.cuda_unavailable() in recs[0].fallback, recs


def test_a_cuda_graph_compiles_to_cuda_kernels_launched_on_the_current_stream(monkeypatch):
    """With a usable GPU (pretended here: no kernel runs), a graph of CUDA tensors compiles for
    the cuda target: every kernel is a cuda kernel, launched on torch's current stream with
    outputs allocated on the device; an op the target cannot print (f64) runs as an ATen op,
    not as CPU code, which cannot read device memory, and fuses with nothing."""
    monkeypatch.setattr(_C, "cuda_unavailable", lambda: "")
    recs, _ = cuda_graph_compile(_norm_chain, (8, 16), (16,))
    assert len(recs) == 1 and not recs[0].fallback, recs
    rec = recs[0]
    assert rec.num_kernels >= 1
    assert {rec.program.kernel_target(k) for k in range(rec.num_kernels)} == {"cuda"}
    given_back = [st for st in rec.steps if "runs as an ATen op" in st.reason]
    assert given_back and all("f64" in st.reason for st in given_back), [st.reason for st in rec.steps]
    src = rec.runner.source
    assert "stream = current_stream()" in src and "nthreads" not in src
    assert re.search(r"launch\(0, \[.*\], \(\), 0, stream\)", src), src
    assert "pool_" not in src  # the GPU's caching allocator recycles outputs


FUZZ_CASES = int(os.environ.get("AUTOFUSE_FUZZ_CASES", "12"))  # per fuzzer; `make fuzz`: 500


@pytest.mark.skipif(bool(NO_NVRTC), reason=NO_NVRTC)
@pytest.mark.parametrize("fuzzer", ["test_random_graphs", "test_random_reduce_graphs", "test_random_concat_graphs"])
def test_every_fuzzer_program_kernel_the_cuda_printer_takes_compiles_with_nvrtc(fuzzer, tmp_path):
    """The fuzzers' programs (the first AUTOFUSE_FUZZ_CASES seeds of each) traced to Graph IR,
    printed for the cuda target, their device code compiled with NVRTC for sm_90."""
    import importlib

    from autofuse.fx_to_graph import translate
    from helpers import aten_graph

    module = importlib.import_module(fuzzer)
    kernels, reasons = 0, []
    for seed in range(FUZZ_CASES):
        case = module.Case(seed)
        try:
            gm, _ = aten_graph(case.fn, *case.inputs())
        except RuntimeError as e:  # a program dividing an integer by 0 raises as eager does
            assert "ZeroDivisionError" in str(e), e
            continue
        path = tmp_path / f"{fuzzer}_{seed}.ir"
        path.write_text(translate(gm, f"f{seed}").text)
        text = cuda_source(str(path))
        code = device_code(text)
        reasons += re.findall(r"runs as (?:an ATen op|ATen ops): (.*)", text)
        if code:
            ok, log = compile_cubin(code)
            assert ok, f"{fuzzer} seed {seed}:\n{log}\n{case.repro()}"
            kernels += code.count("__global__")
    print(f"{fuzzer}: {kernels} CUDA kernels of {FUZZ_CASES} programs compiled with NVRTC; left to ATen: {reasons}")
    assert kernels > 0
