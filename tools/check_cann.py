"""make check-cann: the exported Ascend C judged by CANN's own headers, not by ascendc_emu.

Exports the Ascend C package (autofuse.export_ascendc) of every program of its suites (--suites:
user-style programs and make demo's model, the Ascend C lit goldens as autofuse-opt prints them,
the tests' Ascend C acceptance cases, the five benchmark models in three configurations) and compiles, per package, the kernels and host launchers in Ascend C's CPU-debug mode against a CANN toolkit's
`ascendc/include` and tikicpulib trees (g++ -fsyntax-only with the CPU-debug defines CANN's own
CPU build passes), the launchers again in NPU mode against its ACL headers, and the host tiling
source with plain g++; then the kernels again with clang, __gm__ an address space of its own
(address_space_errors); last, every AscendC name the sources use is looked up in each release's
header tree (undeclared). Prints one line per package and the counts; exits 1 on any error.

    make check-cann CANN_HOME=<toolkit root>   (the folder holding <arch>-linux/ascendc/include
                                                and tools/tikicpulib, e.g. .../ascend-toolkit/8.1.RC1)

Without CANN_HOME it says where the public headers are and exits 0 (docs/ascendc.md).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Callable, Dict, List, Sequence, Tuple

HOW_TO_GET = """check-cann: CANN_HOME is not set; nothing checked.
CANN's Ascend C headers are public in GitHub mirrors of the toolkit, e.g. leideng/CANN-8.1.RC1:
  git clone --depth 1 https://github.com/leideng/CANN-8.1.RC1 cann
  make check-cann CANN_HOME=$PWD/cann/Ascend/ascend-toolkit/8.1.RC1
(docs/ascendc.md: what the check compiles and with which flags)."""

# The defines of Ascend C's CPU-debug build (CANN's tikicpulib CMake for an Atlas A2 vector core).
CPU_DEBUG_DEFINES = ("-D__CCE_AICORE__=220", "-D__DAV_C220__", "-D__DAV_C220_VEC__", "-D__CCE_KT_TEST__=1",
                     "-DASCENDC_CPU_DEBUG=1", "-D_GLIBCXX_USE_CXX11_ABI=0")

# Under <arch>-linux/ascendc/include: the API's own include folders.
ASCENDC_INCLUDE_DIRS = ("basic_api", "basic_api/impl", "basic_api/interface", "highlevel_api", "highlevel_api/impl",
                        "highlevel_api/lib")


def cann_include_flags(cann_home: str) -> List[str]:
    """-I flags for CANN's CPU-debug headers under `cann_home`; raises FileNotFoundError."""
    archs = sorted(glob.glob(os.path.join(cann_home, "*-linux", "ascendc", "include")))
    if not archs:
        raise FileNotFoundError(f"no <arch>-linux/ascendc/include under {cann_home}")
    ascendc = archs[0]
    arch_root = os.path.dirname(os.path.dirname(ascendc))
    dirs = [os.path.join(cann_home, "tools", "tikicpulib", "lib", "include"), os.path.join(arch_root, "include")]
    dirs += [os.path.join(ascendc, d) for d in ASCENDC_INCLUDE_DIRS]
    return [f"-I{d}" for d in dirs if os.path.isdir(d)]


def programs() -> Dict[str, Tuple[Callable, Callable[[], Sequence]]]:
    """name -> (function, () -> its inputs): programs a user would export, beyond the tests',
    and make demo's model."""
    import torch
    import torch.nn.functional as F

    def r(*shape, dtype=torch.float32):
        g = torch.Generator().manual_seed(sum(shape))
        return lambda: torch.randn(*shape, generator=g).to(dtype)

    def two(*shape, dtype=torch.float32):
        a, b = r(*shape, dtype=dtype), r(*shape[::-1], dtype=dtype)
        return lambda: (a(), b().reshape(shape))

    return {
        "masked_softmax": (lambda x, m: torch.softmax(x + m, -1), two(8, 77)),
        "isinf_where": (lambda x, y: torch.where(torch.isinf(x), y, x * 2), two(64, 300)),
        "logsumexp_5000": (lambda x: torch.logsumexp(x, -1), lambda: (r(16, 5000)(),)),
        "erf_twice": (lambda x, y: torch.erf(x) * y + 3 * torch.erf(y), two(40, 300)),
        "sin_cos": (lambda x: torch.sin(x) * 2.5 + torch.cos(x), lambda: (r(40, 300)(),)),
        "erf_colsum": (lambda x: torch.erf(x).sum(0), lambda: (r(64, 3000)(),)),
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (768,), w, b), lambda: (r(8, 768)(), r(768)(), r(768)())),
        "rms_norm_bf16": (lambda x, w: (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(
            torch.bfloat16) * w, lambda: (r(4, 512, dtype=torch.bfloat16)(), r(512, dtype=torch.bfloat16)())),
        "gelu_bias": (lambda x, b: F.gelu(x + b), lambda: (r(16, 3072)(), r(3072)())),
        "silu_mul": (lambda a, b: F.silu(a) * b, two(16, 1024)),
        "sigmoid_affine": (lambda x, g, b: torch.sigmoid(x * g + b), lambda: (r(4, 16)(), r(16)(), r(16)())),
        "to_bool": (lambda x: (x > 0.5).to(torch.float32) + x.to(torch.bool).to(torch.float32), lambda: (r(33, 65)(),)),
        "rotary_cat": (lambda x: torch.cat([-x[..., 32:], x[..., :32]], -1) * 0.5 + x,
                       lambda: (r(2, 8, 16, 64)(),)),
        "demo_decoder": _demo(),
    }


def _demo() -> Tuple[Callable, Callable[[], Sequence]]:
    """make demo's model (examples/demo.py: a 2-layer decoder) on its input, in inference."""
    import torch

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    import demo

    torch.manual_seed(0)
    model = demo.Decoder().eval()
    x = torch.randn(demo.BATCH, demo.SEQ, demo.D_MODEL)

    def run(x):
        with torch.no_grad():
            return model(x)

    return run, lambda: (x,)


def _errors(cmd: Sequence[str], src: str) -> List[str]:
    p = subprocess.run(list(cmd) + [src], capture_output=True, text=True)
    if p.returncode == 0:
        return []
    lines = [ln for ln in p.stderr.splitlines() if "error" in ln] or p.stderr.splitlines()
    return [f"{src}:\n" + "\n".join(lines)[:4000]]


def _aclrtlaunch_stand_ins(launch_src: str, into: str) -> None:
    """Writes, for each kernel the NPU-mode launcher launches, the aclrtlaunch_K.h that CANN's
    ascendc_library generates at build time (extract_host_stub.py's header: ACLRT_LAUNCH_KERNEL
    and `extern "C" uint32_t aclrtlaunch_K(uint32_t blockDim, void* stream, <the kernel's
    arguments>)`), with the kernel's GM arguments as void*."""
    text = open(launch_src).read()
    for m in re.finditer(r'extern "C" __global__ __aicore__ void (\w+)\(([^)]*)\);', text):
        name, params = m.group(1), [p.split()[-1] for p in m.group(2).split(",")]
        with open(os.path.join(into, f"aclrtlaunch_{name}.h"), "w") as f:
            f.write(f'#pragma once\n#include "acl/acl_base.h"\n#include <cstdint>\n'
                    f"#ifndef ACLRT_LAUNCH_KERNEL\n#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func\n"
                    f"#endif\n"
                    f'extern "C" uint32_t aclrtlaunch_{name}(uint32_t blockDim, void* stream, '
                    + ", ".join(f"void* {p}" for p in params) + ");\n")


def model_programs() -> Dict[str, Tuple[Callable, Callable[[], Sequence]]]:
    """The five benchmark models (bench/models.py: BERT, GPT-2, Llama, T5 encoder, ViT; 2 layers,
    random weights) as make bench-models runs them: batch 1 x 32 in fp32, a training step in
    fp32 (forward and backward graphs), batch 4 x 128 in bf16."""
    import torch

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
    import models

    def config(name: str, dtype: torch.dtype, train: bool, batch: int, seq: int):
        model = models.build(name, dtype, train)
        kwargs = models.example_inputs(name, batch, seq)
        (key, value), = kwargs.items()
        if value.is_floating_point():
            value = value.to(dtype)

        def run(x):
            out = model(**{key: x}).last_hidden_state
            if train:
                out.float().square().mean().backward()
            return out

        return run, lambda: (value,)

    out = {}
    for name in models.MODELS:
        out[f"{name}_fp32_1x32"] = config(name, torch.float32, False, 1, 32)
        out[f"{name}_train_fp32"] = config(name, torch.float32, True, 2, 32)
        out[f"{name}_bf16_4x128"] = config(name, torch.bfloat16, False, 4, 128)
    return out


def acceptance_programs() -> Dict[str, Tuple[Callable, Callable[[], Sequence]]]:
    """The Ascend C acceptance cases (tests/python/test_acceptance.py, test_acceptance_reduce.py):
    each elementwise and reduction pattern at (8, 4096) in fp32 and at (4, 128, 768) in bf16,
    and the sum and softmax over an outer and a middle dim."""
    import torch

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
    import test_acceptance as elementwise
    import test_acceptance_reduce as reduce

    out: Dict[str, Tuple[Callable, Callable[[], Sequence]]] = {}
    for shape, dtype, tag in (((8, 4096), torch.float32, "fp32"), ((4, 128, 768), torch.bfloat16, "bf16")):
        def x_of(shape=shape, dtype=dtype):
            return torch.randn(*shape, generator=torch.Generator().manual_seed(0)).to(dtype)

        for fn in elementwise.PATTERNS:
            out[f"{fn.__name__}_{tag}"] = (fn, lambda x_of=x_of: (x_of(), *elementwise._params(x_of().shape[-1],
                                                                                             x_of().dtype)))
        for fn, extra in reduce.PATTERNS.items():
            out[f"{fn.__name__}_{tag}"] = (fn, lambda x_of=x_of, extra=extra: (x_of(), *extra(x_of())))
    for op, dim, shape in reduce.OUTER_AND_MIDDLE:
        fn = (lambda x, d=dim: x.sum(d)) if op == "sum" else (lambda x, d=dim: torch.softmax(x, d))
        out[f"{op}_dim{dim}_{'x'.join(map(str, shape))}"] = (fn, lambda shape=shape: (torch.randn(*shape),))
    return out


def golden_sources(out_root: str) -> Dict[str, str]:
    """The Ascend C goldens (tests/lit/codegen/ascendc_*.ir) as autofuse-opt prints them, a
    source per graph under `out_root`: every kernel with its TilingData and host tiling
    function, as the emulated build compiles them."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    opt = os.path.join(root, "build", "py", "autofuse-opt")
    out = {}
    for ir in sorted(glob.glob(os.path.join(root, "tests", "lit", "codegen", "ascendc_*.ir"))):
        name = os.path.basename(ir)[:-3]
        p = subprocess.run([opt, "--isa=avx2", "--target=ascendc", "--passes=fuse,codegen", ir],
                           capture_output=True, text=True)
        if p.returncode != 0:
            continue  # a golden of an error case
        # A golden of several graphs prints one source each, each from its banner; a kernel the
        # Ascend C emitter cannot print stays C++, in a CPU source of its own (left out here).
        banner = "// Generated by autofuse: Ascend C kernels"
        parts = [x.split("// Generated by autofuse: CPU kernels")[0] for x in p.stdout.split(banner)[1:]]
        for i, part in enumerate(parts):
            path = os.path.join(out_root, "goldens", f"{name}_{i}.cpp")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(banner + part)
            out[f"{name}_{i}"] = path
    return out


def api_names(sources: Sequence[str]) -> List[str]:
    """The AscendC:: names the sources use (free functions, types, enums), sorted."""
    names = set()
    for src in sources:
        names.update(re.findall(r"AscendC::([A-Za-z_][A-Za-z0-9_]*)", open(src).read()))
    return sorted(names - {"emu"})


def undeclared(names: Sequence[str], roots: Sequence[str]) -> List[str]:
    """The names no header under the `roots` (one release's tree) declares (a function, type or
    enum of that name)."""
    missing = []
    for n in names:
        pat = (r"(inline|void|auto|[A-Za-z_>*]+)[ \t]+" + n + r"[ \t]*(\(|<)|"
               r"(struct|class|enum class|enum|using)[ \t]+" + n + r"\b")
        p = subprocess.run(["grep", "-rlE", pat, *roots, "--include=*.h"], capture_output=True, text=True)
        if not p.stdout.strip():
            missing.append(n)
    return missing


def compile_package(folder: str, flags: Sequence[str], cxx: str) -> List[str]:
    """Errors (compiler output, one string per failed file) of one exported package against
    CANN's headers: the kernels and the launchers in CPU-debug mode (`flags`:
    cann_include_flags), the launchers again in NPU mode (ACL; aclrtlaunch_K.h stand-ins for
    the headers CANN's build generates), the host tiling source as plain C++."""
    errors = []
    inc = [f"-I{folder}", f"-I{os.path.join(folder, 'include')}"]
    for src in sorted(glob.glob(os.path.join(folder, "*_kernels.cpp")) + glob.glob(os.path.join(folder, "*_launch.cpp"))):
        errors += _errors([cxx, "-std=c++17", "-fsyntax-only", *CPU_DEBUG_DEFINES, *inc, *flags], src)
    acl = [f for f in flags if f.endswith("-linux/include")]  # acl/acl.h
    for src in sorted(glob.glob(os.path.join(folder, "*_launch.cpp"))):
        with tempfile.TemporaryDirectory() as stand_ins:
            _aclrtlaunch_stand_ins(src, stand_ins)
            errors += _errors([cxx, "-std=c++17", "-fsyntax-only", *inc, f"-I{stand_ins}", *acl], src)
    for src in sorted(glob.glob(os.path.join(folder, "*_tiling.cpp"))):
        errors += _errors([cxx, "-std=c++17", "-fsyntax-only", *inc], src)
    return errors


def clang() -> str:
    """The clang++ the address-space pass uses ("" when none is installed)."""
    return next((c for c in ("clang++-14", "clang++") if shutil.which(c)), "")


def address_space_errors(folder: str, clangxx: str) -> List[str]:
    """Errors of the package's kernels (`folder`: a package, or one source) compiled with __gm__
    as an address space of its own.

    In CPU-debug mode CANN's headers define __gm__ empty, so a cast that drops GM's address
    space (a GM_ADDR read through a struct pointer) compiles there and not on the device; and
    those headers do not compile under clang at all. So this pass compiles the kernels against
    ascendc_emu, whose __gm__ is clang's address_space(1) under AF_EMU_GM_ADDRESS_SPACE."""
    sources = sorted(glob.glob(os.path.join(folder, "*_kernels.cpp"))) if os.path.isdir(folder) else [folder]
    return [e for src in sources for e in _errors(_address_space_command(clangxx, os.path.dirname(src)), src)]


def _address_space_command(clangxx: str, folder: str) -> List[str]:
    from autofuse import _C

    include = _C.runtime_include_dir()
    return [clangxx, "-std=c++17", "-fsyntax-only", "-DAF_ASCENDC_EMU", "-DAF_EMU_GM_ADDRESS_SPACE",
            f"-I{os.path.join(include, 'ascendc_emu')}", f"-I{include}", f"-I{folder}",
            f"-I{os.path.join(folder, 'include')}"]


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cann-home", default=os.environ.get("CANN_HOME", ""))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--cann-version", default="", help="CompilerConfig.cann_version: 8, 9 or \"\" (both)")
    ap.add_argument("--suites", default="programs,goldens,acceptance,models",
                    help="programs (user-style, make demo's), goldens (tests/lit/codegen/ascendc_*.ir), "
                         "acceptance (the tests' Ascend C acceptance cases), models (bench)")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--api-roots", default=os.environ.get("CANN_API_ROOTS", ""),
                    help="another release's header tree (its folders, comma-separated) to look the "
                         "emitted API names up in, e.g. asc-devkit v9.0.0's include,impl")
    ap.add_argument("--keep", default="", help="export into this folder and keep it")
    args = ap.parse_args(argv)
    if not args.cann_home:
        print(HOW_TO_GET)
        return 0
    flags = cann_include_flags(args.cann_home)
    import autofuse

    out_root = args.keep or tempfile.mkdtemp(prefix="autofuse-check-cann-")
    suites = [x for x in args.suites.split(",") if x]
    every = {**(programs() if "programs" in suites else {}),
             **(acceptance_programs() if "acceptance" in suites else {}),
             **(model_programs() if "models" in suites else {})}
    chosen = [n for n in args.only.split(",") if n] or list(every)
    clangxx = clang()
    failed, as_failed, checked = 0, 0, 0
    if "goldens" in suites:
        from autofuse import _C

        include = [f"-I{_C.runtime_include_dir()}"]
        for name, src in golden_sources(out_root).items():
            errors = _errors([args.cxx, "-std=c++17", "-fsyntax-only", *CPU_DEBUG_DEFINES, *include, *flags], src)
            as_errors = address_space_errors(src, clangxx) if clangxx else []
            checked += 1
            failed += bool(errors)
            as_failed += bool(as_errors)
            print(f"{'FAIL' if errors or as_errors else 'ok  '} golden {name}" + "".join(f"\n  {e}" for e in errors)
                  + "".join(f"\n  address space: {e}" for e in as_errors), flush=True)
    import torch

    for name in chosen:
        fn, inputs = every[name]
        torch._dynamo.reset()  # the model programs share one code object: Dynamo's recompile limit
        out = autofuse.export_ascendc(fn, *inputs(), out_dir=os.path.join(out_root, name),
                                      cann_version=args.cann_version)
        for g, folder in sorted(out.folders.items()):
            errors = compile_package(folder, flags, args.cxx)
            as_errors = address_space_errors(folder, clangxx) if clangxx else []
            checked += 1
            failed += bool(errors)
            as_failed += bool(as_errors)
            print(f"{'FAIL' if errors or as_errors else 'ok  '} {name}/{g}"
                  + "".join(f"\n  {e}" for e in errors) + "".join(f"\n  address space: {e}" for e in as_errors),
                  flush=True)
        for k, why in out.skipped.items():
            print(f"skip {name}/{k}: {why}")
    print(f"check-cann: {checked - failed} of {checked} packages and goldens compile against {args.cann_home} "
          "in CPU-debug mode")
    print(f"check-cann: {checked - as_failed} of {checked} keep GM's address space ({clangxx})"
          if clangxx else "check-cann: address-space pass skipped: no clang++ (apt install clang-14)")
    failed += as_failed
    # The API the exported sources use, against every header tree given: a name one of them
    # does not declare compiles against the other only (CANN 9.x's headers do not compile in
    # CPU-debug mode from the public trees, so for them this is the check).
    sources = glob.glob(os.path.join(out_root, "**", "*.cpp"), recursive=True)
    names = api_names([x for x in sources if not x.endswith("_tiling.cpp")])
    for roots in [[args.cann_home], [r for r in args.api_roots.split(",") if r]]:
        if not roots:
            continue
        missing = undeclared(names, roots)
        print(f"check-cann: {len(names) - len(missing)} of the {len(names)} AscendC names the sources use are "
              f"declared under {', '.join(roots)}" + (f"; not: {', '.join(missing)}" if missing else ""))
    if not args.keep:
        shutil.rmtree(out_root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
