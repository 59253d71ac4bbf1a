"""The wheel is complete: `pip wheel .` builds it, and installed into a fresh venv it compiles
and runs kernels from a directory outside the repository, with an empty cache, reading the
runtime headers it carries (not the source tree's). `make test-wheel` (.ci/run) runs this.

The fresh venv borrows torch from the development venv through a .pth line (installing torch
again would take minutes); .pth files of that directory are not processed, so the editable
install of autofuse there is invisible and `import autofuse` finds the wheel.
"""
import os
import pathlib
import subprocess
import sys
import sysconfig

ROOT = pathlib.Path(__file__).resolve().parents[2]

GRAPH = """graph @g() {
  %x = input() {index = 0} : f32[8]
  %y = exp(%x) : f32[8]
  return %y
}
"""

PROGRAM = r"""
import os, sys, torch, autofuse
from autofuse import _C
pkg = os.path.dirname(autofuse.__file__)
assert pkg.startswith(sys.prefix), f"autofuse imported from {pkg}, not the fresh venv {sys.prefix}"
headers = _C.runtime_include_dir()
assert headers.startswith(os.path.realpath(sys.prefix)), f"runtime headers from {headers}"

def f(x, w):
    return torch.sigmoid(x @ w) * x.abs().sum(-1, keepdim=True) + 1  # no cancellation

torch.manual_seed(0)
x, w = torch.randn(32, 48), torch.randn(48, 48)
with autofuse.collect_records() as recs:
    got = torch.compile(f, backend="autofuse")(x, w)
torch.testing.assert_close(got, f(x, w))
fallbacks = [r.fallback for r in recs if r.fallback]
assert not fallbacks, fallbacks
assert sum(r.num_kernels for r in recs) > 0 and autofuse.stats()["cxx_compiles"] > 0, autofuse.stats()
print("wheel ok", pkg, headers)
"""


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd} failed ({r.returncode}):\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r


def test_wheel_installs_and_compiles_outside_the_repo(tmp_path):
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(wheels), str(ROOT)],
        env=dict(os.environ, PATH=f"{pathlib.Path(sys.executable).parent}:{os.environ['PATH']}"))
    wheel = next(wheels.glob("autofuse-*.whl"))
    names = subprocess.run([sys.executable, "-m", "zipfile", "-l", str(wheel)], capture_output=True, text=True).stdout
    for member in ("autofuse/include/autofuse_cpu.h", "autofuse/bin/autofuse-opt", "autofuse/_C"):
        assert member in names, f"{member} missing from {wheel.name}"

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    vpy = venv / "bin" / "python"
    site = run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    (pathlib.Path(site) / "dev_torch.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
         "--target", site, str(wheel)])

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOFUSE_") and k != "PYTHONPATH"}
    env["AUTOFUSE_CACHE_DIR"] = str(tmp_path / "empty-cache")
    r = run([str(vpy), "-c", PROGRAM], cwd=outside, env=env)
    assert "wheel ok" in r.stdout
    # The console script (pip puts it in <target>/bin here, in the venv's bin normally) runs the
    # driver installed beside the extension.
    r = subprocess.run([str(vpy), str(pathlib.Path(site) / "bin" / "autofuse-opt"), "--passes=codegen"],
                       input=GRAPH, capture_output=True, text=True, cwd=outside, env=env)
    assert r.returncode == 0 and "_kernel" in r.stdout, r.stderr
