"""AUTOFUSE_SANITIZE / CompilerConfig(sanitize=...): kernels built with AddressSanitizer and
UndefinedBehaviorSanitizer (`make sanitize` runs the fuzzers and the OpInfo slice so), a bad
setting refused up front, and a process without the ASan runtime told how to get one."""

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import autofuse
from helpers import compile_fn, only_record


def _has_asan_runtime():
    return hasattr(ctypes.CDLL(None), "__asan_init")


def _fn(x, b):
    return torch.nn.functional.gelu(x) * b - torch.exp(-x.abs())


def test_unknown_sanitizer_is_refused_before_any_compile():
    with pytest.raises(ValueError, match="unknown sanitizer 'adress' \\(known: address, undefined\\)"):
        autofuse.get_backend(autofuse.CompilerConfig(sanitize="adress"))


def test_undefined_behaviour_sanitizer_kernels_match_eager(tmp_path):
    config = autofuse.CompilerConfig(sanitize="undefined", cache_dir=str(tmp_path), fallback_on_error=False)
    x, b = torch.randn(37, 203), torch.randn(203)  # odd sizes: vector tails
    torch.testing.assert_close(compile_fn(_fn, config)(x, b), _fn(x, b))
    assert not only_record().fallback


@pytest.mark.skipif(_has_asan_runtime(), reason="this process has the ASan runtime (make sanitize)")
def test_address_sanitizer_without_its_runtime_runs_eagerly_and_says_how(tmp_path):
    config = autofuse.CompilerConfig(sanitize="address", cache_dir=str(tmp_path))
    x, b = torch.randn(8, 64), torch.randn(64)
    torch.testing.assert_close(compile_fn(_fn, config)(x, b), _fn(x, b))
    reason = only_record().fallback
    assert "AddressSanitizer runtime is not loaded" in reason and "LD_PRELOAD" in reason, reason


# A kernel launched with a size past the end of its buffers (whole vectors, not a masked tail):
# AddressSanitizer must report the first read beyond the 400 bytes.
_OUT_OF_BOUNDS = textwrap.dedent(
    """
    import torch
    from autofuse import _C
    p = _C.compile('''graph @main(s0 = 64) {
      %x = input() {index = 0} : f32[s0]
      %0 = relu(%x) : f32[s0]
      return %0
    }''', cache_dir=CACHE, sanitize="address")
    x, y = torch.randn(100), torch.empty(100)
    p.launch(0, [x.data_ptr(), y.data_ptr()], [128], 1)
    print("no report")
    """
)


def test_address_sanitizer_reports_an_out_of_bounds_kernel_read(tmp_path):
    libs = [subprocess.run(["g++", f"-print-file-name={lib}"], capture_output=True, text=True).stdout.strip()
            for lib in ("libasan.so", "libstdc++.so")]  # libstdc++ too: ASan's __cxa_throw needs it
    if not all(os.path.isabs(p) and os.path.exists(p) for p in libs):
        pytest.skip("g++ has no libasan.so here")
    env = dict(os.environ, LD_PRELOAD=" ".join(libs), ASAN_OPTIONS=f"detect_leaks=0:log_path={tmp_path}/asan")
    env.pop("AUTOFUSE_TEST_EXTENSION", None)  # the installed extension, without ASan itself
    script = f"CACHE = {str(tmp_path / 'cache')!r}\n" + _OUT_OF_BOUNDS
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    reports = [p.read_text() for p in tmp_path.glob("asan.*")]
    assert run.returncode != 0 and "no report" not in run.stdout, (run.stdout, run.stderr[-2000:])
    assert len(reports) == 1, (reports, run.stderr[-2000:])
    # A whole-vector read that runs off the buffer (ASan names a 64-byte access that starts
    # inside it an "unknown-crash"), inside the generated kernel.
    assert "ERROR: AddressSanitizer" in reports[0] and "READ of size" in reports[0], reports[0]
    assert " in k0_kernel " in reports[0], reports[0]
