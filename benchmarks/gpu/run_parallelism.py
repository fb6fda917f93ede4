"""Run the chapter "Parallelism on one machine" on a GPU and keep what it prints and draws.

Usage, from the repository root on a machine with a CUDA (or Apple MPS) device::

    python benchmarks/gpu/run_parallelism.py              # writes benchmarks/gpu/parallelism_output/
    python benchmarks/gpu/run_parallelism.py --out DIR    # somewhere else
    python benchmarks/gpu/run_parallelism.py --allow-cpu  # dry run on a machine without a GPU

For each ``examples/parallelism/plot_*.py`` this writes, under ``--out``:
``<example>/output.txt`` (stdout and stderr) and ``<example>/figure_<n>.png``, plus
``summary.json`` with the
environment, each example's exit status, wall time and number of warning lines
(the docs build fails on warnings, so there should be none). It refuses to run without
an accelerator unless ``--allow-cpu`` is given, so that CPU numbers are never
mistaken for GPU ones. The streams page measures its copies only on CUDA (on MPS it
says what a GPU shows). Every example runs with a timeout, so a stuck DataLoader worker
or thread ends the run with an error instead of hanging it.
"""

from __future__ import annotations

import sys

from chapter_run import main

if __name__ == "__main__":
    sys.exit(main("parallelism", __doc__.splitlines()[0]))
