"""How much compperf's timers cost, and whether measure() agrees with torch.utils.benchmark.

Run: ``python benchmarks/timing_overhead.py``. Prints one table; times are per call.
"""

from __future__ import annotations

import contextlib
import io
import time

import torch
import torch.utils.benchmark as torch_benchmark

import compperf

DEVICE = "cpu"
MATMUL_SIZE = 512


def _quiet_benchmark() -> None:
    with contextlib.redirect_stdout(io.StringIO()), compperf.Benchmark(device=DEVICE):
        pass


def _noop() -> None:
    pass


def main() -> None:
    print(compperf.environment(DEVICE))
    print()

    # Overheads: what each tool costs around an empty body.
    rows = [
        compperf.measure(_quiet_benchmark, device=DEVICE, description="Benchmark block (empty)"),
        compperf.measure(_noop, device=DEVICE, description="measure() floor (no-op fn)"),
    ]
    started = time.perf_counter()
    compperf.measure(_noop, device=DEVICE)
    whole_call = time.perf_counter() - started
    print(compperf.compare(rows, title="Per-call overhead on the CPU"))
    print(f"One measure() call of a no-op, wall clock: {compperf.format_time(whole_call)}")
    print()

    # Agreement on real work: the same matmul, the same thread count, one run each.
    x = torch.randn(MATMUL_SIZE, MATMUL_SIZE)
    threads = torch.get_num_threads()
    ours = compperf.measure(
        torch.mm, x, x, device=DEVICE, num_threads=threads, description="compperf.measure"
    )
    theirs = torch_benchmark.Timer(
        "torch.mm(x, x)", globals={"torch": torch, "x": x}, num_threads=threads
    ).adaptive_autorange()
    print(compperf.compare([ours], title=f"{MATMUL_SIZE}x{MATMUL_SIZE} matmul, {threads} threads"))
    print(
        f"torch.utils.benchmark: median {compperf.format_time(theirs.median)}, "
        f"IQR {compperf.format_time(theirs.iqr)} "
        f"({len(theirs.times)} runs of {theirs.number_per_run} calls)"
    )
    print(f"Ratio of medians (compperf / torch): {ours.median / theirs.median:.3f}")


if __name__ == "__main__":
    main()
