"""Make the example harness (this folder's harness.py) importable in these tests, and
let only the tests marked ``executes`` run examples (``harness.executing_allowed``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness


def pytest_runtest_setup(item) -> None:
    # Before the test's fixtures: a module fixture that runs an example is checked too.
    harness.executing_allowed = item.get_closest_marker("executes") is not None
