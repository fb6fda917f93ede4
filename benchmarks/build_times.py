"""Time the docs build: clean, rebuilds (nothing changed, a new site URL, one example
edited), and clean without executing.

Runs ``nox -s docs`` as a contributor would (reusing the docs session's virtualenv, so
package installation is not timed) and prints each kind of build with its ratio to the
clean build and the examples it executed (over all languages). It deletes docs/_build and
docs/auto_examples first: your next ordinary ``nox -s docs`` executes everything again.
The edited example gets a comment line for one build and is restored afterwards.

    python benchmarks/build_times.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import build_stats  # beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import compperf_project

# sphinx-gallery's summary line, once per language build.
_EXECUTED = re.compile(r"Sphinx-Gallery successfully executed (\d+) out of")
# A site URL no build uses otherwise: nothing depends on it but links and notebooks.
OTHER_SITE_URL = "https://example.org/compperf-benchmark/"
GENERATED = [ROOT / "docs" / "_build", ROOT / "docs" / "auto_examples"]
GENERATED_FILES = [ROOT / "docs" / "sg_execution_times.rst"]
NOX = [sys.executable, "-m", "nox", "--reuse-existing-virtualenvs", "--no-install", "-s", "docs"]


def _clean() -> None:
    for folder in GENERATED:
        shutil.rmtree(folder, ignore_errors=True)
    for file in GENERATED_FILES:
        file.unlink(missing_ok=True)


def _build(*posargs: str, site_url: str | None = None) -> tuple[float, int]:
    """Wall seconds of one ``nox -s docs`` run and the examples it executed; exits if it fails."""
    command = [*NOX, "--", *posargs] if posargs else NOX
    env = dict(os.environ)
    env.pop(compperf_project.SITE_URL_VARIABLE, None)
    if site_url:
        env[compperf_project.SITE_URL_VARIABLE] = site_url
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(
            f"build failed: {' '.join(command)}\n{result.stdout[-4000:]}{result.stderr[-4000:]}"
        )
    executed = sum(int(n) for n in _EXECUTED.findall(result.stdout + result.stderr))
    return seconds, executed


def _example_to_edit() -> Path:
    chapter = compperf_project.chapters()[0]
    return min((ROOT / "examples" / chapter).glob("plot_*.py"))


def _build_with_edited_example(site_url: str) -> tuple[float, int]:
    example = _example_to_edit()
    original = example.read_bytes()
    try:
        example.write_bytes(original + b"\n# edited by benchmarks/build_times.py\n")
        return _build(site_url=site_url)
    finally:
        example.write_bytes(original)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the three builds")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if not (ROOT / ".nox" / "docs").is_dir():
        sys.exit("no docs session virtualenv yet: run `nox -s docs` once first")

    edited = _example_to_edit().relative_to(ROOT)
    kinds = {
        "clean build": [],
        "rebuild, nothing changed": [],
        "rebuild, new site URL": [],
        "rebuild, 1 example edited": [],
        "clean build, --no-exec": [],
    }
    executed = {kind: [] for kind in kinds}

    def record(kind: str, result: tuple[float, int]) -> None:
        kinds[kind].append(result[0])
        executed[kind].append(result[1])

    for round_ in range(1, args.repeat + 1):
        print(f"round {round_}/{args.repeat} ...", file=sys.stderr, flush=True)
        _clean()
        record("clean build", _build())
        record("rebuild, nothing changed", _build())
        record("rebuild, new site URL", _build(site_url=OTHER_SITE_URL))
        record("rebuild, 1 example edited", _build_with_edited_example(OTHER_SITE_URL))
        _clean()
        record("clean build, --no-exec", _build("--no-exec"))

    print(build_stats.device())
    print(f"{args.repeat} round(s), no warm-up: each clean build starts from an empty docs/_build")
    print("(inductor, matplotlib and jupyter caches included); the virtualenv is prepared.")
    languages = ", ".join(compperf_project.load().codes)
    print(f"Languages: {languages}; the edited example: {edited}")
    clean_median, _ = build_stats.summary(kinds["clean build"])
    for kind, times in kinds.items():
        median, iqr = build_stats.summary(times)
        spread = "n/a (1 run)" if iqr is None else f"{iqr:.1f} s"
        runs = sorted(set(executed[kind]))
        print(
            f"{kind:<26} median {median:7.1f} s   IQR {spread:<12}"
            f" ratio to clean {median / clean_median:.2f}"
            f"   examples executed {'/'.join(map(str, runs))}"
        )


if __name__ == "__main__":
    main()
