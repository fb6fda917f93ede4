from __future__ import annotations

import time

import pytest
import torch

import compperf

SLEEP = 0.05  # seconds; long enough that scheduler jitter is small beside it


def test_timer_records_sleeps():
    timer = compperf.Timer()
    for _ in range(3):
        timer.start()
        time.sleep(SLEEP)
        assert timer.stop() >= SLEEP
    assert len(timer.times) == 3
    assert timer.sum() == pytest.approx(sum(timer.times))
    assert timer.avg() == pytest.approx(timer.sum() / 3)
    assert SLEEP <= timer.avg() < SLEEP + 0.05
    cumsum = timer.cumsum()
    assert cumsum == pytest.approx([timer.times[0], sum(timer.times[:2]), timer.sum()])


def test_timer_avg_without_intervals_is_an_error():
    with pytest.raises(ValueError, match="at least one interval"):
        compperf.Timer().avg()


def test_benchmark_times_a_sleep_and_prints_like_the_book(capsys):
    with compperf.Benchmark("nap", device="cpu") as bench:
        time.sleep(SLEEP)
    assert SLEEP <= bench.elapsed < SLEEP + 0.05
    assert capsys.readouterr().out == f"nap: {bench.elapsed:.4f} sec\n"


def test_benchmark_default_description(capsys):
    with compperf.Benchmark(device="cpu"):
        pass
    assert capsys.readouterr().out.startswith("Done: ")


def test_benchmark_synchronizes_before_each_clock_read(fake_cuda, logged_clock, capsys):
    with compperf.Benchmark("work", device="cuda:1") as bench:
        logged_clock.append("body")
    assert logged_clock == ["sync cuda:1", "clock", "body", "sync cuda:1", "clock"]
    assert bench.elapsed == 1.0
    assert capsys.readouterr().out == "work: 1.0000 sec\n"


def test_benchmark_default_device_is_the_best_one(fake_mps, logged_clock, capsys):
    with compperf.Benchmark():
        pass
    assert logged_clock == ["sync mps", "clock", "sync mps", "clock"]


def test_benchmark_checks_the_device_before_the_clock_starts(
    fake_cuda, logged_clock, monkeypatch, capsys
):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: logged_clock.append("query") or 2)
    with compperf.Benchmark("work", device="cuda:1"):
        logged_clock.append("body")
    first_read = logged_clock.index("clock")
    assert "query" in logged_clock[:first_read]
    assert logged_clock[first_read - 1 :] == [
        "sync cuda:1", "clock", "body", "sync cuda:1", "clock"
    ]  # fmt: skip


def test_naive_benchmark_never_synchronizes(fake_cuda, logged_clock, capsys):
    with compperf.Benchmark("naive", device="cuda:0", sync=False):
        logged_clock.append("body")
    assert logged_clock == ["clock", "body", "clock"]


def test_cpu_benchmark_never_synchronizes(fake_cuda, logged_clock, capsys):
    with compperf.Benchmark(device="cpu"):
        pass
    assert logged_clock == ["clock", "clock"]


def test_benchmark_checks_the_device_on_entry():
    bench = compperf.Benchmark(device="cuda:7")
    with pytest.raises(ValueError, match="'cuda:7' is not available here"), bench:
        pass


def test_benchmark_does_not_report_a_failed_block(capsys):
    with pytest.raises(RuntimeError), compperf.Benchmark(device="cpu") as bench:
        raise RuntimeError("boom")
    assert bench.elapsed is None
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(2.5, "2.5 s"), (0.00456, "4.56 ms"), (12.3e-6, "12.3 µs"), (850e-9, "850 ns")],
)
def test_format_time_picks_a_readable_unit(seconds, text):
    assert compperf.format_time(seconds) == text
