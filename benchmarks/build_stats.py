"""What the build-time scripts share: the device the docs ran on, and median with IQR."""

from __future__ import annotations

import statistics
import subprocess
from pathlib import Path

DOCS_ENV = Path(__file__).resolve().parents[1] / ".nox" / "docs"


def device() -> str:
    """The device the examples ran on, as the docs session's environment reports it."""
    probe = "import compperf; print(compperf.environment())"
    python = DOCS_ENV / "bin" / "python"
    result = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    return result.stdout.strip()


def summary(times: list[float]) -> tuple[float, float | None]:
    """Median and IQR in seconds; no IQR from fewer than two runs."""
    if len(times) < 2:
        return times[0], None
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return statistics.median(times), q3 - q1
