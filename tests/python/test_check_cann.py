"""tools/check_cann.py (make check-cann) where no CANN toolkit is: it says where the headers are
and skips, refuses a folder without CANN's layout, and finds the include tree of one that has it."""

import os
import subprocess
import sys

import pytest

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "check_cann.py")
sys.path.insert(0, os.path.dirname(TOOL))
import check_cann  # noqa: E402


def test_without_cann_home_it_says_where_the_headers_are_and_skips():
    env = dict(os.environ, CANN_HOME="")
    p = subprocess.run([sys.executable, TOOL], capture_output=True, text=True, env=env)
    assert p.returncode == 0
    assert "CANN_HOME is not set" in p.stdout and "leideng/CANN-8.1.RC1" in p.stdout


def test_include_flags_follow_the_toolkit_layout(tmp_path):
    with pytest.raises(FileNotFoundError, match="ascendc/include"):
        check_cann.cann_include_flags(str(tmp_path))
    for d in ["aarch64-linux/ascendc/include/basic_api/impl", "aarch64-linux/ascendc/include/highlevel_api",
              "aarch64-linux/include", "tools/tikicpulib/lib/include"]:
        os.makedirs(tmp_path / d)
    flags = check_cann.cann_include_flags(str(tmp_path))
    assert f"-I{tmp_path}/tools/tikicpulib/lib/include" in flags
    assert f"-I{tmp_path}/aarch64-linux/ascendc/include/basic_api/impl" in flags
    assert not any("basic_api/interface" in f for f in flags)  # absent folders are left out


def test_a_compile_error_is_reported_with_its_file(tmp_path):
    """compile_package reports a kernel source that does not compile, naming the file."""
    (tmp_path / "g0_kernels.cpp").write_text('#include "kernel_operator.h"\nvoid f() { AscendC::Nothing(); }\n')
    (tmp_path / "kernel_operator.h").write_text("namespace AscendC {}\n")
    (tmp_path / "g0_tiling.cpp").write_text("int g0_tiling() { return 0; }\n")
    errors = check_cann.compile_package(str(tmp_path), [], "g++")
    assert len(errors) == 1 and "g0_kernels.cpp" in errors[0] and "Nothing" in errors[0]
