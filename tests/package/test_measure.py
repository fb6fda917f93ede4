from __future__ import annotations

import dataclasses
import importlib
import itertools
import statistics
import time

import pytest
import torch
import torch.utils.benchmark as torch_benchmark

import compperf

measure_module = importlib.import_module(
    "compperf.measure"
)  # the module, not the function it exports


def test_measure_a_sleep():
    result = compperf.measure(time.sleep, 0.01, device="cpu", description="sleep 10 ms")
    assert 0.01 <= result.median < 0.02
    assert result.description == "sleep 10 ms"
    assert result.device == "cpu"
    assert result.runs == len(result.times) >= 4
    assert result.median == pytest.approx(statistics.median(result.times))
    assert result.warmup == 1
    assert result.num_threads == torch.get_num_threads()


def test_measure_agrees_with_torch_utils_benchmark_on_a_cpu_matmul():
    x = torch.randn(128, 128)
    timer = torch_benchmark.Timer("torch.mm(x, x)", globals={"torch": torch, "x": x}, num_threads=1)
    # On a shared machine both medians wander with the load, which changes from one moment
    # to the next: the two timers take turns, up to three rounds, and the two medians of
    # one round (measured under the same load) must agree in some round. The bound leaves
    # room for the wandering, not for a factor-of-two error such as timing the wrong thing
    # or counting calls twice, which every round shows.
    rounds = []
    for _ in range(3):
        ours = compperf.measure(torch.mm, x, x, device="cpu", num_threads=1).median
        rounds.append((ours, timer.adaptive_autorange().median))
        if rounds[-1][0] == pytest.approx(rounds[-1][1], rel=0.5):
            break
    assert rounds[-1][0] == pytest.approx(rounds[-1][1], rel=0.5), rounds


def test_measure_passes_arguments_and_warms_up():
    seen = []

    def work(a, *, b):
        seen.append((a, b))

    result = compperf.measure(work, 1, b=2, device="cpu", warmup=3, min_run_time=0.01)
    assert set(seen) == {(1, 2)}
    timed_calls = result.runs * result.number_per_run
    assert len(seen) > timed_calls + 3  # warm-up and block sizing come on top of timed calls


def test_measure_synchronizes_the_device_at_each_clock_read(fake_cuda, monkeypatch):
    ticks = itertools.count()

    def clock() -> float:  # each read is one second after the last
        fake_cuda.append("clock")
        return float(next(ticks))

    monkeypatch.setattr(measure_module, "_clock", clock)
    compperf.measure(lambda: fake_cuda.append("call"), device="cuda:1", min_run_time=0.5)
    assert fake_cuda[:2] == ["call", "sync cuda:1"]  # warm-up, then wait for it to finish
    reads = [i for i, c in enumerate(fake_cuda) if c == "clock"]
    assert len(reads) >= 8  # a start and a stop read per block, at least four blocks
    assert all(fake_cuda[i - 1] == "sync cuda:1" for i in reads)


def test_measure_clock_reads_do_nothing_but_synchronize(fake_cuda, monkeypatch):
    """The device is checked once, before timing: no availability query at any clock read."""
    ticks = itertools.count()

    def clock() -> float:
        fake_cuda.append("clock")
        return float(next(ticks))

    monkeypatch.setattr(measure_module, "_clock", clock)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: fake_cuda.append("query") or 2)
    compperf.measure(lambda: None, device="cuda:1", min_run_time=0.5)
    first_read = fake_cuda.index("clock")
    assert "query" in fake_cuda[:first_read]
    assert set(fake_cuda[first_read:]) == {"sync cuda:1", "clock"}


def test_measure_on_the_cpu_reads_the_bare_clock(monkeypatch):
    reads = []

    def clock() -> float:
        reads.append(len(reads))
        return float(len(reads))

    monkeypatch.setattr(measure_module, "_clock", clock)
    assert measure_module._synchronizing_clock(torch.device("cpu")) is clock


def test_measurement_is_frozen_and_readable():
    result = compperf.measure(time.sleep, 0.001, device="cpu", description="nap")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.median = 0.0
    text = str(result)
    assert text.startswith("nap on cpu: median ")
    assert "IQR" in text
    assert f"{result.runs} runs" in text
    assert "1 warm-up call," in " ".join(text.split())  # a line over 80 columns is folded
    assert repr(result) == f"<Measurement {text}>"


def _fake(description, median, iqr=0.0):
    return compperf.Measurement(description, "cpu", median, iqr, median, 5, 10, (median,) * 5, 1, 2)


def test_noisy_measurements_say_so():
    assert "noisy" not in str(_fake("steady", 1e-3, 1e-5))
    assert "noisy: IQR is 50% of the median" in str(_fake("shaky", 1e-3, 5e-4))


def test_too_few_runs_are_noisy_whatever_the_iqr():
    result = dataclasses.replace(_fake("once", 1e-3), runs=1, times=(1e-3,))
    assert result.noisy
    assert "too few runs" in str(result)


def test_from_times_summarizes_samples_like_torch():
    samples = [1e-3, 2e-3, 3e-3, 4e-3, 5e-3]
    result = compperf.Measurement.from_times(samples, description="steps", device="cpu", warmup=1)
    stats = torch_benchmark.Measurement(1, samples, torch_benchmark.TaskSpec("steps", ""))
    assert result.median == stats.median == 3e-3
    assert result.iqr == pytest.approx(stats.iqr)
    assert result.mean == pytest.approx(3e-3)
    assert (result.runs, result.number_per_run, result.warmup) == (5, 1, 1)
    assert result.times == tuple(samples)


def test_quartiles_bound_the_median_and_span_the_iqr():
    samples = [5e-3, 1e-3, 9e-3, 2e-3, 3e-3, 4e-3]
    result = compperf.Measurement.from_times(samples, description="steps", device="cpu")
    q1, q3 = result.quartiles
    assert q1 <= result.median <= q3
    assert (q1, q3) == pytest.approx((2.25e-3, 4.75e-3))
    assert q3 - q1 == pytest.approx(result.iqr)


def test_from_times_needs_samples():
    with pytest.raises(ValueError, match="needs samples for 'steps'"):
        compperf.Measurement.from_times([], description="steps", device="cpu")


def test_compare_lays_results_side_by_side():
    table = compperf.compare([_fake("eager", 2e-3), _fake("compiled", 1e-3)], title="MLP")
    lines = table.splitlines()
    assert lines[0] == "MLP"
    # Columns with one value in every row are said once, under the title.
    assert lines[1:4] == ["device: cpu", "IQR: 0 ns", "runs x calls: 5 x 10"]
    assert lines[4].startswith("threads: ")
    assert lines[5].split() == ["median", "vs", "first"]
    assert lines[7].split()[:3] == ["eager", "2", "ms"]
    assert "0.50×" in lines[8]


def test_compare_needs_rows():
    with pytest.raises(ValueError, match="at least one Measurement"):
        compperf.compare([])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"device": "cuda:0"}, "not available here"),
        ({"min_run_time": 0}, "need 0 < min_run_time <= max_run_time"),
        ({"min_run_time": 3, "max_run_time": 1}, "got min_run_time=3, max_run_time=1"),
        ({"warmup": -1}, "warmup must be >= 0"),
        ({"num_threads": 0}, "num_threads must be >= 1"),
    ],
)
def test_measure_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        compperf.measure(lambda: None, **kwargs)
