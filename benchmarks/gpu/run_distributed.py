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

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import compperf

CHAPTER = Path(__file__).resolve().parents[2] / "examples" / "distributed"
DEFAULT_OUT = Path(__file__).resolve().parent / "distributed_output"

# Runs one example in a fresh interpreter, from its own folder as sphinx-gallery does,
# then saves every figure it left open.
_RUNNER = """
import runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
runpy.run_path(sys.argv[1], run_name="__main__")
for number in plt.get_fignums():
    plt.figure(number).savefig(f"{sys.argv[2]}/figure_{number}.png", dpi=120)
"""


def run_example(script: Path, out: Path, timeout: float) -> dict[str, object]:
    """Run one example; return its exit status, wall time in seconds and warning count."""
    folder = out / script.stem
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, COMPPERF_OUTPUT_DIR=str(folder), MPLBACKEND="Agg")
    env.pop("COMPPERF_FAST", None)  # full sizes: this is the run the pages are about
    start = time.perf_counter()
    with open(folder / "output.txt", "w", encoding="utf-8") as log:
        result = subprocess.run(
            # -W always: every warning lands in output.txt once per place it comes from.
            [sys.executable, "-W", "always", "-c", _RUNNER, str(script), str(folder)],
            cwd=script.parent,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    seconds = time.perf_counter() - start
    output = (folder / "output.txt").read_text(encoding="utf-8")
    warnings = sum("Warning:" in line for line in output.splitlines())
    status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
    print(f"{script.name:<40} {seconds:7.1f} s  {status}, {warnings} warning lines")
    return {
        "example": script.name,
        "returncode": result.returncode,
        "seconds": round(seconds, 2),
        "warning_lines": warnings,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the outputs")
    parser.add_argument("--allow-cpu", action="store_true", help="run even without a GPU")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per example")
    args = parser.parse_args(argv)

    device = compperf.try_gpu()
    if device.type == "cpu" and not args.allow_cpu:
        parser.error("no CUDA or MPS device found; pass --allow-cpu to run on the CPU anyway")
    scripts = sorted(CHAPTER.glob("plot_*.py"))
    if not scripts:
        parser.error(f"no plot_*.py examples in {CHAPTER}")

    args.out.mkdir(parents=True, exist_ok=True)
    env = compperf.environment(device)
    print(env)
    results = [run_example(script, args.out.resolve(), args.timeout) for script in scripts]
    summary = {
        "environment": str(env),
        "device": env.device,
        "gpus": compperf.num_gpus(),
        "examples": results,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"outputs in {args.out}")
    return 0 if all(r["returncode"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
