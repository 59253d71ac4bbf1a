"""torch.compile's `mode=` and `options=` reach autofuse (CompilerConfig.from_compile_args):
the modes users pass by habit are accepted with their documented meaning, options are
CompilerConfig fields, and anything else is a clear error, never an eager fallback."""
import re

import pytest
import torch

import autofuse
from autofuse.config import MODES


def f(x):
    return torch.sigmoid(x) * x + 1


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_mode_compiles_and_runs(mode):
    x = torch.randn(64, 32)
    with autofuse.collect_records() as recs:
        got = torch.compile(f, backend="autofuse", mode=mode)(x)
    torch.testing.assert_close(got, f(x))
    assert recs and all(not r.fallback and r.num_kernels > 0 for r in recs)


def test_max_autotune_turns_on_measured_tuning():
    assert autofuse.CompilerConfig.from_compile_args("max-autotune").tune
    assert not autofuse.CompilerConfig.from_compile_args("default").tune
    assert not autofuse.CompilerConfig.from_compile_args("max-autotune", {"tune": False}).tune


def test_options_are_config_fields():
    x = torch.randn(16, 8)
    with autofuse.collect_records() as recs:
        got = torch.compile(f, backend="autofuse", options={"enable_fusion": False, "max_fusion_size": 4})(x)
    torch.testing.assert_close(got, f(x))
    assert recs[0].num_kernels == 3  # sigmoid, mul, add: one kernel each without fusion


def test_unknown_option_names_the_valid_ones():
    with pytest.raises(Exception, match=r"unknown option\(s\) 'max_autotune'.*valid options.*pack_weights"):
        torch.compile(f, backend="autofuse", options={"max_autotune": True})(torch.randn(4))


def test_unknown_mode_names_the_valid_ones():
    with pytest.raises(Exception, match=r"unknown mode 'fastest'.*max-autotune"):
        torch.compile(f, backend="autofuse", mode="fastest")(torch.randn(4))


# Settings are validated when the backend is made (CompilerConfig.validate, config.SETTINGS):
# names, values, case and types, with a ValueError naming the option and the valid values,
# before any graph compiles. Each of these once ran every graph eagerly with a warning, or
# (bools) silently read a string as True.
BAD_OPTIONS = [
    ({"isa": "AVX2"}, r"unknown isa 'AVX2' \(option 'isa' / AUTOFUSE_ISA\); valid values: '' \(the host's best\), "
                      r".*'scalar'; .*did you mean 'avx2'"),
    ({"isa": "sse2"}, r"unknown isa 'sse2'.*valid values: ''.*'scalar'"),
    ({"isa": " avx2"}, r"unknown isa ' avx2'.*did you mean 'avx2'"),
    ({"target": "AscendC"}, r"unknown target 'AscendC' \(option 'target' / AUTOFUSE_TARGET\); "
                            r"valid values: '' \(cpu\), 'cpu', 'ascendc', 'cuda'; .*did you mean 'ascendc'\?"),
    ({"target": "tpu"}, r"unknown target 'tpu'.*valid values: '' \(cpu\), 'cpu', 'ascendc', 'cuda'$"),
    ({"frontend": "xla"}, r"unknown frontend 'xla'.*valid values: 'autofuse', 'inductor'"),
    ({"tune": "no"}, r"option 'tune' / AUTOFUSE_TUNE must be a bool: True or False; got 'no' \(str\)"),
    ({"pack_weights": "false"}, r"option 'pack_weights' / AUTOFUSE_PACK_WEIGHTS must be a bool.*got 'false'"),
    ({"channels_last": 0}, r"option 'channels_last' / AUTOFUSE_CHANNELS_LAST must be a bool.*got 0 \(int\)"),
    ({"fallback_on_error": "False"}, r"option 'fallback_on_error' must be a bool"),
    ({"enable_autofuse": "true"}, r"option 'enable_autofuse' must be a bool: True or False or None; got 'true'"),
    ({"max_fusion_size": "4"}, r"option 'max_fusion_size' must be an int or None; got '4' \(str\)"),
    ({"dump_dir": 3}, r"option 'dump_dir' / AUTOFUSE_DUMP must be a str; got 3 \(int\)"),
    ({"sanitize": "Address"}, r"option 'sanitize' / AUTOFUSE_SANITIZE: unknown sanitizer 'Address' "
                              r"\(known: address, undefined\)"),
]


@pytest.mark.parametrize("options, message", BAD_OPTIONS, ids=[repr(o) for o, _ in BAD_OPTIONS])
def test_bad_setting_is_refused_when_the_backend_is_made(options, message):
    with pytest.raises(ValueError, match=message):
        autofuse.get_backend(autofuse.CompilerConfig(**options))
    with pytest.raises(Exception) as info:  # torch.compile's options=: Dynamo wraps it
        torch.compile(f, backend="autofuse", options=options)(torch.randn(4))
    assert isinstance(getattr(info.value, "inner_exception", info.value), ValueError)
    assert re.search(message, str(info.value), re.M), str(info.value)
    assert autofuse.compiled_graphs() == []  # refused before any compile, not an eager fallback


@pytest.mark.parametrize("var, value, message", [
    ("AUTOFUSE_ISA", "AVX2", r"unknown isa 'AVX2' \(option 'isa' / AUTOFUSE_ISA\).*did you mean 'avx2'"),
    ("AUTOFUSE_TARGET", "tpu", r"unknown target 'tpu' \(option 'target' / AUTOFUSE_TARGET\)"),
    ("AUTOFUSE_FRONTEND", "xla", r"unknown frontend 'xla'"),
    ("AUTOFUSE_TUNE", "maybe", r"bad value 'maybe' for the environment variable AUTOFUSE_TUNE; valid values: 1, true, "
                               r"yes, on \(on\), 0, false, no, off \(off\)"),
    ("AUTOFUSE_PACK_WEIGHTS", "flase", r"bad value 'flase' for the environment variable AUTOFUSE_PACK_WEIGHTS"),
])
def test_bad_environment_variable_is_refused_naming_it(monkeypatch, var, value, message):
    monkeypatch.setenv(var, value)
    with pytest.raises(Exception, match=message):
        torch.compile(f, backend="autofuse")(torch.randn(4))
    with pytest.raises(ValueError, match=message):
        autofuse.get_backend()  # its CompilerConfig() reads the variable
    assert autofuse.compiled_graphs() == []


@pytest.mark.parametrize("value, expected", [("1", True), ("Yes", True), (" ON ", True), ("true", True),
                                             ("0", False), ("FALSE", False), ("off", False), ("", True)])
def test_boolean_environment_words(monkeypatch, value, expected):
    monkeypatch.setenv("AUTOFUSE_PACK_WEIGHTS", value)
    assert autofuse.CompilerConfig().pack_weights is expected


def test_valid_settings_are_accepted():
    for isa in [""] + autofuse.host_isas():
        autofuse.get_backend(autofuse.CompilerConfig(isa=isa))
    for target in ["", "cpu", "ascendc"]:
        autofuse.get_backend(autofuse.CompilerConfig(target=target))
    autofuse.get_backend(autofuse.CompilerConfig(tune=True, pack_weights=False, enable_autofuse=None,
                                                 max_fusion_size=8, enable_passes=["reduce"],
                                                 disable_passes="concat", sanitize="undefined"))


def test_an_isa_the_host_does_not_run_is_refused(monkeypatch):
    from autofuse import config

    monkeypatch.setattr(config, "_host_isas", lambda: ["avx2", "scalar"])  # an AVX2 machine
    with pytest.raises(ValueError, match=r"isa 'avx512' does not run on this host \(option 'isa' / AUTOFUSE_ISA\); "
                                         r"valid values here: '' \(the host's best\), 'avx2', 'scalar'$"):
        autofuse.get_backend(autofuse.CompilerConfig(isa="avx512"))
    with pytest.raises(ValueError, match=r"did you mean 'avx512', which this host does not run\?"):
        autofuse.get_backend(autofuse.CompilerConfig(isa="AVX512"))


def test_a_path_object_is_a_path(tmp_path):
    config = autofuse.CompilerConfig(dump_dir=tmp_path / "dump", cache_dir=tmp_path / "cache")
    assert (config.dump_dir, config.cache_dir) == (str(tmp_path / "dump"), str(tmp_path / "cache"))
    autofuse.get_backend(config)


def test_the_value_tables_match_the_core():
    """config.ISAS copies the core's ISA names (src/target/target.cpp): each is one the core accepts
    (an ISA this host lacks: the core says so); the targets and their options' values come from the
    core's registry (_C.targets(), src/backends/registry.cpp), and the core refuses other cases."""
    from autofuse import _C
    from autofuse.config import ISAS, SETTINGS

    assert set(autofuse.host_isas()) <= set(ISAS)
    for isa in ISAS:
        if isa in autofuse.host_isas():
            _C.compile_ascir("", isa=isa)
        else:
            with pytest.raises(_C.CompileError, match="does not run on this host"):
                _C.compile_ascir("", isa=isa)
    targets = {name: options for name, _summary, options in _C.targets()}
    assert list(targets)[0] == "cpu" and "ascendc" in targets
    assert set(SETTINGS["target"].choices()) == {""} | set(targets)
    for target in targets:
        _C.compile_ascir("", target=target)
    assert SETTINGS["cann_version"].choices()[1:] == tuple(targets["ascendc"]["cann"])
    for cann in targets["ascendc"]["cann"]:
        _C.compile_ascir("", target="ascendc", cann=cann)
    assert SETTINGS["ascend_soc"].choices()[1:] == tuple(targets["ascendc"]["soc"])
    for soc in targets["ascendc"]["soc"]:
        _C.compile_ascir("", target="ascendc", soc=soc)
    for bad in [{"isa": "AVX2"}, {"target": "AscendC"}, {"target": "ascendc", "cann": "8.1"},
                {"target": "ascendc", "soc": "ascend910b1"}]:
        with pytest.raises(_C.CompileError, match="unknown"):
            _C.compile_ascir("", **bad)
