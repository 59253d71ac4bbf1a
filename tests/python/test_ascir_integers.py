"""Integer values in CPU kernels (runtime/include/autofuse_cpu_i64.h): AscIR kernels with i64
and i32 loads, arithmetic, comparisons, selects, casts and stores, and gathers, compiled with
_C.compile_ascir and compared with torch on edge values (wrap-around, INT64_MIN, truncation
of negative floats, out-of-range indices)."""

import pytest
import torch

import autofuse
from autofuse import _C

ISAS = ["avx512", "avx2", "scalar"]
I64 = torch.iinfo(torch.int64)
I32 = torch.iinfo(torch.int32)


def _kernel(lines, inputs, outputs):
    """An ascgraph over one axis z0 : s0: `inputs` [(name, dtype)], `lines` of compute nodes
    ("%x = add(%a, %b) : i64"), `outputs` [(node, dtype)] stored in that order."""
    t = "[z0] repeats [s0] strides [1]"
    text = ["ascgraph @ints {", "  axis z0 : s0"]
    for k, (name, dtype) in enumerate(inputs):
        text.append(f"  %{name}.data = data() {{index = {k}}} sched [z0] : {dtype} {t}")
        text.append(f"  %{name} = load(%{name}.data) sched [z0] : {dtype} {t}")
    for line in lines:
        head, dtype = line.rsplit(" : ", 1)
        op = head.split(" = ", 1)[1]
        shape = "[] repeats [] strides []" if op.startswith("scalar") else t
        text.append(f"  {head} sched [z0] : {dtype} {shape}")
    for k, (node, dtype) in enumerate(outputs):
        text.append(f"  %s{k} = store(%{node}) sched [z0] : {dtype} {t}")
        text.append(f"  %o{k} = output(%s{k}) {{index = {k}}} sched [z0] : {dtype} {t}")
    return "\n".join(text + ["}"]) + "\n"


def _compile(text, name, isa):
    if isa not in autofuse.host_isas():
        pytest.skip(f"this host does not run {isa}")
    return _C.compile_ascir(text, name=name, isa=isa)


def _run(text, isa, ins, out_dtypes):
    program = _compile(text, "ints", isa)
    n = ins[0].numel()
    outs = [torch.empty(n, dtype=d) for d in out_dtypes]
    program.launch(0, [t.data_ptr() for t in ins + outs], [n], 2)
    return outs


@pytest.mark.parametrize("isa", ISAS)
def test_integer_arithmetic_comparisons_and_casts_match_torch(isa):
    n = 37  # two full vectors and a tail for every ISA
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-1000, 1000, (n,), generator=g)
    b = torch.randint(-1000, 1000, (n,), generator=g)
    a[:4] = torch.tensor([I64.max, I64.min, -7, 0])
    b[:4] = torch.tensor([1, -1, 3, I64.min])
    f = torch.randn(n, generator=g) * 100
    f[:3] = torch.tensor([-2.7, 2.7, -0.5])
    c = torch.randint(-5, 5, (n,), generator=g, dtype=torch.int32)
    d = torch.randint(-5, 5, (n,), generator=g, dtype=torch.int32)
    c[:2] = torch.tensor([I32.max, I32.min], dtype=torch.int32)
    d[:2] = torch.tensor([1, -1], dtype=torch.int32)
    lines = ["%add = add(%a, %b) : i64", "%sub = sub(%a, %b) : i64", "%mul = mul(%a, %b) : i64",
             "%neg = neg(%a) : i64", "%abs = abs(%b) : i64", "%max = maximum(%a, %b) : i64",
             "%min = minimum(%a, %b) : i64", "%lt = lt(%a, %b) : bool", "%eq = eq(%a, %b) : bool",
             "%sel = where(%lt, %a, %b) : i64", "%trunc = cast(%f) : i64", "%tof = cast(%b) : f32",
             "%k = scalar() {value = -9223372036854775808} : i64", "%ge = ge(%a, %k) : bool",
             "%add32 = add(%c, %d) : i32", "%mul32 = mul(%c, %d) : i32", "%narrow = cast(%a) : i32",
             "%cb = cast(%lt) : i64", "%bf = cast(%b) : bf16"]
    outs = [("add", "i64"), ("sub", "i64"), ("mul", "i64"), ("neg", "i64"), ("abs", "i64"), ("max", "i64"),
            ("min", "i64"), ("lt", "bool"), ("eq", "bool"), ("sel", "i64"), ("trunc", "i64"), ("tof", "f32"),
            ("ge", "bool"), ("add32", "i32"), ("mul32", "i32"), ("narrow", "i32"), ("cb", "i64"), ("bf", "bf16")]
    dt = {"i64": torch.int64, "i32": torch.int32, "bool": torch.bool, "f32": torch.float32, "bf16": torch.bfloat16}
    text = _kernel(lines, [("a", "i64"), ("b", "i64"), ("f", "f32"), ("c", "i32"), ("d", "i32")], outs)
    got = _run(text, isa, [a, b, f, c, d], [dt[t] for _, t in outs])
    want = [a + b, a - b, a * b, -a, b.abs(), torch.maximum(a, b), torch.minimum(a, b), a < b, a == b,
            torch.where(a < b, a, b), f.to(torch.int64), b.to(torch.float32), a >= I64.min, c + d, c * d,
            a.to(torch.int32), (a < b).to(torch.int64), b.to(torch.bfloat16)]
    for (name, _), x, y in zip(outs, got, want):
        assert torch.equal(x, y), (name, x, y)


@pytest.mark.parametrize("isa", ISAS)
def test_a_gather_reads_rows_by_computed_index_and_reports_a_bad_one(isa):
    text = """ascgraph @take {
  axis z0 : s0
  axis z1 : 24
  %ids.data = data() {index = 0} sched [z0, z1] : i32 [z0, z1] repeats [s0, 1] strides [1, 0]
  %ids = load(%ids.data) sched [z0, z1] : i32 [z0, z1] repeats [s0, 1] strides [1, 0]
  %one = scalar() {value = 1} sched [z0, z1] : i32 [] repeats [] strides []
  %next = add(%ids, %one) sched [z0, z1] : i32 [z0, z1] repeats [s0, 1] strides [1, 0]
  %w.data = data() {index = 1} sched [z0, z1] : bf16 [z0, z1] repeats [1, 24] strides [0, 1]
  %row = load(%w.data, %next) {index_stride = 24, index_bound = 9} sched [z0, z1] : bf16 [z0, z1] repeats [s0, 24] strides [24, 1]
  %s = store(%row) sched [z0, z1] : bf16 [z0, z1] repeats [s0, 24] strides [24, 1]
  %o = output(%s) {index = 0} sched [z0, z1] : bf16 [z0, z1] repeats [s0, 24] strides [24, 1]
}
"""
    program = _compile(text, "take", isa)
    w = torch.randn(9, 24).to(torch.bfloat16)
    ids = torch.tensor([0, 7, 3, 3, 5], dtype=torch.int32)
    out = torch.empty(5, 24, dtype=torch.bfloat16)
    program.launch(0, [ids.data_ptr(), w.data_ptr(), out.data_ptr()], [5], 2)
    assert torch.equal(out, w[ids.long() + 1])
    bad = torch.tensor([2, 8], dtype=torch.int32)  # 8 + 1 is outside the 9 rows
    with pytest.raises(IndexError, match="gathered index 9"):
        program.launch(0, [bad.data_ptr(), w.data_ptr(), out.data_ptr()], [2], 2)
    program.launch(0, [ids.data_ptr(), w.data_ptr(), out.data_ptr()], [5], 2)  # the fault was taken
    assert torch.equal(out, w[ids.long() + 1])
