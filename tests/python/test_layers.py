"""The core's layers (cmake/layers.cmake) as the build enforces them: cmake/check_layers.cmake,
which the build runs before compiling the core, passes on the source tree and fails, naming the
file and both layers, on an include from a layer to one it does not use; and a target lives in its
own folder plus one registration line (docs/design.md "Adding a target")."""

import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CMAKE = shutil.which("cmake") or os.path.join(ROOT, ".venv", "bin", "cmake")


def _check(src):
    return subprocess.run([CMAKE, f"-DSRC={src}", "-P", os.path.join(ROOT, "cmake", "check_layers.cmake")],
                          capture_output=True, text=True)


def test_the_source_tree_keeps_its_layers():
    r = _check(os.path.join(ROOT, "src"))
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("file, include, layers", [
    ("fusion/fuse.h", "codegen/emitter.h", "(layer fusion) includes codegen/emitter.h (layer codegen)"),
    ("runtime/launch.cpp", "schedule/schedule.h", "(layer runtime) includes schedule/schedule.h (layer schedule)"),
    ("codegen/ascendc/kernel.cpp", "codegen/cpu/emitter.h",
     "(layer codegen_ascendc) includes codegen/cpu/emitter.h (layer codegen_cpu)"),
    ("target/target.h", "graph/graph.h", "(layer target) includes graph/graph.h (layer graph)"),
])
def test_an_include_to_a_layer_not_used_fails(tmp_path, file, include, layers):
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "src"), src)
    with open(src / file, "a") as f:
        f.write(f'#include "{include}"\n')
    r = _check(str(src))
    assert r.returncode != 0
    assert f"{file} {layers}" in r.stderr, r.stderr


def test_a_target_is_named_in_one_registration_file():
    """Outside its own folder, no code includes a target's headers or names its backend but
    src/backends/registry.cpp (the headers its kernels include live in src/runtime/include)."""
    backends = [d for d in os.listdir(os.path.join(ROOT, "src", "codegen"))
                if os.path.isfile(os.path.join(ROOT, "src", "codegen", d, "backend.h"))]
    assert sorted(backends) == ["ascendc", "cpu", "cuda"]
    for target in backends:
        pattern = re.compile(rf'#include "codegen/{target}/|\b{target}_backend\(')
        users = []
        for folder in ("src", "python/bindings", "tools/autofuse-opt"):
            for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
                for name in files:
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, ROOT)
                    if rel.startswith(f"src/codegen/{target}/") or not name.endswith((".h", ".cpp")):
                        continue
                    if pattern.search(open(path).read()):
                        users.append(rel)
        assert users == ["src/backends/registry.cpp"], (target, users)
