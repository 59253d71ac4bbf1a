"""What the Inductor frontend did, as text: `explain` and AUTOFUSE_DUMP for frontend="inductor".

Per Inductor graph: each fusion group Inductor formed, in codegen order, with the scheduler
nodes and ATen ops it holds, whether it became an AscIR kernel (and for which target) or stayed
with Inductor's C++ backend (and why), and the bytes its kernel moves; then the share of groups
that became AscIR kernels and the reasons for the rest. `dump` writes the listing and each
kernel's AscIR and generated source.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, List

from .. import dumps
from ..explain import human_bytes
from .frontend import InductorGraphRecord
from .scheduling import GroupRecord


def _short(op: str) -> str:
    return op.replace("aten.", "").replace(".default", "")


def group_line(g: GroupRecord) -> str:
    """One group: `af_1c2d.. [op3, op4] ascendc, 24.0 KiB: add, mul` or `op7 Inductor C++:
    <reason>: embedding, add`."""
    ops = ", ".join(_short(o) for o in g.origins)
    where = f"[{', '.join(g.nodes)}]" + (f" (its group split: {g.split})" if g.split else "")
    if g.kernel:
        return f"  {g.name} {where} {g.kind} AscIR kernel ({g.target}), moves {human_bytes(g.bytes_moved)}: {ops}"
    return f"  {where} {g.kind} stays with Inductor's C++: {g.reason}: {ops}"


@dataclasses.dataclass
class InductorReport:
    """explain()'s report for the Inductor frontend: the graphs and their fusion groups."""

    graphs: List[InductorGraphRecord]
    output: Any = None

    @property
    def groups(self) -> List[GroupRecord]:
        return [g for r in self.graphs for g in r.groups]

    @property
    def num_kernels(self) -> int:
        return sum(g.kernel for g in self.groups)

    def reasons(self) -> "collections.Counter[str]":
        """Why groups stayed with Inductor, with counts."""
        return collections.Counter(g.reason for g in self.groups if not g.kernel)

    def __str__(self) -> str:
        n = len(self.groups)
        lines = [f"autofuse explain (Inductor frontend): {len(self.graphs)} graph(s), {n} fusion group(s), "
                 f"{self.num_kernels} AscIR kernel(s) ({100.0 * self.num_kernels / max(n, 1):.0f}%)"]
        for r in self.graphs:
            lines.append(f"graph {r.name}: {len(r.kernels)} of {len(r.groups)} groups AscIR kernels"
                         + (f"; kernels dropped: {r.fallback}" if r.fallback else ""))
            lines.extend(group_line(g) for g in r.groups)
        if self.reasons():
            lines.append("left to Inductor:")
            lines.extend(f"  {k} x {why}" for why, k in self.reasons().most_common())
        return "\n".join(lines)


def dump(rec: InductorGraphRecord, directory: str) -> None:
    """Writes `<graph>.groups.txt` (the listing) and, per AscIR kernel, `<kernel>.ascir` and
    `<kernel>.cpp` (its generated source) to `directory` ("": nothing)."""
    dumps.write(directory, f"{rec.name}.groups.txt", str(InductorReport([rec])) + "\n")
    for g in rec.kernels:
        dumps.write(directory, f"{g.name}.ascir", g.ascir)
        dumps.write(directory, f"{g.name}.cpp", g.source)
