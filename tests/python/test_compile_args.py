"""torch.compile's `mode=` and `options=` reach autofuse (CompilerConfig.from_compile_args):
the modes users pass by habit are accepted with their documented meaning, options are
CompilerConfig fields, and anything else is a clear error, never an eager fallback."""
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
