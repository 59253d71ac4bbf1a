"""NVRTC through ctypes, for tests that compile the cuda target's device code without a GPU.

`compile_ptx(source, arch)` compiles CUDA C++ to PTX with the NVRTC of the `nvidia-cuda-nvrtc`
wheel (the Makefile installs it when it can) or of the system; `unavailable()` says why it
cannot (then the tests skip with that reason).
"""

import ctypes
import glob
import os
import site
from typing import Dict, Optional, Tuple

_lib: Optional[ctypes.CDLL] = None
_why = ""


def _load() -> Optional[ctypes.CDLL]:
    global _lib, _why
    if _lib is not None or _why:
        return _lib
    roots = [*site.getsitepackages(), site.getusersitepackages()]
    candidates = [p for r in roots for p in sorted(glob.glob(os.path.join(r, "nvidia", "cu*", "lib", "libnvrtc.so*")))]
    candidates += ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"]
    for c in candidates:
        try:
            _lib = ctypes.CDLL(c)
            return _lib
        except OSError:
            continue
    _why = "NVRTC is not installed (pip install nvidia-cuda-nvrtc)"
    return None


def unavailable() -> str:
    """Why NVRTC cannot be used here ("" when it can)."""
    _load()
    return _why


def version() -> Tuple[int, int]:
    lib = _load()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def compile_ptx(source: str, arch: str = "sm_90", headers: Optional[Dict[str, str]] = None,
                name: str = "autofuse.cu") -> Tuple[bool, str]:
    """(whether `source` compiled for `arch`, the PTX or else the compile log); `headers`: the
    text of each header it includes, by include name."""
    lib = _load()
    prog = ctypes.c_void_p()
    headers = headers or {}
    texts = (ctypes.c_char_p * len(headers))(*(t.encode() for t in headers.values()))
    names = (ctypes.c_char_p * len(headers))(*(n.encode() for n in headers))
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), len(headers), texts, names)
    if rc != 0:
        return False, f"nvrtcCreateProgram failed ({rc})"
    try:
        opts = [f"--gpu-architecture={arch}".encode(), b"--std=c++17"]
        argv = (ctypes.c_char_p * len(opts))(*opts)
        rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
        size = ctypes.c_size_t()
        if rc != 0:
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(prog, log)
            return False, log.value.decode(errors="replace")
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
        return True, ptx.value.decode(errors="replace")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
