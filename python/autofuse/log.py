"""Logging for autofuse: the "autofuse" logger, configured from AUTOFUSE_LOG.

AUTOFUSE_LOG=info shows compile times, kernel counts and fallbacks; =debug adds the pipeline's
own lines (cache hits and misses, compiler commands). Without it only warnings (fallbacks to
eager) reach stderr, through Python's last-resort handler.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("autofuse")


def configure_from_env() -> None:
    """Adds a stderr handler at the level AUTOFUSE_LOG names (once)."""
    level = os.environ.get("AUTOFUSE_LOG", "").strip().upper()
    if not level or getattr(configure_from_env, "_done", False):
        return
    configure_from_env._done = True  # type: ignore[attr-defined]
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("[autofuse] %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(getattr(logging, level, logging.INFO))
