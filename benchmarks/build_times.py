"""Time the docs build: clean, rebuild with nothing changed, and clean without executing.

Runs ``nox -s docs`` as a contributor would (reusing the docs session's virtualenv, so
package installation is not timed) and prints each kind of build with its ratio to the
clean build. It deletes docs/_build and docs/auto_examples first: your next ordinary
``nox -s docs`` executes everything again.

    python benchmarks/build_times.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import build_stats  # beside this script

ROOT = Path(__file__).resolve().parents[1]
GENERATED = [ROOT / "docs" / "_build", ROOT / "docs" / "auto_examples"]
GENERATED_FILES = [ROOT / "docs" / "sg_execution_times.rst"]
NOX = [sys.executable, "-m", "nox", "--reuse-existing-virtualenvs", "--no-install", "-s", "docs"]


def _clean() -> None:
    for folder in GENERATED:
        shutil.rmtree(folder, ignore_errors=True)
    for file in GENERATED_FILES:
        file.unlink(missing_ok=True)


def _build(*posargs: str) -> float:
    """Seconds of wall time for one ``nox -s docs`` run; raises if the build fails."""
    command = [*NOX, "--", *posargs] if posargs else NOX
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(
            f"build failed: {' '.join(command)}\n{result.stdout[-4000:]}{result.stderr[-4000:]}"
        )
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the three builds")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if not (ROOT / ".nox" / "docs").is_dir():
        sys.exit("no docs session virtualenv yet: run `nox -s docs` once first")

    kinds = {"clean build": [], "rebuild, nothing changed": [], "clean build, --no-exec": []}
    for round_ in range(1, args.repeat + 1):
        print(f"round {round_}/{args.repeat} ...", file=sys.stderr, flush=True)
        _clean()
        kinds["clean build"].append(_build())
        kinds["rebuild, nothing changed"].append(_build())
        _clean()
        kinds["clean build, --no-exec"].append(_build("--no-exec"))

    print(build_stats.device())
    print(f"{args.repeat} round(s), no warm-up: each clean build starts from an empty docs/_build")
    print("(inductor, matplotlib and jupyter caches included); the virtualenv is prepared.")
    clean_median, _ = build_stats.summary(kinds["clean build"])
    for kind, times in kinds.items():
        median, iqr = build_stats.summary(times)
        spread = "n/a (1 run)" if iqr is None else f"{iqr:.1f} s"
        print(
            f"{kind:<26} median {median:7.1f} s   IQR {spread:<12}"
            f" ratio to clean {median / clean_median:.2f}"
        )


if __name__ == "__main__":
    main()
