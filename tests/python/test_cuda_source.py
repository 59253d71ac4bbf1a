"""The cuda target's source without a GPU (issue 44): every kernel of the golden models that the
CUDA printer takes compiles with NVRTC for sm_90 (the device code embedded in the printed
source), and the kernels it does not take name their reason. tests/lit/codegen/cuda_kernel.ir
holds the printed source as golden text."""

import glob
import os
import re
import subprocess

import pytest

import nvrtc
from helpers import autofuse_opt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDENS = sorted(glob.glob(os.path.join(ROOT, "tests", "lit", "golden", "*.ir")))
# The runtime headers device code includes, by name (what a launcher hands NVRTC).
HEADERS = {name: open(os.path.join(ROOT, "src", "runtime", "include", name)).read()
           for name in ("autofuse_abi.h", "autofuse_cpu_int.h")}


def cuda_source(path: str) -> str:
    """What autofuse-opt prints for the graph in `path` with --target=cuda (fuse and codegen)."""
    run = subprocess.run([autofuse_opt(), "--target=cuda", "--passes=fuse,schedule,codegen", path],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout


def device_code(text: str) -> str:
    m = re.search(r'R"af_cuda\(\n(.*?)\)af_cuda";', text, re.S)
    return m.group(1) if m else ""


@pytest.mark.skipif(bool(nvrtc.unavailable()), reason=nvrtc.unavailable() or "")
def test_every_golden_kernel_the_cuda_printer_takes_compiles_with_nvrtc_for_sm_90():
    kernels = 0
    for path in GOLDENS:
        code = device_code(cuda_source(path))
        if not code:
            continue
        ok, log = nvrtc.compile_ptx(code, "sm_90", HEADERS)
        assert ok, f"{os.path.basename(path)}:\n{log}"
        kernels += code.count("__global__")
    print(f"{kernels} CUDA kernels of {len(GOLDENS)} golden models compiled with NVRTC {nvrtc.version()}")
    assert len(GOLDENS) == 20 and kernels >= 290  # 304 when written: all of them


def test_a_graph_compiled_for_cuda_runs_eagerly_with_the_reason():
    """Nothing builds or launches CUDA kernels yet: the graph runs eagerly and its record says
    why (no exception reaches the model)."""
    import torch

    import autofuse

    fn = lambda x: torch.sigmoid(x) * 2 + 1  # noqa: E731
    x = torch.randn(8, 16)
    with autofuse.collect_records() as recs:
        got = torch.compile(fn, backend=autofuse.get_backend(autofuse.CompilerConfig(target="cuda")))(x)
    torch.testing.assert_close(got, fn(x))
    assert len(recs) == 1 and "not yet built or launched" in recs[0].fallback, recs


FUZZ_CASES = int(os.environ.get("AUTOFUSE_FUZZ_CASES", "12"))  # per fuzzer; `make fuzz`: 500


@pytest.mark.skipif(bool(nvrtc.unavailable()), reason=nvrtc.unavailable() or "")
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
        reasons += re.findall(r"keeps the cpu target: (.*)", text)
        if code:
            ok, log = nvrtc.compile_ptx(code, "sm_90", HEADERS)
            assert ok, f"{fuzzer} seed {seed}:\n{log}\n{case.repro()}"
            kernels += code.count("__global__")
    print(f"{fuzzer}: {kernels} CUDA kernels of {FUZZ_CASES} programs compiled with NVRTC; kept for cpu: {reasons}")
    assert kernels > 0
