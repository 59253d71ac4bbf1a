"""autofuse.export_ascendc writes a CANN-style package per graph; what this machine can check of
it (no CANN here): the kernels compile against ascendc_emu, the tiling source with g++, and the
kernels it could not print are listed with their reason."""

import os
import subprocess

import torch

import autofuse
from autofuse import _C


def _syntax_ok(path, *includes):
    cmd = ["g++", "-std=c++17", "-fsyntax-only", path] + [f"-I{d}" for d in includes]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:3000]


def test_a_package_per_graph_that_builds_against_the_emulation(tmp_path):
    def fn(x, scale, bias, t):
        return torch.sigmoid(x) * scale + bias, torch.sign(t)

    x, s, b, t = torch.randn(8, 64), torch.randn(64), torch.randn(64), torch.randn(5, 7)
    report = autofuse.export_ascendc(fn, x, s, b, t, out_dir=str(tmp_path))
    (graph, folder), = report.folders.items()
    names = sorted(os.listdir(folder))
    assert names == ["CMakeLists.txt", f"{graph}_kernels.cpp", f"{graph}_tiling.cpp", f"{graph}_tiling.h",
                     "include"]
    kernels = open(os.path.join(folder, f"{graph}_kernels.cpp")).read()
    assert kernels.count('extern "C" __global__ __aicore__ void') == 1
    assert "_tiling(const int64_t* symbols" not in kernels  # host code stays in _tiling.cpp
    assert "ascendc_library(" in open(os.path.join(folder, "CMakeLists.txt")).read()
    # sign has no Ascend C mapping (its NaN rule differs from torch): left out, with the reason.
    assert any("sign" in why for why in report.skipped.values()), report.skipped
    include = os.path.join(folder, "include")
    _syntax_ok(os.path.join(folder, f"{graph}_tiling.cpp"), folder, include)
    _syntax_ok(os.path.join(folder, f"{graph}_kernels.cpp"), folder, include,
               os.path.join(_C.runtime_include_dir(), "ascendc_emu"))
