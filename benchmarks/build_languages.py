"""Time the three-language docs build against the English-only build, in one run.

Both start clean (no docs/_build, no docs/auto_examples: every example executes once),
in a copy of the sources in a temporary folder, so your own build folders are left alone.
Both run ``nox -s docs`` with the docs session's prepared virtualenv (package installation
is not timed): ``-- --languages=en`` for English only, no option for all three. Prints the
device, the median and IQR of each, the ratio of the medians (target: at most 1.25), and
how many examples each language's build executed (the second and third should run none).

    python benchmarks/build_languages.py [--repeat N]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import build_stats  # beside this script

ROOT = Path(__file__).resolve().parents[1]
ENVDIR = ROOT / ".nox"
TARGET_RATIO = 1.25
# What a clean clone does not have: the copy starts from the sources alone.
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".nox", ".venv", "_build", "__pycache__", "*.egg-info", "*_output",
    ".pytest_cache", ".ruff_cache",
)  # fmt: skip
_GENERATED_IN_DOCS = {"auto_examples", "sg_execution_times.rst", "jupyter_execute"}


def _not_copied(folder: str, names: list[str]) -> set[str]:
    ignored = set(_NOT_COPIED(folder, names))
    if Path(folder) == ROOT / "docs":  # not docs/locales/<lang>/.../auto_examples
        ignored |= _GENERATED_IN_DOCS & set(names)
    return ignored


_EXECUTED = re.compile(r"Sphinx-Gallery successfully executed (\d+) out of")


def _build(tree: Path, *posargs: str) -> tuple[float, list[int]]:
    """Seconds of one clean ``nox -s docs`` in ``tree``, and examples executed per language."""
    for generated in ("docs/_build", "docs/auto_examples"):
        shutil.rmtree(tree / generated, ignore_errors=True)
    (tree / "docs" / "sg_execution_times.rst").unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "nox", "-f", str(tree / "noxfile.py"), "--envdir", str(ENVDIR),
        "--reuse-existing-virtualenvs", "--no-install", "-s", "docs", "--", *posargs,
    ]  # fmt: skip
    start = time.perf_counter()
    result = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(
            f"build failed: {' '.join(command)}\n{result.stdout[-4000:]}{result.stderr[-4000:]}"
        )
    executed = [int(n) for n in _EXECUTED.findall(result.stdout + result.stderr)]
    return seconds, executed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the two builds")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if not (ENVDIR / "docs").is_dir():
        sys.exit("no docs session virtualenv yet: run `nox -s docs` once first")

    english, three = [], []
    executed: list[int] = []
    with tempfile.TemporaryDirectory(prefix="compperf-build-languages-") as folder:
        tree = Path(folder) / "compperf"
        shutil.copytree(ROOT, tree, ignore=_not_copied)
        for round_ in range(1, args.repeat + 1):
            print(f"round {round_}/{args.repeat} ...", file=sys.stderr, flush=True)
            english.append(_build(tree, "--languages=en")[0])
            seconds, executed = _build(tree)
            three.append(seconds)

    print(build_stats.device())
    print(f"{args.repeat} round(s), no warm-up: each build starts from an empty docs/_build")
    print("(inductor, matplotlib and jupyter caches included); the virtualenv is prepared.")
    en_median, en_iqr = build_stats.summary(english)
    all_median, all_iqr = build_stats.summary(three)
    for label, median, iqr in (
        ("English only", en_median, en_iqr),
        ("en + zh_CN + ru", all_median, all_iqr),
    ):
        spread = "n/a (1 run)" if iqr is None else f"{iqr:.1f} s"
        print(f"{label:<16} median {median:7.1f} s   IQR {spread}")
    ratio = all_median / en_median
    verdict = "within" if ratio <= TARGET_RATIO else "ABOVE"
    print(f"ratio {ratio:.2f} ({verdict} the target of {TARGET_RATIO})")
    print(f"examples executed per language (en, zh_CN, ru), last round: {executed}")


if __name__ == "__main__":
    main()
