"""Every stage AUTOFUSE_DUMP writes is reproduced by autofuse-opt from the dumped Graph IR with
no flag beyond the stage: `--passes=lower|fuse|schedule|codegen gN.graph.ir` prints gN's
lowered.txt, fused.txt, scheduled.txt and .cpp, and `--passes=schedule --emit=dot` its
fused.dot (the tool runs production's stages before the one asked for, on the host's ISA,
with the default flags, as the runtime does). Over the acceptance models' graphs, forward and
backward (a training step): BERT, GPT-2, Llama, T5 and ViT (`make test` runs Llama and T5;
AUTOFUSE_ALL_MODELS=1 all five)."""
import os
import subprocess

import pytest
import torch

import autofuse
from helpers import autofuse_opt
from test_dynamic_models import ALL_MODELS, _build, _forward, _inputs

STAGES = [("lower", "text", "lowered.txt"), ("fuse", "text", "fused.txt"), ("schedule", "text", "scheduled.txt"),
          ("codegen", "text", "cpp"), ("schedule", "dot", "fused.dot")]


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama", "t5", "vit"] if ALL_MODELS else ["llama", "t5"])
def test_every_dumped_stage_replays(name, tmp_path):
    model = _build(name)
    compiled = torch.compile(_forward, backend=autofuse.get_backend(autofuse.CompilerConfig(dump_dir=str(tmp_path))))
    compiled(model, _inputs(name, 2, 8, torch.float32)).float().square().mean().backward()
    graphs = sorted(tmp_path.glob("*.graph.ir"))
    assert any(g.name.endswith("_bw.graph.ir") for g in graphs), [g.name for g in graphs]
    replayed = 0
    for ir in graphs:
        stem = ir.name[: -len(".graph.ir")]
        for stage, emit, suffix in STAGES:
            dumped = tmp_path / f"{stem}.{suffix}"
            if not dumped.exists():  # a graph with no kernel has no codegen dump
                continue
            r = subprocess.run([autofuse_opt(), f"--passes={stage}", f"--emit={emit}", str(ir)], capture_output=True,
                               text=True, env={k: v for k, v in os.environ.items() if not k.startswith("AUTOFUSE_")})
            assert r.returncode == 0, f"{stem} --passes={stage}: {r.stderr}"
            assert r.stdout == dumped.read_text(), f"{stem}: autofuse-opt --passes={stage} --emit={emit} differs from {suffix}"
            replayed += 1
    assert replayed >= 2 * len(STAGES)
