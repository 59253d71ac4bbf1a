"""The user guide's examples run and do what the guide says (docs/user-guide.md)."""

import contextlib
import io
import pathlib
import re

import torch

import autofuse

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"


def section_code(heading: str) -> str:
    """The first ```python block under the guide's `## heading`."""
    text = GUIDE.read_text()
    body = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", body, re.S).group(1)


def test_the_records_example_runs_as_documented():
    code = section_code("Compiled graphs from a program")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        scope = {}
        exec(compile(code, str(GUIDE), "exec"), scope)
    lines = out.getvalue().splitlines()
    recs = scope["recs"]
    assert len(recs) == 1  # the second call compiled nothing
    assert re.fullmatch(r"g\d+ inference 1 compiled \d+\.\d\d s", lines[0]), lines
    assert lines[1] == repr([r.name for r in autofuse.compiled_graphs()])
    assert recs[0].name in lines[1] and autofuse.compiled_graphs()[-1] is recs[0]  # oldest first
    torch.testing.assert_close(scope["cf"](torch.ones(2, 2)), torch.full((2, 2), 3.0))


def test_records_as_the_guide_describes_them():
    manager = autofuse.collect_records()
    assert hasattr(manager, "__enter__") and not isinstance(manager, list)  # a context manager
    w = torch.randn(16, 16, requires_grad=True)
    step = torch.compile(lambda x: (torch.relu(x @ w) * 2).sum(), backend="autofuse")
    with manager as recs:
        assert recs == []
        step(torch.randn(16, 16)).backward()
    assert [r.tag for r in recs] == ["fw", "bw"]
    assert re.fullmatch(r"g\d+", recs[0].name) and re.fullmatch(r"g\d+_bw", recs[1].name)
    assert all(r.fallback == "" and r.num_kernels >= 1 for r in recs)
    assert recs[0].runner is not None  # torch still holds the compiled graph
    seen = autofuse.compiled_graphs()
    assert isinstance(seen, list) and seen[-2:] == recs
    seen.clear()  # a new list each call: the process's records are untouched
    assert autofuse.compiled_graphs()[-2:] == recs
    autofuse.reset_records()
    assert autofuse.compiled_graphs() == []
    step(torch.randn(16, 16)).backward()  # compiled graphs keep working after a reset
