"""Rewrites the hashes of the golden model tests (tests/lit/golden/*.ir) from the autofuse-opt
in build/py: run it only after a change that means to change what the pipeline prints (then
say so in the commit), never to make a failing golden pass unexplained.

Each golden is the Graph IR of one graph of a bench/models.py model as AUTOFUSE_DUMP wrote it
(gN.graph.ir); its CHECK lines hold the sha256 of autofuse-opt's output at the fuse, schedule
and codegen stages (avx2: the same text on every host). `--inputs DIR` first replaces the inputs
with the gN.graph.ir files under DIR/<name>/ (AUTOFUSE_DUMP=DIR/<name> per model and config).
tests/python/test_golden_frontend.py checks the other half: that the frontend still writes
these bodies for the models.

  python tests/lit/golden/update_golden.py [--inputs DIR]
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
OPT = os.path.join(HERE, "..", "..", "..", "build", "py", "autofuse-opt")
STAGES = (("FUSE", "fuse"), ("SCHED", "schedule"), ("CPP", "codegen"))
HEADER = """// Golden: {what}, the Graph IR AUTOFUSE_DUMP wrote (bench/models.py, 2 layers).
// The sha256 of autofuse-opt's output at each stage must stay the same: production's fusion,
// schedule and generated C++ for this model. A change that means to change them reruns
// tests/lit/golden/update_golden.py (make golden-update) and says so in its commit.
"""


def digest(path: str, stage: str) -> str:
    out = subprocess.run([OPT, "--isa=avx2", f"--passes={stage}", path], check=True, capture_output=True).stdout
    return hashlib.sha256(out).hexdigest()


def body_of(path: str) -> str:
    """The file without its leading comment lines (the golden header, RUN and CHECK lines)."""
    lines = open(path).read().splitlines(True)
    first = next((i for i, l in enumerate(lines) if not l.startswith("//")), len(lines))
    return "".join(lines[first:])


def write(path: str, what: str, body: str) -> None:
    with open(path, "w") as f:
        f.write(body)
    lines = [HEADER.format(what=what)]
    for prefix, stage in STAGES:
        lines.append(f"// RUN: autofuse-opt --isa=avx2 --passes={stage} %s | sha256sum | FileCheck %s --check-prefix={prefix}\n")
    for prefix, stage in STAGES:
        lines.append(f"// {prefix}: {digest(path, stage)}\n")
    with open(path, "w") as f:
        f.write("".join(lines) + body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", help="a directory of AUTOFUSE_DUMP directories, one per model and config")
    args = ap.parse_args()
    if args.inputs:
        for f in glob.glob(os.path.join(HERE, "*.ir")):
            os.remove(f)
        for src in sorted(glob.glob(os.path.join(args.inputs, "*", "*.graph.ir"))):
            case = os.path.basename(os.path.dirname(src))
            part = "backward" if "_bw" in os.path.basename(src) else "forward"
            name = f"{case}_{part}.ir"
            what = f"{case.replace('_', ' ')} ({part})"
            write(os.path.join(HERE, name), what, open(src).read())
        return
    for path in sorted(glob.glob(os.path.join(HERE, "*.ir"))):
        case, part = os.path.basename(path)[:-3].rsplit("_", 1)
        write(path, f"{case.replace('_', ' ')} ({part})", body_of(path))


if __name__ == "__main__":
    main()
