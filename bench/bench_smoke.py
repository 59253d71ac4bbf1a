"""make bench-smoke: eager vs torch.compile (Inductor) vs autofuse, side by side in one run,
with achieved bandwidth against a triad measured in the same run. Never part of `make test`."""
import sys
import os

import torch

sys.path.insert(0, os.path.dirname(__file__))
from common import median_seconds, triad_gbps  # noqa: E402


def pattern(x, scale, bias):
    return torch.sigmoid(x) * scale + bias


def _passthrough_backend(gm, example_inputs):
    """A torch.compile backend that compiles nothing: Dynamo's own per-call cost."""
    return gm.forward


def run_case(rows: int, cols: int, repeats: int):
    x = torch.randn(rows, cols)
    scale = torch.randn(cols)
    bias = torch.randn(cols)
    torch._dynamo.reset()
    fns = {
        "eager": pattern,
        "inductor": torch.compile(pattern),
        "autofuse": torch.compile(pattern, backend="autofuse"),
        "dynamo floor": torch.compile(pattern, backend=_passthrough_backend),
    }
    expected = pattern(x, scale, bias)
    times = {}
    for name, fn in fns.items():
        torch.testing.assert_close(fn(x, scale, bias), expected)
        times[name] = median_seconds(lambda: fn(x, scale, bias), repeats)
    # The autofuse executor called directly: the part of a call that is ours, without Dynamo.
    import autofuse
    runner = autofuse.compiled_graphs()[-1].runner
    times["autofuse executor"] = median_seconds(lambda: runner(x, scale, bias), repeats)
    compulsory = (2 * x.numel() + 2 * cols) * 4  # read x, write y (scale/bias are tiny)
    return times, compulsory


def main():
    threads = torch.get_num_threads()
    triad = triad_gbps()
    print(f"threads: {threads}; STREAM triad (torch.add alpha, 3x128 MiB): {triad:.1f} GB/s")
    print(f"{'case':<34}{'eager':>10}{'inductor':>10}{'autofuse':>10}"
          f"{'vs eager':>10}{'vs ind.':>9}{'GB/s':>8}{'% triad':>9}")
    for label, rows, cols, repeats in [
        ("sigmoid(x)*scale+bias 16M fp32", 4096, 4096, 30),
        ("sigmoid(x)*scale+bias 1024 fp32", 1, 1024, 2000),
    ]:
        times, nbytes = run_case(rows, cols, repeats)
        af = times["autofuse"]
        gbps = nbytes / af / 1e9
        unit, scale = ("ms", 1e3) if af > 1e-3 else ("us", 1e6)
        print(f"{label:<34}" + "".join(f"{times[k] * scale:>8.2f}{unit}" for k in
                                       ("eager", "inductor", "autofuse"))
              + f"{times['eager'] / af:>9.2f}x{times['inductor'] / af:>8.2f}x"
              f"{gbps:>8.1f}{100 * gbps / triad:>8.0f}%")
        print(f"{'':<34}dynamo floor (no-op backend) {times['dynamo floor'] * scale:.2f}{unit}, "
              f"autofuse executor alone {times['autofuse executor'] * scale:.2f}{unit} "
              f"({times['eager'] / times['autofuse executor']:.2f}x eager)")


if __name__ == "__main__":
    main()
