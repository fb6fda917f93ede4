"""Run the chapter "Many devices and machines" on a GPU and keep what it prints and draws.

Usage, from the repository root on a machine with a CUDA (or Apple MPS) device::

    python benchmarks/gpu/run_distributed.py              # writes benchmarks/gpu/distributed_output/
    python benchmarks/gpu/run_distributed.py --out DIR    # somewhere else
    python benchmarks/gpu/run_distributed.py --allow-cpu  # dry run on a machine without a GPU

For each ``examples/distributed/plot_*.py`` this writes, under ``--out``:
``<example>/output.txt`` (stdout and stderr) and ``<example>/figure_<n>.png``, plus
``summary.json`` with the
environment, each example's exit status, wall time and number of warning lines
(the docs build fails on warnings, so there should be none). It refuses to run without
an accelerator unless ``--allow-cpu`` is given, so that CPU numbers are never
mistaken for GPU ones.

The pages use NCCL only with a GPU for each of their two ranks; with a single GPU they
run gloo on the CPU and say so, and ``summary.json`` records the GPU count. Every
example launches its ranks under ``torchrun`` with timeouts of its own.
"""

from __future__ import annotations

import sys

from chapter_run import main

if __name__ == "__main__":
    sys.exit(main("distributed", __doc__.splitlines()[0]))
