"""Time a sharded docs build (each chapter, merge, final build) against an unsharded one.

Everything runs in copies of the sources in a temporary folder, each starting clean (no
docs/_build, no docs/auto_examples), with the docs session's prepared virtualenv (package
installation is not timed), so your own build folders are left alone:

- unsharded: ``nox -s docs`` (every language; executes every example once);
- one copy per chapter: ``nox -s docs -- --chapters=<chapter> --languages=en``;
- merge: ``python -m compperf_docs.shards`` copies the chapters' outputs into a fresh copy;
- final: ``nox -s docs -- -D compperf_reuse_outputs=1`` there (every language; what
  ``--merge`` runs after merging), which must execute nothing.

Prints the device, each time, the sum (one machine doing the shards in turn) and the
critical path (one machine per shard), and how many examples each build executed.

    python benchmarks/build_shards.py
"""

from __future__ import annotations

import os
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
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".nox", ".venv", "_build", "__pycache__", "*.egg-info", "*_output",
    ".pytest_cache", ".ruff_cache", "node_modules",
)  # fmt: skip
_GENERATED_IN_DOCS = {"auto_examples", "sg_execution_times.rst", "jupyter_execute"}
_EXECUTED = re.compile(r"Sphinx-Gallery successfully executed (\d+) out of")


def _not_copied(folder: str, names: list[str]) -> set[str]:
    ignored = set(_NOT_COPIED(folder, names))
    if Path(folder) == ROOT / "docs":  # not docs/locales/<lang>/.../auto_examples
        ignored |= _GENERATED_IN_DOCS & set(names)
    return ignored


def _chapters() -> list[str]:
    """The chapters, as ``[tool.compperf]`` in pyproject.toml lists them."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import compperf_project

    return compperf_project.chapters()


def _run(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    log = result.stdout + result.stderr
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{log[-6000:]}")
    return seconds, log


def _docs(tree: Path, *posargs: str) -> tuple[float, int]:
    """Seconds of ``nox -s docs`` in ``tree``, and examples executed (all languages)."""
    command = [
        sys.executable, "-m", "nox", "-f", str(tree / "noxfile.py"), "--envdir", str(ENVDIR),
        "--reuse-existing-virtualenvs", "--no-install", "-s", "docs", "--", *posargs,
    ]  # fmt: skip
    seconds, log = _run(command, tree)
    return seconds, sum(int(n) for n in _EXECUTED.findall(log))


def main() -> None:
    if not (ENVDIR / "docs").is_dir():
        sys.exit("no docs session virtualenv yet: run `nox -s docs --install-only` first")
    chapters = _chapters()
    rows: list[tuple[str, float, int]] = []
    with tempfile.TemporaryDirectory(prefix="compperf-build-shards-") as folder:
        trees = {name: Path(folder) / name for name in ["unsharded", *chapters, "merged"]}
        for tree in trees.values():
            shutil.copytree(ROOT, tree, ignore=_not_copied)
        print("unsharded build ...", file=sys.stderr, flush=True)
        rows.append(("unsharded (en, zh_CN, ru)", *_docs(trees["unsharded"])))
        for chapter in chapters:
            print(f"shard {chapter} ...", file=sys.stderr, flush=True)
            seconds, executed = _docs(trees[chapter], f"--chapters={chapter}", "--languages=en")
            rows.append((f"shard {chapter} (en)", seconds, executed))
        merged = trees["merged"]
        python = ENVDIR / "docs" / "bin" / "python"
        sources = [str(trees[chapter] / "docs") for chapter in chapters]
        seconds, _ = _run(
            [str(python), "-m", "compperf_docs.shards", *sources],
            merged,
            env={**os.environ, "PYTHONPATH": str(merged / "docs" / "_ext")},
        )
        rows.append(("merge", seconds, 0))
        print("final build ...", file=sys.stderr, flush=True)
        rows.append(("final (en, zh_CN, ru)", *_docs(merged, "-D", "compperf_reuse_outputs=1")))

    print(build_stats.device())
    print("One run each, no warm-up, every build from a clean copy (cold inductor, matplotlib")
    print("and jupyter caches); the virtualenv is prepared. Noisy on a shared machine.")
    for label, seconds, executed in rows:
        print(f"{label:<28} {seconds:7.1f} s   examples executed: {executed}")
    shard_times = [seconds for label, seconds, _ in rows if label.startswith("shard ")]
    merge_s, final_s = rows[-2][1], rows[-1][1]
    print(f"{'sharded, one machine':<28} {sum(shard_times) + merge_s + final_s:7.1f} s")
    print(f"{'sharded, critical path':<28} {max(shard_times) + merge_s + final_s:7.1f} s")


if __name__ == "__main__":
    main()
