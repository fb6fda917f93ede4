"""Key figures and results records: what a run measured, kept to compare machines.

Why one module of about 490 lines: the record's format is defined here once, and
everything that writes or reads it (the notes a run makes, the docs build's files, the
learner's table, the command line) sits beside the definition, so that a change of the
format is one edit in one file. The learner's comparison and the command line, its two
last sections, are what to move out if it grows further.

Every :class:`~compperf.Measurement` and every :class:`~compperf.Verdict` a process
makes is noted here, as a *key figure* (a few numbers under a key: the measurement's
description, the verdict's claim and subject). Three things are made from them:

- **An example's figures** (``format: compperf-figures/1``): the key figures one example
  made, with the environment it measured on (:func:`example_figures`). The docs build
  keeps them per example (``docs/auto_examples/<chapter>/<stem>.figures.json``) and puts
  them inside that example's downloads, so that a learner's run ends with a table of the
  published value, theirs and the ratio (:func:`compare_published`).
- **A results record** (``format: compperf-results/1``): one machine's figures for many
  examples (:func:`results_record`). The docs build writes its own; a learner writes one
  with ``python -m compperf.records run examples/<chapter>/plot_*.py --out me.json``;
  ``benchmarks/gpu/chapter_run.py`` writes one per chapter. Records kept in the
  repository's ``results/`` folder are shown side by side on each chapter's Results page.

A results record is JSON::

    {
      "format": "compperf-results/1",
      "name": "cpu-2-threads-xeon",          # the machine's column title
      "made": "2026-12-01T13:05:00+00:00",   # when (UTC)
      "source": "docs build",                # or "chapter_run", "learner"
      "compperf": "0.1.0",
      "environment": {"device": "cpu", "device_name": ..., "torch": ..., "cuda": null,
                      "cpu": ..., "num_threads": 2, "python": ..., "platform": ...,
                      "accelerators": [], "cudnn": null},
      "examples": {
        "asynchronous/plot_cost_model": {
          "seconds": 12.3,                   # running time, or null
          "figures": [
            {"key": "x @ y, 1024", "kind": "time", "value": 1.2e-3},
            {"key": "faster: compile vs eager", "kind": "verdict", "value": 0.81,
             "low": 0.78, "high": 0.85, "outcome": "yes"}
          ]
        }
      }
    }

``kind`` is ``"time"`` (``value``: the median in seconds per call) or ``"verdict"``
(``value``: the number the verdict reports, else the geometric middle of its interval;
``outcome``: yes, no or unclear). A key that occurs several times in one run gets
`` #2``, `` #3``, ... in the order the run made them.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import math
import os
import re
import runpy
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from compperf.figure_labels import CLAIMS, label

__all__ = [
    "CLAIMS",
    "FIGURES_FORMAT",
    "RESULTS_FORMAT",
    "comparable",
    "compare_published",
    "example_figures",
    "figures",
    "label",
    "note_environment",
    "note_measurement",
    "note_verdict",
    "read_example_figures",
    "read_record",
    "reset",
    "results_record",
    "run_examples",
    "write_example_figures",
]

FIGURES_FORMAT = "compperf-figures/1"
RESULTS_FORMAT = "compperf-results/1"
# At most this many key figures are kept per run (a sweep can make hundreds).
MAX_FIGURES = 60

_figures: list[dict[str, Any]] = []
_counts: dict[str, int] = {}
# Each noted key as this run's reader reads it (a translated message), for the learner's table.
_labels: dict[str, str] = {}
_environment: dict[str, Any] | None = None
_muted = False


def reset() -> None:
    """Forget the figures and environment noted so far (a new example starts)."""
    global _environment
    _figures.clear()
    _counts.clear()
    _labels.clear()
    _environment = None


# A device named in a key (a verdict's subject often ends with it): keys from a CPU and a
# GPU run are the same figure. Not a method such as ``.cpu()``.
_DEVICE = re.compile(r"(?<![\w.])(cuda:\d+|cuda|mps|cpu)(?![\w(])")


def comparable(key: str) -> str:
    """``key`` with any device name replaced by ``<device>``: the same figure on any device."""
    return _DEVICE.sub("<device>", key)


def _english(text: object) -> str:
    """A key in English whatever the run's language: a message (``tr``) by its record."""
    record = getattr(text, "record", None)
    if record:
        from compperf.i18n import SOURCE_LANGUAGE, render

        return render(record, SOURCE_LANGUAGE)
    return str(text)


def _key(key: object, label: object = None) -> str:
    """The English key of a figure (`` #2`` on its second use); ``label`` as the reader reads it."""
    english = " ".join(_english(key).split())[:120]
    _counts[english] = _counts.get(english, 0) + 1
    suffix = "" if _counts[english] == 1 else f" #{_counts[english]}"
    _labels[english + suffix] = " ".join(str(key if label is None else label).split()) + suffix
    return english + suffix


def _add(figure: dict[str, Any]) -> None:
    if len(_figures) < MAX_FIGURES:
        _figures.append(figure)


@contextlib.contextmanager
def unnoted() -> Iterator[None]:
    """Measurements made inside the block are not noted: the references that a measurement
    is timed against (:meth:`compperf.Ceilings.place`), which would crowd out its figures."""
    global _muted
    before, _muted = _muted, True
    try:
        yield
    finally:
        _muted = before


def note_measurement(measurement: Any) -> None:
    """Note a :class:`~compperf.Measurement` (called by the Measurement itself)."""
    if _muted or not math.isfinite(measurement.median):
        return
    _add({"key": _key(measurement.description), "kind": "time", "value": measurement.median})


def _middle(low: float, high: float) -> float:
    if low > 0 and high > 0:
        return math.sqrt(low * high)
    return (low + high) / 2


def _claim(claim: object) -> object:
    """A verdict's claim as this run's reader reads it (claims are English keys)."""
    if getattr(claim, "record", None):
        return claim
    from compperf.i18n import language

    return label(str(claim), language())


def note_verdict(record: Mapping[str, Any]) -> None:
    """Note a verdict's record (:meth:`compperf.Verdict.record`)."""
    low, high, value = record["low"], record["high"], record.get("value")
    if value is None:
        value = _middle(float(low), float(high))
    figure = {
        "key": _key(
            f"{_english(record['claim'])}: {_english(record['subject'])}",
            f"{_claim(record['claim'])}: {record['subject']}",
        ),
        "kind": "verdict",
        "value": float(value),
        "low": float(low),
        "high": float(high),
        "outcome": record["outcome"],
    }
    if all(math.isfinite(figure[name]) for name in ("value", "low", "high")):
        _add(figure)


def note_environment(environment: Any) -> None:
    """Note the environment a run reports (the last :func:`compperf.environment` call wins)."""
    global _environment
    _environment = _environment_record(environment)


def _environment_record(environment: Any) -> dict[str, Any]:
    record = dataclasses.asdict(environment)
    record["accelerators"] = list(record["accelerators"])
    return record


def _current_environment() -> dict[str, Any]:
    if _environment is not None:
        return dict(_environment)
    from compperf.environment import environment

    return _environment_record(environment("cpu"))


def figures() -> list[dict[str, Any]]:
    """The key figures noted since the last :func:`reset`, in the order they were made."""
    return [dict(figure) for figure in _figures]


def example_figures(example: str, seconds: float | None = None) -> dict[str, Any]:
    """What one example measured: its name, environment and key figures (JSON-able).

    ``example`` is ``"<chapter>/<stem>"``, e.g. ``"asynchronous/plot_cost_model"``.
    """
    return {
        "format": FIGURES_FORMAT,
        "example": example,
        "environment": _current_environment(),
        "seconds": None if seconds is None else round(float(seconds), 3),
        "figures": figures(),
    }


def write_example_figures(
    script: str | os.PathLike[str], path: str | os.PathLike[str], seconds: float | None = None
) -> None:
    """Write :func:`example_figures` of the example ``script`` (just run) to ``path``."""
    script = Path(script)
    made = example_figures(f"{script.resolve().parent.name}/{script.stem}", seconds)
    Path(path).write_text(json.dumps(made, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def read_example_figures(paths: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """Read the files :func:`write_example_figures` wrote (unreadable ones are left out)."""
    made = []
    for path in paths:
        try:
            found = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(found, dict) and found.get("format") == FIGURES_FORMAT:
            made.append(found)
    return made


def machine_name(environment: Mapping[str, Any]) -> str:
    """A short column title for a machine: its device's name and torch's thread count."""
    name = str(environment.get("device_name") or environment.get("device") or "machine")
    if str(environment.get("device", "cpu")).startswith("cpu"):
        name = f"{name}, {environment.get('num_threads')} threads"
    return re.sub(r"\s+", " ", name.replace("(R)", "").replace("(TM)", "")).strip()


def results_record(
    examples: Iterable[Mapping[str, Any]],
    *,
    source: str,
    name: str | None = None,
) -> dict[str, Any]:
    """One machine's results record from examples' figures (:func:`example_figures`).

    The environment is the first example's; ``name`` defaults to :func:`machine_name`.
    """
    examples = list(examples)
    environment = dict(examples[0]["environment"]) if examples else _current_environment()
    from compperf import __version__

    return {
        "format": RESULTS_FORMAT,
        "name": name or machine_name(environment),
        "made": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
        "source": source,
        "compperf": __version__,
        "environment": environment,
        "examples": {
            entry["example"]: {"seconds": entry.get("seconds"), "figures": entry["figures"]}
            for entry in sorted(examples, key=lambda entry: entry["example"])
        },
    }


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a results record.

    Raises
    ------
    ValueError
        If the file is not a ``compperf-results/1`` record; the message names the file
        and what is wrong.
    """
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable JSON results record ({error})") from error
    problem = _problem(record)
    if problem:
        raise ValueError(f"{path}: {problem}")
    return record


def _problem(record: object) -> str | None:
    if not isinstance(record, dict) or record.get("format") != RESULTS_FORMAT:
        return f"'format' must be {RESULTS_FORMAT!r}"
    for key, kind in (("name", str), ("environment", dict), ("examples", dict)):
        if not isinstance(record.get(key), kind):
            return f"{key!r} must be a {kind.__name__}"
    for example, entry in record["examples"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("figures"), list):
            return f"examples[{example!r}] needs a 'figures' list"
        for figure in entry["figures"]:
            if not isinstance(figure, dict) or not {"key", "kind", "value"} <= set(figure):
                return f"examples[{example!r}]: each figure needs key, kind and value"
            if figure["kind"] not in ("time", "verdict"):
                return f"examples[{example!r}]: unknown kind {figure['kind']!r}"
    return None


# -- The learner's comparison -------------------------------------------------


def _shown(figure: Mapping[str, Any]) -> str:
    from compperf.timing import format_time

    if figure["kind"] == "time":
        return str(format_time(figure["value"]))
    from compperf.i18n import tr

    outcome = {"yes": tr("yes"), "no": tr("no"), "unclear": tr("unclear")}.get(
        figure.get("outcome"), figure.get("outcome")
    )
    return f"{_number(figure['value'], '.3g')} ({outcome})"


def _number(value: float, spec: str) -> str:
    """``value`` formatted with ``spec`` in the reader's convention (a Russian decimal comma)."""
    from compperf import numerals
    from compperf.i18n import language

    return numerals.localize(format(value, spec), value, language())


def _label(yours: Mapping[str, Any], theirs: Mapping[str, Any], example: str | None) -> str:
    """A row's key figure in the reader's language: the published key read through the
    example's catalog and compperf's (:func:`label`), else as this run's reader read it."""
    from compperf.i18n import MissingTranslation, language

    try:
        return label(theirs["key"], language(), example, strict=True)
    except MissingTranslation:
        shown = _labels.get(yours["key"], yours["key"])
        return theirs["key"] if shown == yours["key"] else shown


def _where(environment: Mapping[str, Any]) -> str:
    """``device (machine)``, the thread count of a CPU in the reader's language."""
    from compperf.i18n import parts, tr_plural

    name, threads = machine_name(environment), environment.get("num_threads")
    suffix = f", {threads} threads"
    if isinstance(threads, int) and name.endswith(suffix):
        with parts():
            name = f"{name.removesuffix(suffix)}, {tr_plural('{n} thread', '{n} threads', threads)}"
    return f"{environment.get('device')} ({name})"


def compare_published(published: Mapping[str, Any] | None, *, file: Any = None) -> None:
    """Print what the published page measured beside what this run measured.

    The site's build appends a call of this to every downloaded script and notebook,
    with the page's figures (:func:`example_figures`) as argument; ``None`` when the
    page has none. Prints, in the language chosen with :func:`compperf.use_language`,
    where each was measured and a table of the key figures both runs have (published,
    yours, yours / published); or one line saying there is nothing to compare.
    """
    from compperf.i18n import parts, table, tr

    out = file or sys.stdout
    mine = {comparable(figure["key"]): figure for figure in _figures}
    if not published or not published.get("figures"):
        print(tr("No published numbers travel with this script: nothing to compare."), file=out)
        return
    rows = []
    with parts():
        for theirs in published["figures"]:
            yours = mine.get(comparable(theirs["key"]))
            if yours is None or yours["kind"] != theirs["kind"]:
                continue
            ratio = yours["value"] / theirs["value"] if theirs["value"] else float("nan")
            rows.append(
                [
                    _label(yours, theirs, published.get("example"))[:48],
                    _shown(theirs),
                    _shown(yours),
                    f"{_number(ratio, '.2f')}\N{MULTIPLICATION SIGN}",
                ]
            )
        header = [tr("key figure"), tr("published"), tr("yours"), tr("yours / published")]
    if not rows:
        print(
            tr(
                "This run made none of the key figures the published page measured "
                "(an edited script?): nothing to compare."
            ),
            file=out,
        )
        return
    print(
        tr(
            "Published: measured on {published}. Yours: measured on {yours}.",
            published=_where(published["environment"]),
            yours=_where(_current_environment()),
        ),
        file=out,
    )
    print(table(header, rows), file=out)


# -- Running examples to make a record ------------------------------------------


def run_examples(
    scripts: Sequence[str | os.PathLike[str]], *, source: str = "learner"
) -> dict[str, Any]:
    """Run example scripts in this process, one after another; return their results record.

    Each runs from its own folder as ``python plot_x.py`` would, with matplotlib's
    non-interactive backend. A script that raises is reported and left out.
    """
    os.environ.setdefault("MPLBACKEND", "Agg")
    made = []
    for script in map(Path, scripts):
        script = script.resolve()
        reset()
        start = time.perf_counter()
        here = Path.cwd()
        try:
            os.chdir(script.parent)
            runpy.run_path(str(script), run_name="__main__")
        except Exception as error:  # noqa: BLE001 - one failing script must not lose the rest
            print(f"compperf.records: {script.name} failed: {error!r}", file=sys.stderr)
            continue
        finally:
            os.chdir(here)
            try:
                import matplotlib.pyplot as plt

                plt.close("all")
            except ImportError:
                pass
        made.append(
            example_figures(f"{script.parent.name}/{script.stem}", time.perf_counter() - start)
        )
    return results_record(made, source=source)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m compperf.records run SCRIPT... --out FILE``: write a results record."""
    parser = argparse.ArgumentParser(
        prog="python -m compperf.records",
        description="Run example scripts and write their key figures as a results record.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run scripts and write a record")
    run.add_argument("scripts", nargs="+", help="example scripts (plot_*.py)")
    run.add_argument("--out", required=True, type=Path, help="the record to write (.json)")
    run.add_argument("--name", help="the machine's column title (default: its device)")
    check = commands.add_parser("check", help="check records")
    check.add_argument("records", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if args.command == "check":
        for path in args.records:
            record = read_record(path)
            print(f"{path}: {record['name']}, {len(record['examples'])} examples")
        return 0
    record = run_examples(args.scripts)
    if args.name:
        record["name"] = args.name
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"compperf.records: {len(record['examples'])} examples written to {args.out}")
    return 0 if len(record["examples"]) == len(args.scripts) else 1


if __name__ == "__main__":
    # Run as ``python -m``, this file is ``__main__``: the Measurements note their figures
    # in the ``compperf.records`` module that compperf imports, so that one runs.
    from compperf import records as _records  # noqa: PLW0406 - the imported one, not __main__

    sys.exit(_records.main())
