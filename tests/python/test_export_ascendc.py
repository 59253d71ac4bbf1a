"""autofuse.export_ascendc writes a CANN-style package per graph; what this machine can check of
it (no CANN here): the kernels compile against ascendc_emu, also with GM's address space (clang),
the tiling source with g++, and the kernels it could not print are listed with their reason."""

import os
import subprocess
import sys

import pytest
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
    cmake = open(os.path.join(folder, "CMakeLists.txt")).read()
    assert "ascendc_library(" in cmake
    # CANN's device compile takes the kernel's includes from ascendc_include_directories only.
    assert f"ascendc_include_directories({graph}_kernels PRIVATE" in cmake
    assert f"target_include_directories({graph}_kernels" not in cmake
    # sign has no Ascend C mapping (its NaN rule differs from torch): left out, with the reason.
    assert any("sign" in why for why in report.skipped.values()), report.skipped
    include = os.path.join(folder, "include")
    _syntax_ok(os.path.join(folder, f"{graph}_tiling.cpp"), folder, include)
    _syntax_ok(os.path.join(folder, f"{graph}_kernels.cpp"), folder, include,
               os.path.join(_C.runtime_include_dir(), "ascendc_emu"))


def test_every_kernel_keeps_gm_address_space(tmp_path):
    """make check-cann's address-space pass on programs a user would export (tools/check_cann.py):
    the kernels compile with clang where __gm__ is an address space of its own, as on the device
    (CPU-debug mode defines it empty), so no cast drops it (the TilingData read through a cast of
    GM_ADDR to a struct pointer did)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    import check_cann

    clangxx = check_cann.clang()
    if not clangxx:
        pytest.skip("no clang++ (the Makefile installs clang-14)")
    names = ["isinf_where", "layer_norm", "erf_twice", "rotary_cat", "rms_norm_bf16"]
    for name in names:
        fn, inputs = check_cann.programs()[name]
        out = autofuse.export_ascendc(fn, *inputs(), out_dir=str(tmp_path / name))
        assert out.folders, name
        for folder in out.folders.values():
            assert check_cann.address_space_errors(folder, clangxx) == [], name
