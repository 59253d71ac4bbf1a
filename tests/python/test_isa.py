"""Every kernel path on one machine: CompilerConfig(isa=...) / AUTOFUSE_ISA builds the kernels
for avx512, avx2 or scalar (any the host runs, autofuse.host_isas()), and the paths agree with
eager and with each other."""

import pytest
import torch

import autofuse
from helpers import compile_fn, only_record

ISAS = ["avx512", "avx2", "scalar"]


def _program(x, y):
    # Transcendentals, a reduction, bf16 stores: the paths' vector math, tails and conversions.
    h = torch.nn.functional.gelu(x) * torch.sigmoid(y) + torch.exp(-x.abs())
    return torch.softmax(h, dim=-1), torch.tanh(h).to(torch.bfloat16), h.sum(dim=0)


def _compiled(isa, dump_dir=""):
    """(outputs, eager's outputs, record) of _program compiled for isa."""
    torch._dynamo.reset()
    autofuse.reset_records()
    torch.manual_seed(0)
    x, y = torch.randn(37, 203), torch.randn(37, 203)  # odd sizes: vector tails everywhere
    got = compile_fn(_program, autofuse.CompilerConfig(isa=isa, dump_dir=dump_dir, fallback_on_error=False))(x, y)
    return got, _program(x, y), only_record()


def test_the_host_runs_scalar_and_its_best():
    isas = autofuse.host_isas()
    assert isas[-1] == "scalar" and isas == [i for i in ISAS if i in isas]


@pytest.mark.parametrize("isa", ISAS)
def test_each_isa_matches_eager(isa, tmp_path):
    if isa not in autofuse.host_isas():
        with pytest.raises(Exception, match=f"isa '{isa}' does not run on this host"):
            _compiled(isa)
        return
    got, expected, rec = _compiled(isa, str(tmp_path))
    assert rec.num_kernels > 0
    assert f"CPU kernels for isa {isa}." in (tmp_path / f"{rec.name}.cpp").read_text()
    torch.testing.assert_close(got, expected)


def test_paths_agree_with_each_other():
    results = {isa: _compiled(isa)[0] for isa in autofuse.host_isas()}
    for isa, got in results.items():
        torch.testing.assert_close(got, results["scalar"], msg=lambda m, isa=isa: f"{isa} vs scalar: {m}")


def test_unknown_isa_is_named():
    with pytest.raises(Exception, match="unknown isa 'sse4'"):
        _compiled("sse4")


def test_the_core_probes_the_cpu_as_torch_does():
    """One probe of the host CPU (src/target/host_cpu.h, _C.host_cpu): every feature torch also
    reports has torch's value, and the frontend's tables read it (cpu.capabilities)."""
    import torch

    from autofuse import _C, cpu

    probed = _C.host_cpu()
    theirs = torch.cpu.get_capabilities()
    common = [k for k in probed if k in theirs]
    assert {"avx2", "avx512_f", "avx512_bf16", "amx_bf16"} <= set(common)
    assert {k: probed[k] for k in common} == {k: bool(theirs[k]) for k in common}
    assert probed["vendor"] in ("GenuineIntel", "AuthenticAMD", "")
    assert cpu.capabilities()["avx512_f"] == probed["avx512_f"]
