"""Dump files (AUTOFUSE_DUMP, CompilerConfig.dump_dir): where they go, and what happens when they
cannot be written there.

Dumps are a debugging aid: a directory that cannot be made or written (a path under /proc, one
that is a file, no permission, a full disk) is a warning naming the variable or option and the
OS error, once per directory, and the graph compiles and runs without dumps. Every dump file
goes through usable_dir() and write() (backend.py, inductor/frontend.py); the C++ pipeline's
stage files (src/pipeline/pipeline.cpp) are written only to a directory usable_dir() returned,
and never raise themselves.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Iterator, Set

from .log import logger

_warned: Set[str] = set()


def _source(directory: str) -> str:
    """Which setting named `directory`: the variable when it holds it, else the option."""
    if os.environ.get("AUTOFUSE_DUMP") == directory:
        return "AUTOFUSE_DUMP"
    return "CompilerConfig.dump_dir"


def _warn(directory: str, e: OSError) -> None:
    if directory in _warned:
        return
    _warned.add(directory)
    logger.warning("autofuse: cannot write dump files to %r (%s): %s: %s; graphs compile and run "
                   "without dumps", directory, _source(directory), type(e).__name__, e)


def usable_dir(directory: str) -> str:
    """`directory`, made when missing, when files can be written there; "" when dumping is off
    or the directory is unusable (after the warning, once per directory)."""
    if not directory:
        return ""
    try:
        os.makedirs(directory, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".autofuse-probe-")  # the OS's own verdict
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        _warn(directory, e)
        return ""
    return directory


@contextlib.contextmanager
def guarded(directory: str) -> Iterator[None]:
    """Runs the block that writes dump files to `directory`; an OSError there (a full disk, the
    directory removed) is the warning, not the caller's error."""
    try:
        yield
    except OSError as e:
        _warn(directory, e)


def write(directory: str, filename: str, text: str) -> None:
    """Writes `directory`/`filename` (a usable_dir() result; "" writes nothing)."""
    if not directory:
        return
    with guarded(directory):
        with open(os.path.join(directory, filename), "w") as f:
            f.write(text)
