"""Fakes that make this CPU machine look like it has CUDA or MPS devices."""

from __future__ import annotations

import pytest
import torch

import compperf.devices


class Calls(list):
    """An ordered log of fake device calls and clock reads."""


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch, calls: Calls) -> Calls:
    """Two fake CUDA devices whose synchronize() only records that it was called."""
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "Fake GPU")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: calls.append(f"sync {d}"))
    return calls


@pytest.fixture
def fake_mps(monkeypatch: pytest.MonkeyPatch, calls: Calls) -> Calls:
    """An Apple MPS device (and no CUDA) whose synchronize() only records the call."""
    monkeypatch.setattr(compperf.devices, "_mps_available", lambda: True)
    monkeypatch.setattr(torch.mps, "synchronize", lambda: calls.append("sync mps"))
    return calls


@pytest.fixture
def logged_clock(monkeypatch: pytest.MonkeyPatch, calls: Calls) -> Calls:
    """Replace the timing clock with one that logs each read and advances 1 s."""
    ticks = iter(range(1_000_000))

    def clock() -> float:
        calls.append("clock")
        return float(next(ticks))

    monkeypatch.setattr(compperf.timing, "_clock", clock)
    return calls
