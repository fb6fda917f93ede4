"""The Jupyter kernel that myst-nb runs the executable pages in starts and runs a cell.

At the lowest ipykernel that pyproject.toml allows too (``nox -s tests_lowest``): an
ipykernel too old for the installed IPython dies before it answers.
"""

from __future__ import annotations

import subprocess
import sys

PROBE = """
from jupyter_client.manager import start_new_kernel
manager, client = start_new_kernel(kernel_name="python3", startup_timeout=120)
try:
    reply = client.execute_interactive("print(6 * 7)", timeout=120)
    print("status:", reply["content"]["status"])
finally:
    client.stop_channels()
    manager.shutdown_kernel()
"""


def test_kernel_starts_and_runs_a_cell() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "42" in result.stdout
    assert "status: ok" in result.stdout
