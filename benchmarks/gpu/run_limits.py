"""Run the chapter "The machine's limits" on a GPU and keep what it prints and draws.

Usage, from the repository root on a machine with a CUDA (or Apple MPS) device::

    python benchmarks/gpu/run_limits.py              # writes benchmarks/gpu/limits_output/
    python benchmarks/gpu/run_limits.py --out DIR    # somewhere else
    python benchmarks/gpu/run_limits.py --allow-cpu  # dry run on a machine without a GPU

For each ``examples/limits/plot_*.py`` this writes, under ``--out``:
``<example>/output.txt`` (stdout and stderr), ``<example>/figure_<n>.png`` and any file
the example saves itself, plus ``summary.json`` with the
environment, each example's exit status, wall time and number of warning lines
(the docs build fails on warnings, so there should be none). It refuses to run without
an accelerator unless ``--allow-cpu`` is given, so that CPU numbers are never
mistaken for GPU ones.
"""

from __future__ import annotations

import sys

from chapter_run import main

if __name__ == "__main__":
    sys.exit(main("limits", __doc__.splitlines()[0]))
