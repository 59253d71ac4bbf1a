"""CompilerConfig: the options of one autofuse backend, with defaults from the environment."""

from __future__ import annotations

import dataclasses
import os


def _env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


@dataclasses.dataclass
class CompilerConfig:
    """Options of the autofuse backend (TorchAir style: build one, pass it to get_backend).

    Defaults are read from the environment when the config is created:
      dump_dir         AUTOFUSE_DUMP        write every IR stage of every graph there
      cache_dir        AUTOFUSE_CACHE_DIR   JIT disk cache ("" = the core's private default)
      cxx              CXX                  the system C++ compiler (default "g++")
      enable_fusion    AUTOFUSE_FUSION      false: every fusible op its own kernel
      fallback_on_error                     on a compile error run the graph eagerly (warn)
    """

    dump_dir: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_DUMP"))
    cache_dir: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_CACHE_DIR"))
    cxx: str = dataclasses.field(default_factory=lambda: _env_str("CXX") or "g++")
    enable_fusion: bool = dataclasses.field(
        default_factory=lambda: _env_bool("AUTOFUSE_FUSION", True)
    )
    fallback_on_error: bool = True

    def replace(self, **changes) -> "CompilerConfig":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)
