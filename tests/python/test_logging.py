"""The "autofuse" logger the PyTorch way (log.py): TORCH_LOGS="+autofuse" and the README's
one-line `logging.getLogger("autofuse").setLevel(logging.DEBUG)` both show our debug lines on
stderr, AUTOFUSE_LOG=debug too (it wins over TORCH_LOGS' level), each line once whichever of them
are combined, and nothing below a warning shows by default. Each case runs in a fresh
interpreter: torch reads TORCH_LOGS when it is imported."""
import os
import subprocess
import sys

import pytest

PROGRAM = """
{imports}
{setup}
torch.compile(lambda x: torch.sigmoid(x) * x, backend="autofuse")(torch.randn(8))
"""
README_LINE = 'logging.getLogger("autofuse").setLevel(logging.DEBUG)'


def stderr_of(setup: str, autofuse_first: bool = False, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("TORCH_LOGS", "AUTOFUSE_LOG")}
    environ.update(env)
    imports = "import logging, autofuse, torch" if autofuse_first else "import logging, torch, autofuse"
    r = subprocess.run([sys.executable, "-c", PROGRAM.format(imports=imports, setup=setup)], capture_output=True,
                       text=True, env=environ, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stderr


# (setup code, environment): each way of turning the debug lines on, alone and together. TORCH_LOGS
# naming autofuse imports the package from inside torch's own log setup, which then gave the
# logger a second stderr handler: every line printed twice.
WAYS = {
    "TORCH_LOGS": ("", {"TORCH_LOGS": "+autofuse"}),
    "readme": (README_LINE, {}),
    "AUTOFUSE_LOG": ("", {"AUTOFUSE_LOG": "debug"}),
    "TORCH_LOGS+AUTOFUSE_LOG": ("", {"TORCH_LOGS": "+autofuse", "AUTOFUSE_LOG": "debug"}),
    "TORCH_LOGS+readme": (README_LINE, {"TORCH_LOGS": "+autofuse"}),
    "TORCH_LOGS info+AUTOFUSE_LOG": ("", {"TORCH_LOGS": "autofuse", "AUTOFUSE_LOG": "debug"}),
    "set_logs": ('torch._logging.set_logs(modules={"autofuse": logging.DEBUG})', {}),
    "TORCH_LOGS, autofuse imported first": ("", {"TORCH_LOGS": "+autofuse"}),
}


@pytest.mark.parametrize("how", sorted(WAYS))
def test_debug_lines_show_once(how):
    setup, env = WAYS[how]
    err = stderr_of(setup, autofuse_first="imported first" in how, **env)
    assert err.count("fusion flags:") == 1, err  # a debug line of the pipeline
    assert err.count("autofuse: graph g0: 1 kernel(s)") == 1, err  # the info line of the compile


def test_quiet_by_default_and_not_printed_twice():
    err = stderr_of("logging.basicConfig(level=logging.DEBUG)")
    assert "fusion flags:" not in err
    lines = [ln for ln in err.splitlines() if "kernel(s) for" in ln]
    assert not lines  # info is below the logger's default level


def test_registered_with_torch_logging():
    from torch._logging import _internal

    assert _internal.log_registry.is_log("autofuse")
