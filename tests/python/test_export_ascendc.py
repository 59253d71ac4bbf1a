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
    assert names == ["CMakeLists.txt", f"{graph}_kernels.cpp", f"{graph}_launch.cpp", f"{graph}_launch.h",
                     f"{graph}_tiling.cpp", f"{graph}_tiling.h", "include"]
    # A host launcher per kernel, for an NPU (tiling to device memory, ACLRT_LAUNCH_KERNEL) and
    # for Ascend C's CPU-debug mode (ICPU_RUN_KF); make check-cann compiles both.
    launch = open(os.path.join(folder, f"{graph}_launch.cpp")).read()
    for call in ("aclrtMemcpy(tiling", f"ACLRT_LAUNCH_KERNEL({graph}_k", f"ICPU_RUN_KF({graph}_k",
                 "aclrtSynchronizeStream"):
        assert call in launch, call
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


def test_graphs_named_per_export_with_a_manifest(tmp_path):
    """Two graphs (a graph break): folders g0 and g1 of this export, kernels named after their
    graph (they link into one program), and a manifest saying what each kernel argument and
    size symbol is and which ATen ops run between kernels. A second export into the same
    folder leaves only its own packages."""
    import json

    def two_graphs(x, w, b):
        y = torch.nn.functional.linear(torch.relu(x) * 2, w, b)
        torch._dynamo.graph_break()
        return torch.sigmoid(y) + 1

    x, w, b = torch.randn(8, 64), torch.randn(32, 64), torch.randn(32)
    report = autofuse.export_ascendc(two_graphs, x, w, b, out_dir=str(tmp_path), dynamic=True)
    assert sorted(report.folders) == ["g0", "g1"]
    externs = {}
    for g, folder in report.folders.items():
        src = open(os.path.join(folder, f"{g}_kernels.cpp")).read()
        names = [ln.split("void ")[1].split("(")[0] for ln in src.splitlines()
                 if ln.startswith('extern "C" __global__ __aicore__ void')]
        assert names and all(n.startswith(f"{g}_") for n in names), names
        externs[g] = set(names)
    assert not externs["g0"] & externs["g1"]
    manifest = json.load(open(tmp_path / "manifest.json"))
    g0, g1 = manifest["graphs"]
    assert [g0["name"], g1["name"]] == ["g0", "g1"] and g0["packaged"] and g1["packaged"]
    kernels = [s for s in g0["steps"] if "kernel" in s]
    assert kernels and all(k["kernel"] in externs["g0"] for k in kernels)
    first = kernels[0]  # relu(x) * 2: its argument in0 is x, [s_a, s_b] over the kernel's symbols
    x_in = next(i for i in g0["inputs"] if i["name"] == first["args"]["in0"])
    assert x_in["dtype"] == "float32" and sorted(x_in["shape"]) == sorted(first["symbols"])
    assert any(s.get("aten", "").startswith("aten.addmm") or s.get("aten", "").startswith("aten.mm")
               for s in g0["steps"]), g0["steps"]  # the Linear runs between kernels, by the caller
    assert g0["symbols"] and all(".shape[" in v or "int input" in v for v in g0["symbols"].values())
    for sym in first["symbols"]:
        assert sym in g0["symbols"]
    # Exporting a one-graph function into the same folder removes g1; a B3 has 40 vector cores.
    report = autofuse.export_ascendc(lambda x: torch.sigmoid(x) * 3, x, out_dir=str(tmp_path),
                                     soc_version="Ascend910B3")
    assert sorted(report.folders) == ["g0"]
    assert "40 vector cores" in open(tmp_path / "g0" / "g0_tiling.cpp").read()
    assert 'SOC_VERSION "Ascend910B3"' in open(tmp_path / "g0" / "CMakeLists.txt").read()
    assert not os.path.exists(tmp_path / "g1")
    assert [g["name"] for g in json.load(open(tmp_path / "manifest.json"))["graphs"]] == ["g0"]
