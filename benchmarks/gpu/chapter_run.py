"""Run one chapter's examples on a GPU and keep what they print and draw (the run_<chapter>.py scripts)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import compperf

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

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
# Its key figures, for the chapter's results record (compperf.records).
from compperf import records
records.write_example_figures(sys.argv[1], f"{sys.argv[2]}/figures.json")
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


def main(chapter: str, description: str, argv: list[str] | None = None) -> int:
    """Run every example of ``chapter``; 0 when all of them succeeded."""
    parser = argparse.ArgumentParser(description=description)
    default_out = Path(__file__).resolve().parent / f"{chapter}_output"
    parser.add_argument("--out", type=Path, default=default_out, help="folder for the outputs")
    parser.add_argument("--allow-cpu", action="store_true", help="run even without a GPU")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per example")
    args = parser.parse_args(argv)

    device = compperf.try_gpu()
    if device.type == "cpu" and not args.allow_cpu:
        parser.error("no CUDA or MPS device found; pass --allow-cpu to run on the CPU anyway")
    scripts = sorted((EXAMPLES / chapter).glob("plot_*.py"))
    if not scripts:
        parser.error(f"no plot_*.py examples in {EXAMPLES / chapter}")

    args.out.mkdir(parents=True, exist_ok=True)
    env = compperf.environment(device)
    print(env)
    results = [run_example(script, args.out.resolve(), args.timeout) for script in scripts]
    summary = {
        "environment": str(env),
        "device": env.device,
        "gpus": compperf.num_gpus(),  # NCCL pages need one per rank
        "examples": results,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    # The results record the site's Results pages read: copy it to results/<machine>.json.
    made = compperf.records.read_example_figures(sorted(args.out.glob("*/figures.json")))
    seconds = {f"{chapter}/{Path(r['example']).stem}": r["seconds"] for r in results}
    for entry in made:
        entry["seconds"] = seconds.get(entry["example"])
    record = compperf.records.results_record(made, source="chapter_run")
    (args.out / "results.json").write_text(
        json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"outputs in {args.out}")
    return 0 if all(r["returncode"] == 0 for r in results) else 1
