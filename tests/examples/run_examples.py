"""Run gallery examples in this process, as sphinx-gallery does, and save what each printed.

Used by ``harness.py`` in a fresh interpreter: ``python run_examples.py SPEC RESULT``.
SPEC is a JSON file ``{"examples": [{"path": ..., "probe": ...}, ...], "workdir": ...}``;
RESULT receives, per example, its stdout, its error (a traceback, or null), the JSON
value of its probe, an expression evaluated in the example's namespace after it ran (and
of each of its ``probes``, a list, for runs that several tests share), the messages it
made (``compperf.i18n`` records) and the account of its run that the docs build writes to
``<stem>.verdicts.json``: the machine's disturbance while it ran and the verdicts it made
(``compperf_docs.execute.gallery.last_run``).

Between examples it calls the same ``reset_modules`` as the docs build
(``compperf_docs.execute.gallery.gallery_conf``) through sphinx-gallery's own ``clean_modules``,
so a chapter run here sees exactly the state handover that the gallery build gives it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import traceback
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot: an example's plt.show() must not open a window

import matplotlib.pyplot as plt
from sphinx_gallery.scrapers import clean_modules

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from compperf_docs.execute import gallery
from compperf_docs.execute.gallery import gallery_conf


def _reset_conf() -> dict:
    """The docs build's gallery configuration, reduced to what clean_modules reads."""
    conf = gallery_conf(ROOT / "docs", ROOT / "examples", [])
    return {key: conf[key] for key in ("reset_modules", "reset_modules_order")}


def _evaluate(probe: str, namespace: dict) -> tuple[object, str | None]:
    """A probe's JSON value, or the error it raised."""
    try:
        return json.loads(json.dumps(eval(probe, namespace), default=str)), None
    except Exception:  # noqa: BLE001 (reported with the example's result)
        return None, "the probe failed:\n" + traceback.format_exc()


def run_one(
    path: Path, probe: str, workdir: Path, conf: dict, probes: list[str] | None = None
) -> dict:
    """Run one example as ``__main__`` in ``workdir``; return stdout, error, probe value,
    the value (or error) of each of ``probes``, the messages it made and its run's account.

    The verdicts a probe makes (``comparison.faster(...)``) stay out of the account: it
    holds what the example decided, as in the docs build.
    """
    from compperf import i18n, verdicts

    order = conf["reset_modules_order"]
    if order in ("before", "both"):
        clean_modules(conf, str(path), "before")
    plt.close("all")
    workdir.mkdir(parents=True, exist_ok=True)
    stdout = io.StringIO()
    namespace: dict = {}
    error = None
    cwd = Path.cwd()
    os.chdir(workdir)  # whatever an example writes to its folder stays out of the repo
    try:
        with contextlib.redirect_stdout(stdout):
            namespace = runpy.run_path(str(path), run_name="__main__")
    except BaseException:  # noqa: BLE001 (reported; the next example still runs)
        error = traceback.format_exc()
    finally:
        os.chdir(cwd)
    value, values = None, []
    decided = len(verdicts._recorded or [])  # what the example decided, before any probe
    if error is None:
        namespace["plt"] = plt
        value, error = _evaluate(probe, namespace)
        values = [
            dict(zip(("value", "error"), _evaluate(p, namespace), strict=True))
            for p in probes or []
        ]
    records = json.loads(json.dumps(i18n.stop_recording(), default=str))
    if verdicts._recorded is not None:
        del verdicts._recorded[decided:]
    if order in ("after", "both"):
        clean_modules(conf, str(path), "after")
    run = json.loads(json.dumps(gallery.last_run, default=str))
    return {
        "stdout": stdout.getvalue(),
        "error": error,
        "probe": value,
        "probes": values,
        "records": records,
        "run": run,
    }


def main(spec_path: str, result_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    workdir = Path(spec["workdir"])
    conf = _reset_conf()
    results = {}
    for entry in spec["examples"]:
        path = Path(entry["path"])
        results[path.name] = run_one(
            path, entry["probe"], workdir / path.stem, conf, entry.get("probes")
        )
    Path(result_path).write_text(json.dumps(results), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
