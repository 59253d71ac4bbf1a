"""Logging for autofuse: the "autofuse" logger, set up the way PyTorch sets up its own.

It is registered with torch's logging, so `TORCH_LOGS="+autofuse"` (debug) or `"autofuse"`
(info) and `torch._logging.set_logs(modules={"autofuse": logging.DEBUG})` control it, and it
carries torch's stderr handler and format, so `logging.getLogger("autofuse").setLevel(logging.DEBUG)`
alone shows its lines. It has exactly one such handler whichever of these are combined (with
TORCH_LOGS naming it, torch imports this package from inside its own log setup and attaches the
handler itself: configure() then leaves that to torch). Like torch's loggers it does not
propagate to the root logger (no line printed twice under `logging.basicConfig`).
AUTOFUSE_LOG=info|debug sets its level from the environment, over TORCH_LOGS': info shows
compile times, kernel counts and fallbacks; debug adds the pipeline's own lines (cache hits and
misses, compiler commands). By default only warnings (a graph that runs eagerly, and why) are
shown.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Optional

logger = logging.getLogger("autofuse")


def _inside_torch_log_setup(tlog) -> bool:
    """Whether torch's `_init_logs` is running below us: `import torch` with TORCH_LOGS naming
    "autofuse" imports this package from there, and right after the import torch gives every
    registered logger, ours included, its handler and the TORCH_LOGS level."""
    init = getattr(getattr(tlog, "_init_logs", None), "__code__", None)
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is init:
            return True
        frame = frame.f_back
    return False


def _attach_torch_handler() -> Optional[bool]:
    """Registers the logger with torch's logging and gives it torch's handler (once); False
    when this torch's logging internals differ (then a plain stderr handler is used), None when
    torch's own log setup is under way and will attach it (configure then finishes later)."""
    try:
        from torch._logging import _internal as tlog

        if not tlog.log_registry.is_log(logger.name):
            tlog.register_log(logger.name, logger.name)
        if _inside_torch_log_setup(tlog):
            return None  # a handler added now would be the second: torch adds its own next
        if not any(tlog._is_torch_handler(h) for h in logger.handlers):
            tlog._setup_handlers(logging.StreamHandler, logger)
        levels = dict(tlog.log_state.get_log_level_pairs())
    except (ImportError, AttributeError, TypeError):
        return False
    if logger.name in levels:  # TORCH_LOGS or set_logs named it
        logger.setLevel(levels[logger.name])
    return True


def configure() -> None:
    """Sets the logger up (once per process): torch's handler, exactly one (whichever of torch's
    log setup and this runs first), no propagation, the level AUTOFUSE_LOG names (else what
    TORCH_LOGS set, else WARNING unless the user set one). Called when the package is imported
    and again by get_backend() and each compile: when torch's own log setup imported the
    package (TORCH_LOGS="+autofuse"), the first call only registers the logger and a later
    one finishes."""
    if getattr(configure, "_done", False):
        return
    attached = _attach_torch_handler()
    if attached is None:
        return
    configure._done = True  # type: ignore[attr-defined]
    if not attached and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[autofuse] %(levelname)s %(message)s"))
        logger.addHandler(handler)
    logger.propagate = False
    level = os.environ.get("AUTOFUSE_LOG", "").strip().upper()
    if level:
        logger.setLevel(getattr(logging, level, logging.INFO))
    elif logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
