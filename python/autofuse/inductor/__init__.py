"""The Inductor frontend (the seeds' roadmap 2): Inductor's fusion groups -> AscIR -> autofuse's
Schedule, tiling, codegen and JIT. Select it with CompilerConfig(frontend="inductor"),
AUTOFUSE_FRONTEND=inductor or torch.compile(..., options={"frontend": "inductor"})."""

from .frontend import InductorGraphRecord, collect_records, compile_graph, compiled_graphs, reset_records
from .report import InductorReport

__all__ = ["InductorGraphRecord", "InductorReport", "collect_records", "compile_graph", "compiled_graphs",
           "reset_records"]
