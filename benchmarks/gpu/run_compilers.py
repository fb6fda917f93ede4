"""Run the "Compilers and interpreters" chapter on a GPU and keep everything it printed and drew.

Usage, from the repository root on a machine with a CUDA (or Apple MPS) device::

    python benchmarks/gpu/run_compilers.py            # writes benchmarks/gpu/compilers_output/
    python benchmarks/gpu/run_compilers.py --out DIR  # somewhere else
    python benchmarks/gpu/run_compilers.py --allow-cpu  # dry run on a machine without a GPU

Each example runs in its own Python process, as a reader would run it. For every
``examples/compilers/plot_*.py`` the output folder receives ``<name>.txt`` (stdout
and stderr) and ``<name>_<n>.png`` (each matplotlib figure); ``summary.json``
records the environment, each script's exit status and wall time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import compperf

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "examples" / "compilers"
DEFAULT_OUT = Path(__file__).resolve().parent / "compilers_output"

# Runs one example with a non-interactive backend and saves each figure it shows.
_BOOTSTRAP = """
import runpy, sys
from pathlib import Path
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

script, out = Path(sys.argv[1]), Path(sys.argv[2])
saved = 0

def save_figures(*args, **kwargs):
    global saved
    for number in plt.get_fignums():
        saved += 1
        plt.figure(number).savefig(out / f"{script.stem}_{saved}.png", dpi=120)
    plt.close("all")

plt.show = save_figures
runpy.run_path(str(script), run_name="__main__")
save_figures()
# Its key figures, for the chapter's results record (compperf.records).
from compperf import records
records.write_example_figures(script, out / f"{script.stem}.figures.json")
"""


def run_example(script: Path, out: Path) -> dict[str, object]:
    """Run one example in a fresh process; return its exit status and wall time."""
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", _BOOTSTRAP, str(script), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    (out / f"{script.stem}.txt").write_text(completed.stdout + completed.stderr, encoding="utf-8")
    print(f"{script.name}: exit {completed.returncode}, {seconds:.1f} s")
    return {"script": script.name, "returncode": completed.returncode, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument(
        "--allow-cpu", action="store_true", help="run even when no GPU is found (a dry run)"
    )
    args = parser.parse_args(argv)

    if compperf.num_gpus() == 0 and not args.allow_cpu:
        parser.error(
            "no CUDA or MPS device found; this script records the chapter on a GPU "
            "(pass --allow-cpu for a dry run on the CPU)"
        )
    if os.environ.get("COMPPERF_FAST"):
        parser.error("COMPPERF_FAST is set; unset it to record the full chapter")
    scripts = sorted(CHAPTER.glob("plot_*.py"))
    if not scripts:
        parser.error(f"no plot_*.py examples in {CHAPTER}")

    args.out.mkdir(parents=True, exist_ok=True)
    environment = compperf.environment()
    print(environment)
    results = [run_example(script, args.out) for script in scripts]
    summary = {
        "environment": {**dataclasses.asdict(environment), "text": str(environment)},
        "results": results,
        "total_seconds": sum(r["seconds"] for r in results),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    # The results record the site's Results pages read: copy it to results/<machine>.json.
    made = compperf.records.read_example_figures(sorted(args.out.glob("*.figures.json")))
    record = compperf.records.results_record(made, source="chapter_run")
    (args.out / "results.json").write_text(
        json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"total {summary['total_seconds']:.1f} s; outputs in {args.out}")
    return 0 if all(r["returncode"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
