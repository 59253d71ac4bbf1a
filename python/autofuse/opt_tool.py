"""The `autofuse-opt` command a pip install puts on PATH: runs the C++ driver installed beside
the extension (autofuse/bin/autofuse-opt) with the same arguments."""

import os
import sys


def path() -> str:
    """The installed autofuse-opt binary."""
    from . import _C

    return os.path.join(os.path.dirname(os.path.abspath(_C.__file__)), "bin", "autofuse-opt")


def main() -> None:
    exe = path()
    if not os.access(exe, os.X_OK):
        sys.exit(f"autofuse-opt: {exe} is missing; reinstall autofuse")
    os.execv(exe, [exe] + sys.argv[1:])
