"""CompilerConfig: the options of one autofuse backend, with defaults from the environment."""

from __future__ import annotations

import dataclasses
import numbers
import os
from typing import Any, Callable, Dict, Optional, Sequence, Union

# The words a boolean environment variable (AUTOFUSE_FUSION, AUTOFUSE_TUNE, ...) may hold, any
# case; "" or unset keeps the default, anything else is a ValueError naming the variable.
_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off")


def _env_str(name: str, default: str = "") -> str:
    return os.environ.get(name) or default


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    word = value.strip().lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    raise ValueError(f"autofuse: bad value {value!r} for the environment variable {name}; valid values: "
                     f"{', '.join(_TRUE_WORDS)} (on), {', '.join(_FALSE_WORDS)} (off), any case, or unset")


# The values the choice settings take. The core owns the ISA names (src/target/target.cpp) and the
# targets with their options (src/backends/registry.cpp): _core_choices() asks it, the ISAs
# for this host through _host_isas(); FRONTENDS is Python's own (backend.py, inductor/).
ISAS = ("avx512", "avx2", "scalar")
FRONTENDS = ("autofuse", "inductor")


def _host_isas() -> Sequence[str]:
    from . import _C

    return list(_C.host_isas())


def _core_choices(target: str = "", option: str = "") -> Sequence[str]:
    """The registered targets' names, or the values target `target`'s option `option` takes."""
    from . import _C

    targets = {name: options for name, _summary, options in _C.targets()}
    return tuple(targets[target][option]) if option else tuple(targets)


@dataclasses.dataclass(frozen=True)
class Setting:
    """What one CompilerConfig field takes: its type, the environment variable that gives its
    default ("" when none), and for a choice the valid values ("" first when it means a
    default), the names of a wider set some of which this host cannot run, and what "" means."""

    kind: Any  # bool, int, str, or "passes" (a str or a sequence of str)
    env: str = ""
    optional: bool = False  # None allowed (the fusion fields: None keeps AUTOFUSE_FLAGS' value)
    choices: Optional[Callable[[], Sequence[str]]] = None
    known: Sequence[str] = ()  # every name of the set (choices() may be the host's part of it)
    empty: str = ""  # what "" means, when "" is valid


# Every CompilerConfig field, in declaration order: the one table CompilerConfig.validate() checks.
# Value ranges of the fusion fields and the sanitizer names are the core's rules
# (src/pipeline/flags.cpp, src/jit/sanitize.cpp): validate() asks the core for those.
SETTINGS: Dict[str, Setting] = {
    "dump_dir": Setting(str, "AUTOFUSE_DUMP"),
    "cache_dir": Setting(str, "AUTOFUSE_CACHE_DIR"),
    "cxx": Setting(str, "CXX"),
    "enable_fusion": Setting(bool, "AUTOFUSE_FUSION"),
    "fallback_on_error": Setting(bool),
    "tune": Setting(bool, "AUTOFUSE_TUNE"),
    "pack_weights": Setting(bool, "AUTOFUSE_PACK_WEIGHTS"),
    "channels_last": Setting(bool, "AUTOFUSE_CHANNELS_LAST"),
    "isa": Setting(str, "AUTOFUSE_ISA", choices=lambda: [""] + _host_isas(), known=ISAS,
                   empty="the host's best"),
    "sanitize": Setting(str, "AUTOFUSE_SANITIZE"),
    "target": Setting(str, "AUTOFUSE_TARGET", choices=lambda: ("",) + _core_choices(), empty="cpu"),
    "cann_version": Setting(str, "AUTOFUSE_CANN_VERSION", choices=lambda: ("",) + _core_choices("ascendc", "cann"),
                            empty="what both 8.x and 9.x accept"),
    "ascend_soc": Setting(str, "AUTOFUSE_ASCEND_SOC", choices=lambda: ("",) + _core_choices("ascendc", "soc"),
                          empty="Ascend910B1"),
    "frontend": Setting(str, "AUTOFUSE_FRONTEND", choices=lambda: FRONTENDS, known=FRONTENDS),
    "autofuse_flags": Setting(str, "AUTOFUSE_FLAGS"),
    "enable_autofuse": Setting(bool, optional=True),
    "enable_passes": Setting("passes", optional=True),
    "disable_passes": Setting("passes", optional=True),
    "max_fusion_size": Setting(int, optional=True),
    "max_fusion_inputs": Setting(int, optional=True),
    "recomputation_threshold": Setting(int, optional=True),
    "max_reduce_epilogue": Setting(int, optional=True),
    "emulate_precision_casts": Setting(bool, optional=True),
}


def _env_default(field: str, default: Any) -> Any:
    """A dataclass field whose default the field's environment variable (SETTINGS) gives."""
    setting = SETTINGS[field]
    if setting.kind is bool:
        return dataclasses.field(default_factory=lambda: _env_bool(setting.env, default))
    return dataclasses.field(default_factory=lambda: _env_str(setting.env, default))


def _option(field: str) -> str:
    env = SETTINGS[field].env
    return f"option {field!r}" + (f" / {env}" if env else "")


def _type_problem(value: Any, setting: Setting) -> str:
    """"" when `value` has the setting's type, else what it must be."""
    if value is None and setting.optional:
        return ""
    none = " or None" if setting.optional else ""
    if setting.kind is bool:
        return "" if isinstance(value, bool) else f"must be a bool: True or False{none}"
    if setting.kind is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        return "" if ok else f"must be an int{none}"
    if setting.kind == "passes":
        ok = isinstance(value, str) or (isinstance(value, (list, tuple))
                                         and all(isinstance(v, str) for v in value))
        return "" if ok else f"must be a str (\"a,b\") or a list of str{none}"
    return "" if isinstance(value, str) else "must be a str"


def _choice_problem(field: str, value: str, setting: Setting) -> str:
    """"" when `value` is one of the setting's choices, else the error message."""
    valid = list(setting.choices())
    if value in valid:
        return ""
    listed = ", ".join(f"{v!r}" + (f" ({setting.empty})" if v == "" and setting.empty else "") for v in valid)
    if value in setting.known:  # a name the core knows, not for this host
        return (f"autofuse: {field} {value!r} does not run on this host ({_option(field)}); "
                f"valid values here: {listed}")
    text = f"autofuse: unknown {field} {value!r} ({_option(field)}); valid values: {listed}"
    near = value.strip().lower()
    if near != value and (near in valid or near in setting.known):
        text += (f"; names are exact (lower case, no spaces): did you mean {near!r}"
                 f"{'' if near in valid else ', which this host does not run'}? (refused, not "
                 f"normalized, so a typo never silently picks another setting)")
    return text


@dataclasses.dataclass
class CompilerConfig:
    """Options of the autofuse backend (TorchAir style: build one, pass it to get_backend).

    Defaults are read from the environment when the config is created (a boolean variable
    takes 1/true/yes/on or 0/false/no/off, any case; another word is a ValueError naming it):
      dump_dir         AUTOFUSE_DUMP        write every IR stage of every graph there (created
                                            if missing; if it cannot be written, e.g. a file or
                                            /proc/x, a warning naming it and the OS error, once,
                                            and graphs compile and run without dumps)
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
                                            the host runs, autofuse.host_isas() ("" = the host's
                                            best); a way to test every kernel path on one
                                            machine.
      target           AUTOFUSE_TARGET      what kernels become: "cpu" (C++, the default, also
                                            "") or "ascendc": Ascend C for every kernel the Ascend C
                                            emitter prints, built and run against ascendc_emu,
                                            which checks the device's rules (docs/ascendc.md);
                                            the rest stay C++. ("cuda" is printed by autofuse-opt
                                            only, not yet built: a graph compiled for it runs
                                            eagerly with the reason; docs/cuda.md.)
      cann_version     AUTOFUSE_CANN_VERSION the CANN release whose Ascend C API spelling the
                                            ascendc target writes where releases differ: "8"
                                            or "9" ("" = the spelling both accept, the
                                            default; docs/ascendc.md "Conformance").
      ascend_soc       AUTOFUSE_ASCEND_SOC  the Ascend SoC the ascendc target's tiling is for
                                            (CANN's name: Ascend910B1 .. B4, Ascend910_93xx;
                                            "" = Ascend910B1): its vector cores bound the
                                            blocks a launch uses (48 or 40).
      frontend         AUTOFUSE_FRONTEND    who captures and fuses: "autofuse" (the default: FX ->
                                            Graph IR -> autofuse's fusion) or "inductor" (Inductor's
                                            lowering and fusion groups, each group compiled by
                                            autofuse from AscIR on: autofuse/inductor/).
      sanitize         AUTOFUSE_SANITIZE    "address,undefined" (or one of them): kernels built
                                            with those sanitizers (make sanitize); address needs
                                            the ASan runtime preloaded, or graphs run eagerly
                                            with a message saying so.

    Fusion settings (docs/user-guide.md "AUTOFUSE_FLAGS"). `autofuse_flags` is CANN AutoFuse's flag text,
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
    naming the bad flag. enable_fusion=False (one kernel per op) is separate and wins over the
    flags.

    Every setting is checked when the backend is made: get_backend() (and so backend="autofuse"
    with options=) calls validate(), which raises ValueError naming the option, its environment
    variable and the valid values, before any compile, so a bad setting never becomes an eager
    fallback per graph. Types are strict (a bool field takes True/False, an int field an int)
    and names exact lower case ("AVX2", "AscendC" are refused with a hint). The rules are the
    table SETTINGS; the flag ranges and sanitizer names are the core's.
    """

    dump_dir: str = _env_default("dump_dir", "")
    cache_dir: str = _env_default("cache_dir", "")
    cxx: str = _env_default("cxx", "g++")
    enable_fusion: bool = _env_default("enable_fusion", True)
    fallback_on_error: bool = True
    tune: bool = _env_default("tune", False)
    pack_weights: bool = _env_default("pack_weights", True)
    channels_last: bool = _env_default("channels_last", True)
    isa: str = _env_default("isa", "")
    sanitize: str = _env_default("sanitize", "")
    target: str = _env_default("target", "")
    cann_version: str = _env_default("cann_version", "")
    ascend_soc: str = _env_default("ascend_soc", "")
    frontend: str = _env_default("frontend", "autofuse")
    autofuse_flags: str = _env_default("autofuse_flags", "")
    enable_autofuse: Optional[bool] = None
    enable_passes: Optional[Union[str, Sequence[str]]] = None
    disable_passes: Optional[Union[str, Sequence[str]]] = None
    max_fusion_size: Optional[int] = None
    max_fusion_inputs: Optional[int] = None
    recomputation_threshold: Optional[int] = None
    max_reduce_epilogue: Optional[int] = None
    emulate_precision_casts: Optional[bool] = None

    def __post_init__(self) -> None:
        for field in ("dump_dir", "cache_dir"):  # a pathlib.Path is a path too
            value = getattr(self, field)
            if isinstance(value, os.PathLike):
                setattr(self, field, os.fspath(value))

    def validate(self) -> None:
        """Raises ValueError naming the option (and its environment variable) and the valid
        values for any bad setting; get_backend() calls it, so a bad setting fails when the
        backend is made, before any compile, and never becomes a per-graph eager fallback.

        The rules, all in SETTINGS: each field's type (a bool field takes only True/False, an
        int field only an int: "no", "false" or "4" are refused, never read as text); isa one
        of the ISAs the host runs (autofuse.host_isas()) or "", target "cpu", "ascendc" or "",
        frontend "autofuse" or "inductor", each exact lower case ("AVX2" is refused with a
        hint, not normalized); and the core's own rules: the fusion flags and typed fusion
        fields (fusion_settings(): FlagError, a ValueError) and the sanitizer names
        (_C.parse_sanitize: FlagError)."""
        from . import _C

        self.fusion_settings()  # the core's rules first: its messages name the flag
        for field, setting in SETTINGS.items():
            value = getattr(self, field)
            problem = _type_problem(value, setting)
            if problem:
                raise ValueError(f"autofuse: {_option(field)} {problem}; got {value!r} ({type(value).__name__})")
            if setting.choices is not None:
                problem = _choice_problem(field, value, setting)
                if problem:
                    raise ValueError(problem)
        try:
            _C.parse_sanitize(self.sanitize)
        except _C.FlagError as e:  # its message starts "AUTOFUSE_SANITIZE: "
            raise _C.FlagError(f"autofuse: option 'sanitize' / {e}") from None

    def compile_options(self) -> Dict[str, str]:
        """The keyword arguments every core compile takes from the config (_C.compile,
        compile_kernels, compile_ascir)."""
        return {"cache_dir": self.cache_dir, "cxx": self.cxx, "isa": self.isa, "sanitize": self.sanitize,
                "target": self.target, "cann": self.cann_version, "soc": self.ascend_soc,
                "tuning_file": self.tuning_file()}

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
            elif isinstance(value, (list, tuple)) and flag.endswith("_pass"):
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
