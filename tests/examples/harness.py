"""One way to run the gallery's examples in tests: alone, or a whole chapter in gallery order.

Every run happens in a fresh interpreter (``run_examples.py``) with the tests' settings:

- ``COMPPERF_FAST=1`` shrinks the work; examples read it only inside sphinx-gallery's
  ``sphinx_gallery_start_ignore`` blocks, so readers never see it;
- matplotlib draws off-screen (Agg), each example runs in its own temporary folder;
- every ``DeprecationWarning`` is an error, in the example and in processes it starts.

A chapter run executes its examples one after the other in one process with the docs
build's own reset between them, so it shows what an example prints inside the gallery.

Running an example costs seconds to minutes, so the tests share runs: :func:`shared_run`
runs each example alone once per test session and evaluates there every probe that any
test asks of it (those registered with :func:`share` before the run, and the caller's).
Only a run with other settings (``PATH`` without ``dot``, say) needs :func:`run_alone`.
A chapter's gallery-order run is shared likewise (:func:`shared_chapter`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
_RUNNER = Path(__file__).with_name("run_examples.py")
# A hang guard, not a speed target: seconds per example in a process (a chapter run gets
# this for each of its examples); an example in fast mode takes far less, even under load.
_TIMEOUT = 900

__all__ = [
    "EXAMPLES",
    "Run",
    "busy_cpus",
    "chapters",
    "claims",
    "examples",
    "numbers",
    "quiet_and_loaded",
    "run_alone",
    "run_chapter",
    "share",
    "shared_chapter",
    "shared_run",
    "verdict_flips",
]


def chapters() -> list[str]:
    """The gallery's chapters in reading order (``chapters`` in ``[tool.compperf]``)."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import compperf_project

    return compperf_project.chapters(ROOT / "pyproject.toml")


def examples(chapter: str) -> list[Path]:
    """The executed examples of a chapter, in gallery order (sphinx-gallery's
    ``FileNameSortKey``: by file name)."""
    return sorted((EXAMPLES / chapter).glob("plot_*.py"), key=lambda path: path.name)


# Numbers that differ from run to run on the same machine: decimals and durations with
# their unit (timings, ratios), memory addresses, the random names of temporary folders,
# the rounds an interleaved comparison ran until its interval was narrow (compperf.Ratio).
_VOLATILE = re.compile(
    r"0x[0-9a-f]+|tmp[\w-]{6,}|\d+ rounds\b"
    r"|\d[\d,]*(\.\d+)?(e[-+]?\d+)?(\s*(ns|µs|us|ms|s|min|%|x|\u00d7)(?!\w))?",
    re.IGNORECASE,
)
_WHOLE_NUMBER = re.compile(r"\d[\d,]*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def numbers(text: str, code: str = "en") -> list[str]:
    """The numbers in ``text``, a message in language ``code``, as English writes them, sorted.

    compperf writes numbers in the reader's convention (:mod:`compperf.numerals`: Russian
    «1 234,5»); undoing it lets a test compare the numbers of two languages.
    """
    from compperf import numerals

    convention = numerals.convention(code)
    group = re.escape(convention.group) + "\u00a0\u202f"
    text = re.sub(rf"(?<=\d)[{group}](?=\d{{3}}(?!\d))", "", text)
    if convention.decimal != ".":
        text = re.sub(rf"(?<=\d){re.escape(convention.decimal)}(?=\d)", ".", text)
    return sorted(_NUMBER.findall(text))


def _mask(match: re.Match[str]) -> str:
    # A bare whole number is a count (of graphs, of nodes): a claim. Anything else varies.
    return match.group() if _WHOLE_NUMBER.fullmatch(match.group()) else "#"


def claims(stdout: str) -> list[str]:
    """The sentences an example printed, one per paragraph, with run-to-run noise masked.

    A paragraph (lines between blank lines, folded into one line) is a claim when it ends
    like a sentence (``.``, ``!`` or ``?``) and has no table in it (a line with aligned
    columns); tables, tensors and logs are data, not claims. Bare whole numbers are kept
    (a count of graphs is a claim); decimals, durations, percentages, addresses and
    temporary folder names become ``#``.
    """
    found = []
    for block in re.split(r"\n\s*\n", stdout):
        if _TABLE_LINE.search(block):
            continue
        paragraph = " ".join(block.split())
        if paragraph.endswith((".", "!", "?")):
            found.append(_VOLATILE.sub(_mask, paragraph))
    return found


# Aligned columns (two spaces inside a line) or a rule of dashes.
_TABLE_LINE = re.compile(r"^[ \t]*\S.*?\S {2,}\S|^[ \t]*-{3,}", re.MULTILINE)


@dataclass
class Run:
    """What one example did in a run."""

    name: str
    stdout: str
    error: str | None
    probe: object
    stderr: str = ""
    # The docs build's account of the run (<stem>.verdicts.json): "seconds",
    # "disturbance" (Disturbance.record()), "message", "verdicts" (Verdict.record()s).
    account: dict = field(default_factory=dict)
    # The messages it made (compperf.i18n records), in order.
    records: list[dict] = field(default_factory=list)
    claims: list[str] = field(init=False)

    @property
    def verdicts(self) -> list[dict]:
        """The verdicts the example made, in order (claim, subject, outcome, ...)."""
        return self.account.get("verdicts", [])

    @property
    def disturbance(self) -> dict:
        """What the machine reported while the example ran (``Disturbance.record()``)."""
        return self.account.get("disturbance", {})

    def __post_init__(self) -> None:
        self.claims = claims(self.stdout)

    def check(self) -> Run:
        """Fail with the example's output unless it ran to the end without deprecations."""
        assert self.error is None, f"{self.name} failed:\n{self.stdout}\n{self.error}"
        assert "DeprecationWarning:" not in self.stderr, self.stderr
        return self


# Set by conftest.py for each test: whether it is marked ``executes``. `nox -s tests`
# leaves those out, so a test that runs an example without the mark would slow it down.
executing_allowed = True
_UNMARKED = (
    "this test runs an example but is not marked `executes`: add @pytest.mark.executes "
    "(or `pytestmark = pytest.mark.executes` in its module), so that `nox -s tests` "
    "leaves it to `nox -s examples`"
)


def _run(
    paths: list[Path],
    probes: dict[str, str],
    env: dict[str, str],
    shared: dict[str, list[str]] | None = None,
) -> dict[str, Run]:
    if not executing_allowed:
        raise RuntimeError(_UNMARKED)
    with tempfile.TemporaryDirectory(prefix="compperf-examples-") as folder:
        spec, result = Path(folder, "spec.json"), Path(folder, "result.json")
        spec.write_text(
            json.dumps(
                {
                    "workdir": str(Path(folder, "work")),
                    "examples": [
                        {
                            "path": str(path),
                            "probe": probes.get(path.name, "None"),
                            "probes": (shared or {}).get(path.name, []),
                        }
                        for path in paths
                    ],
                }
            ),
            encoding="utf-8",
        )
        environ = {
            **os.environ,
            "COMPPERF_FAST": "1",
            "MPLBACKEND": "Agg",
            "PYTHONWARNINGS": "error::DeprecationWarning",
            **env,
        }
        completed = subprocess.run(
            [sys.executable, str(_RUNNER), str(spec), str(result)],
            capture_output=True,
            text=True,
            env=environ,
            check=False,
            timeout=_TIMEOUT * len(paths),
        )
        failure = f"the example runner failed:\n{completed.stdout}\n{completed.stderr}"
        assert completed.returncode == 0, failure
        assert result.is_file(), failure
        saved = json.loads(result.read_text(encoding="utf-8"))
    runs = {
        name: Run(
            name,
            entry["stdout"],
            entry["error"],
            entry["probe"],
            completed.stderr,
            entry.get("run") or {},
            entry.get("records") or [],
        )
        for name, entry in saved.items()
    }
    for name, entry in saved.items():
        _PROBE_RESULTS[name] = entry.get("probes") or []
    return runs


def run_alone(path: Path | str, probe: str = "None", **env: str) -> Run:
    """Run one example alone in a fresh process, as ``python plot_x.py`` would.

    Parameters
    ----------
    path : Path or str
        The example, or its file name within any chapter.
    probe : str
        A Python expression evaluated in the example's namespace after it ran; its value,
        made JSON (``default=str``), is ``Run.probe``. ``plt`` is pyplot.
    **env : str
        Extra environment variables for the run (e.g. ``PATH`` without ``dot``).
    """
    path = _resolve(path)
    return _run([path], {path.name: probe}, env)[path.name]


# Shared runs: the probes each example's run must evaluate, and the runs made so far.
_SHARED_PROBES: dict[Path, list[str]] = {}
_SHARED_RUNS: dict[Path, tuple[Run, list[str], list[dict]]] = {}
_PROBE_RESULTS: dict[str, list[dict]] = {}


def share(probes: dict[str, str]) -> None:
    """Ask the session's run of each named example (file name to probe) for its probe.

    A test module calls this at import, so that the one run of an example that other
    test files make first evaluates its probes too.
    """
    for name, probe in probes.items():
        wanted = _SHARED_PROBES.setdefault(_resolve(name), [])
        if probe not in wanted:
            wanted.append(probe)


def shared_run(path: Path | str, probe: str = "None") -> Run:
    """The example run alone, as :func:`run_alone` with no extra environment, once per
    test session: every test that asks gets that one run, with its own probe's value.

    The example runs again only for a probe that its run did not evaluate (one neither
    registered with :func:`share` nor asked for before it ran).
    """
    path = _resolve(path)
    wanted = _SHARED_PROBES.setdefault(path, [])
    if probe not in wanted:
        wanted.append(probe)
    if path not in _SHARED_RUNS or probe not in {"None", *_SHARED_RUNS[path][1]}:
        probes = list(wanted)
        run = _run([path], {}, {}, {path.name: probes})[path.name]
        _SHARED_RUNS[path] = (run, probes, _PROBE_RESULTS.pop(path.name))
    run, probes, results = _SHARED_RUNS[path]
    if run.error is not None or probe not in probes:  # "None": no probe to evaluate
        return dataclasses.replace(run, probe=None)
    result = results[probes.index(probe)]
    return dataclasses.replace(run, probe=result["value"], error=result["error"])


def run_chapter(chapter: str, probes: dict[str, str] | None = None, **env: str) -> dict[str, Run]:
    """Run a chapter's examples in gallery order in one process; results by file name."""
    return _run(examples(chapter), probes or {}, env)


_SHARED_CHAPTERS: dict[str, dict[str, Run]] = {}


def shared_chapter(chapter: str) -> dict[str, Run]:
    """The chapter run in gallery order, as :func:`run_chapter` with no probe and no extra
    environment, once per test session: the gallery-order test and the load test share it."""
    if chapter not in _SHARED_CHAPTERS:
        _SHARED_CHAPTERS[chapter] = run_chapter(chapter)
    return _SHARED_CHAPTERS[chapter]


def _resolve(path: Path | str) -> Path:
    path = Path(path)
    if path.is_file():
        return path.resolve()
    found = sorted(EXAMPLES.glob(f"*/{path.name}"))
    if len(found) != 1:
        raise FileNotFoundError(f"no single example named {path.name!r} in {EXAMPLES}")
    return found[0]


# -- Proof under load (issue 18) -------------------------------------------------------

# A CPU-hungry competitor: one pure-Python busy loop per process, ending by itself.
_BUSY_LOOP = (
    "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
)


@contextlib.contextmanager
def busy_cpus(processes: int | None = None, seconds: float = 600) -> Iterator[list]:
    """Keep every core busy while the block runs: ``processes`` busy loops (one per CPU).

    Each loop stops by itself after ``seconds`` and is killed when the block ends.
    """
    count = processes or os.cpu_count() or 2
    started = [
        subprocess.Popen(
            [sys.executable, "-c", _BUSY_LOOP.format(seconds=seconds)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        yield started
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait(timeout=30)


def _keyed(verdicts: list[dict]) -> dict[tuple[str, str, int], str]:
    """Each verdict's outcome, keyed by claim, subject and how often the pair came before."""
    seen: dict[tuple[str, str], int] = {}
    keyed = {}
    for verdict in verdicts:
        pair = (verdict["claim"], verdict["subject"])
        seen[pair] = seen.get(pair, -1) + 1
        keyed[(*pair, seen[pair])] = verdict["outcome"]
    return keyed


def verdict_changes(first: list[dict], second: list[dict]) -> list[str]:
    """Verdicts whose outcome differs between two runs, or that only one run made."""
    a, b = _keyed(first), _keyed(second)
    return [
        f"{claim} ({subject}): {a.get(key, '-')} then {b.get(key, '-')}"
        for key in sorted(a.keys() | b.keys())
        for claim, subject, _ in [key]
        if a.get(key) != b.get(key)
    ]


def verdict_flips(first: list[dict], second: list[dict]) -> list[str]:
    """Verdicts made in both runs whose outcome went from yes to no or back.

    "unclear" in either run is no flip, and a verdict made in one run only (a branch
    taken on one outcome) is not compared.
    """
    a, b = _keyed(first), _keyed(second)
    return [
        f"{claim} ({subject}): {a[key]} then {b[key]}"
        for key in a.keys() & b.keys()
        for claim, subject, _ in [key]
        if {a[key], b[key]} == {"yes", "no"}
    ]


def quiet_and_loaded(chapter: str, **env: str) -> dict[str, tuple[Run, Run]]:
    """Each example of ``chapter``, quietly and then with every core busy: by file name.

    Both runs are the chapter in gallery order in one process, as the docs build runs it
    (the quiet one the session's :func:`shared_chapter`, unless ``env`` asks for another),
    so the two differ in the load alone. The busy loops start once, for the whole chapter.
    """
    quiet = run_chapter(chapter, **env) if env else shared_chapter(chapter)
    with busy_cpus():
        loaded = run_chapter(chapter, **env)
    return {name: (quiet[name].check(), loaded[name].check()) for name in quiet}
