"""CompilerConfig: the options of one autofuse backend, with defaults from the environment."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, Optional, Sequence, Union


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
      tune             AUTOFUSE_TUNE        measured tuning: each kernel times candidate tilings
                                            once per shape bucket and keeps the fastest in
                                            <cache dir>/tuning.txt (later runs reuse it); never
                                            changes results. Off by default.
      pack_weights     AUTOFUSE_PACK_WEIGHTS linear layers run on oneDNN/MKL with packed weights:
                                            in inference kept across calls until a write reaches
                                            the weight, in training packed per call where that
                                            pays (packed_linear.py); so do inference
                                            convolutions, on oneDNN (packed_conv.py); on by
                                            default.
      channels_last    AUTOFUSE_CHANNELS_LAST a graph with 2-d convolutions runs each in its
                                            faster layout on this CPU (conv_layouts.RULES), the
                                            vector work between them in it
                                            (channels_last.py); on by default.
      isa              AUTOFUSE_ISA         the kernels' vector ISA: avx512, avx2 or scalar, one
                                            the host runs ("" = the host's best); a way to test
                                            every kernel path on one machine.
      target           AUTOFUSE_TARGET      what kernels become: "cpu" (C++, the default) or
                                            "ascendc": Ascend C for every kernel the Ascend C
                                            emitter prints, built and run against ascendc_emu,
                                            which checks the device's rules (docs/ascendc.md);
                                            the rest stay C++.
      frontend         AUTOFUSE_FRONTEND    who captures and fuses: "autofuse" (the default: FX ->
                                            Graph IR -> autofuse's fusion) or "inductor" (Inductor's
                                            lowering and fusion groups, each group compiled by
                                            autofuse from AscIR on: autofuse/inductor/).
      sanitize         AUTOFUSE_SANITIZE    "address,undefined" (or one of them): kernels built
                                            with those sanitizers (make sanitize); address needs
                                            the ASan runtime preloaded, or graphs run eagerly
                                            with a message saying so.

    Fusion settings (README "AUTOFUSE_FLAGS"). `autofuse_flags` is CANN AutoFuse's flag text,
    "--key=value;--key=value", by default the environment variable AUTOFUSE_FLAGS. The typed
    fields set the same settings and win over the text; None keeps the text's (or the default)
    value:
      autofuse_flags           AUTOFUSE_FLAGS            e.g. "--autofuse_disable_pass=reduce"
      enable_autofuse          --enable_autofuse         False: graphs run eagerly, no kernels
                                                         (CANN: AutoFuse off); default True
      enable_passes            --autofuse_enable_pass    passes to turn on ("a,b" or a list):
                                                         elementwise, broadcast, reduce, concat
      disable_passes           --autofuse_disable_pass   passes to turn off: reduce, concat
                                                         (wins over enable_passes)
      max_fusion_size          --max_fusion_size         most compute nodes per kernel (64)
      max_fusion_inputs        --max_fusion_inputs       most inputs per kernel (8)
      recomputation_threshold  --recomputation_threshold 0..255 (1)
      max_reduce_epilogue      --max_reduce_epilogue     most ops after a reduce in its kernel (32)
      emulate_precision_casts  --emulate_precision_casts True: an f16/bf16 value is rounded after
                                                         every op inside a kernel, as eager rounds
                                                         it; default False: kept in f32 until
                                                         stored (CANN's precision pass, Inductor)
    fusion_settings() combines them and raises FlagError (a ValueError, autofuse._C.FlagError)
    naming the bad flag; get_backend() calls it, so a bad setting fails before any compile and
    never becomes an eager fallback. enable_fusion=False (one kernel per op) is separate and
    wins over the flags.
    """

    dump_dir: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_DUMP"))
    cache_dir: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_CACHE_DIR"))
    cxx: str = dataclasses.field(default_factory=lambda: _env_str("CXX") or "g++")
    enable_fusion: bool = dataclasses.field(
        default_factory=lambda: _env_bool("AUTOFUSE_FUSION", True)
    )
    fallback_on_error: bool = True
    tune: bool = dataclasses.field(default_factory=lambda: _env_bool("AUTOFUSE_TUNE", False))
    pack_weights: bool = dataclasses.field(default_factory=lambda: _env_bool("AUTOFUSE_PACK_WEIGHTS", True))
    channels_last: bool = dataclasses.field(default_factory=lambda: _env_bool("AUTOFUSE_CHANNELS_LAST", True))
    isa: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_ISA"))
    sanitize: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_SANITIZE"))
    target: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_TARGET"))
    frontend: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_FRONTEND") or "autofuse")
    autofuse_flags: str = dataclasses.field(default_factory=lambda: _env_str("AUTOFUSE_FLAGS"))
    enable_autofuse: Optional[bool] = None
    enable_passes: Optional[Union[str, Sequence[str]]] = None
    disable_passes: Optional[Union[str, Sequence[str]]] = None
    max_fusion_size: Optional[int] = None
    max_fusion_inputs: Optional[int] = None
    recomputation_threshold: Optional[int] = None
    max_reduce_epilogue: Optional[int] = None
    emulate_precision_casts: Optional[bool] = None

    def tuning_file(self) -> str:
        """The tuning table's path when `tune` is on (in the JIT cache dir), else ""."""
        if not self.tune:
            return ""
        from . import _C

        return _C.tuning_file(self.cache_dir)

    def fusion_settings(self) -> Dict[str, Any]:
        """The effective fusion settings: `autofuse_flags`, then the typed fields on top.

        A dict (enable_autofuse, passes, max_fusion_size, max_fusion_inputs,
        recomputation_threshold, max_reduce_epilogue, emulate_precision_casts, and "flags": all of them as canonical
        AUTOFUSE_FLAGS text). Raises FlagError naming the flag on a bad setting.
        """
        from . import _C

        base = _C.parse_flags(self.autofuse_flags or "")["flags"]
        return _C.parse_flags(self._field_flags(), base=base, source="CompilerConfig")

    def _field_flags(self) -> str:
        """The typed fields that are set, as AUTOFUSE_FLAGS text."""
        from . import _C

        def text(flag: str, value: Any) -> str:
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif not isinstance(value, str) and flag.endswith("_pass"):
                value = ",".join(str(v) for v in value)
            value = str(value)
            if ";" in value:
                raise _C.FlagError(f"CompilerConfig: bad value {value!r} for {flag} (';' separates flags)")
            return f"{flag}={value}"

        fields = [
            ("--enable_autofuse", self.enable_autofuse),
            ("--autofuse_enable_pass", self.enable_passes),
            ("--autofuse_disable_pass", self.disable_passes),
            ("--max_fusion_size", self.max_fusion_size),
            ("--max_fusion_inputs", self.max_fusion_inputs),
            ("--recomputation_threshold", self.recomputation_threshold),
            ("--max_reduce_epilogue", self.max_reduce_epilogue),
            ("--emulate_precision_casts", self.emulate_precision_casts),
        ]
        return ";".join(text(flag, value) for flag, value in fields if value is not None)

    def replace(self, **changes) -> "CompilerConfig":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_compile_args(cls, mode: Optional[str] = None, options: Optional[Dict[str, Any]] = None
                          ) -> "CompilerConfig":
        """The config for `torch.compile(..., backend="autofuse", mode=..., options=...)`: the
        environment's defaults, then the mode's fields (MODES), then `options` (CompilerConfig
        fields by name). Raises ValueError naming the valid modes or fields."""
        mode = mode or "default"
        if mode not in MODES:
            raise ValueError(f"autofuse: unknown mode {mode!r}; valid modes: {', '.join(MODES)}")
        fields = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options or {}) - set(fields))
        if unknown:
            raise ValueError(f"autofuse: unknown option(s) {', '.join(map(repr, unknown))}; valid options "
                             f"(CompilerConfig fields): {', '.join(fields)}")
        return cls(**dict(MODES[mode], **(options or {})))


# torch.compile's modes as CompilerConfig fields. No CUDA graphs on a CPU: "reduce-overhead"
# is the default (the executor already runs each graph as one printed function) and the
# "-no-cudagraphs" variant means what plain "max-autotune" does: measured tuning.
MODES: Dict[str, Dict[str, Any]] = {
    "default": {},
    "reduce-overhead": {},
    "max-autotune": {"tune": True},
    "max-autotune-no-cudagraphs": {"tune": True},
}
