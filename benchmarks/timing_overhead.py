"""What compperf's timers bill for nothing, and whether measure() agrees with torch.utils.benchmark.

Run: ``python benchmarks/timing_overhead.py``. First what each timer reports for an empty
block on the CPU, next to a bare pair of ``time.perf_counter()`` reads (the floor); then
the cost of a whole ``measure()`` call; then a matmul timed by both.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

import torch
import torch.utils.benchmark as torch_benchmark

import compperf

DEVICE = "cpu"
MATMUL_SIZE = 512
# Empty blocks timed per tool; the medians settle well before this.
REPEATS = 20_000
# measure() reports per call of its function; it is called on a no-op this many times.
MEASURE_REPEATS = 20
# The target for what a timer may bill for nothing on the CPU (issue 14).
TARGET = 1e-6


def _noop() -> None:
    pass


def _bare_pair() -> list[float]:
    clock = time.perf_counter
    times = []
    for _ in range(REPEATS):
        start = clock()
        times.append(clock() - start)
    return times


def _benchmark_blocks() -> list[float]:
    times = []
    with contextlib.redirect_stdout(io.StringIO()):  # Benchmark prints each time
        for _ in range(REPEATS):
            with compperf.Benchmark(device=DEVICE) as block:
                pass
            times.append(block.elapsed)
    return times


def _timer_intervals() -> list[float]:
    timer = compperf.Timer()
    for _ in range(REPEATS):
        timer.start()
        timer.stop()
    return timer.times


def _measure_noop() -> list[float]:
    return [
        compperf.measure(_noop, device=DEVICE, min_run_time=0.05).median
        for _ in range(MEASURE_REPEATS)
    ]


def _empty_block_table() -> str:
    rows = [
        ("bare perf_counter() pair", _bare_pair()),
        ("Benchmark (empty with-block)", _benchmark_blocks()),
        ("Timer (start(); stop())", _timer_intervals()),
        ("measure() of a no-op, per call", _measure_noop()),
    ]
    title = (
        f"What an empty block reports on the CPU (median of {REPEATS} blocks; "
        f"measure(): median of {MEASURE_REPEATS} calls' medians)"
    )
    lines = [
        title,
        f"{'':32}{'median':>10}{'p90':>10}  within {compperf.format_time(TARGET)}",
    ]
    for label, times in rows:
        median = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        verdict = "yes" if median <= TARGET else "NO"
        lines.append(
            f"{label:32}{compperf.format_time(median):>10}{compperf.format_time(p90):>10}"
            f"  {verdict}"
        )
    return "\n".join(lines)


def main() -> None:
    print(compperf.environment(DEVICE))
    print()
    print(_empty_block_table())
    started = time.perf_counter()
    compperf.measure(_noop, device=DEVICE)
    whole_call = time.perf_counter() - started
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
