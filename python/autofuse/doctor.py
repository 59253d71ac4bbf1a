"""`python -m autofuse doctor`: checks that this machine can compile and run autofuse's kernels
and says what to fix for each problem (exit status 1 when there is one).

The toolchain checks (compiler, runtime headers, SLEEF, cache dir) are the core's
(_C.check_toolchain); this adds what only the torch side knows (the OpenMP team, the ISA the
kernels are generated for) and compiles one kernel in a fresh cache and runs it against eager.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import List, Optional, TextIO, Tuple

import torch

from .config import CompilerConfig

Finding = Tuple[str, bool, str, str]  # (what, ok, found, fix)


def _torch_side(config: CompilerConfig) -> List[Finding]:
    from . import _C, host_isas

    threads = torch.get_num_threads()
    backend = "OpenMP" if "ATen parallel backend: OpenMP" in torch.__config__.parallel_info() else "not OpenMP"
    team = (f"torch's OpenMP team, {threads} thread(s)" if _C.joins_openmp()
            else f"autofuse's own thread pool, {threads} thread(s) (no OpenMP runtime loaded)")
    isas = host_isas()
    isa = config.isa or (isas[0] if isas else "")
    isa_ok = isa in isas
    return [
        ("torch", True, f"{torch.__version__}, ATen parallel backend {backend}", ""),
        ("threads", True, team, ""),
        ("kernel ISA", isa_ok, f"{isa or '?'} (this host runs {', '.join(isas) or 'none'}"
         f"{'; AUTOFUSE_ISA=' + config.isa if config.isa else ''})",
         "" if isa_ok else f"set AUTOFUSE_ISA to one of {', '.join(isas)} or leave it unset"),
    ]


def _kernel_check(config: CompilerConfig) -> Finding:
    """Compiles one fused kernel (elementwise + reduce) in a fresh cache and runs it (inputs
    free of cancellation, so eager and the kernel agree at fp32 tolerance)."""
    from . import collect_records, get_backend

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x) * x.abs().sum(-1, keepdim=True) + 1  # no cancellation

    what, fix = "kernel", "fix the problems above; `AUTOFUSE_LOG=debug` shows the compiler's command and output"
    x = torch.randn(64, 33)
    with tempfile.TemporaryDirectory(prefix="autofuse-doctor-") as cache:
        try:  # get_backend raises ValueError on a bad setting (AUTOFUSE_TARGET=cuda): reported too
            backend = get_backend(config.replace(cache_dir=cache, fallback_on_error=False))
            with collect_records() as recs:
                got = torch.compile(f, backend=backend)(x)
        except Exception as e:  # the problem to report (a ToolchainError, a CompileError)
            return what, False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", fix
    kernels = sum(r.num_kernels for r in recs)
    fallbacks = [r.fallback for r in recs if r.fallback]
    if fallbacks or not kernels:
        return what, False, f"the graph ran eagerly: {'; '.join(fallbacks) or 'no kernel'}", fix
    err = (got - f(x)).abs().max().item()
    ok = torch.allclose(got, f(x), rtol=1.3e-6, atol=1e-5)
    return what, ok, f"{kernels} kernel(s) compiled and run, max error vs eager {err:.2g}", "" if ok else (
        "a wrong result: please report it with AUTOFUSE_DUMP=<dir> output")


def run(config: Optional[CompilerConfig] = None, out: TextIO = sys.stdout) -> int:
    """Prints every check; 0 when all pass, else 1."""
    from . import _C, __file__ as package_file

    config = config or CompilerConfig()
    findings: List[Finding] = [("autofuse", True, os.path.dirname(package_file), "")]
    findings += [tuple(f) for f in _C.check_toolchain(config.cxx, config.cache_dir)]
    findings += _torch_side(config)
    toolchain_ok = all(ok for _, ok, _, _ in findings)
    findings.append(_kernel_check(config) if toolchain_ok else
                    ("kernel", False, "not tried (a check above failed)", "fix the problems above"))
    width = max(len(w) for w, *_ in findings)
    for what, ok, found, fix in findings:
        print(f"{'ok  ' if ok else 'FAIL'}  {what:<{width}}  {found}", file=out)
        if not ok:
            print(f"      {'':<{width}}  fix: {fix}", file=out)
    bad = sum(1 for _, ok, _, _ in findings if not ok)
    print(f"autofuse doctor: {'all checks passed' if not bad else f'{bad} problem(s)'}", file=out)
    return 1 if bad else 0
