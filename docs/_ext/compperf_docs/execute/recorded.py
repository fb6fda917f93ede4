"""What an executed example leaves for the other languages: its messages and its figures.

The English build executes every example once. While one runs, compperf records each
message it prints or draws (:mod:`compperf.i18n`); afterwards
:func:`compperf_docs.execute.gallery.reset_state` writes them beside the generated page::

    auto_examples/<chapter>/<stem>.messages.json
        {"example": "examples/<chapter>/<stem>.py", "records": [...]}

and the figure scraper (:func:`compperf_docs.languages.figures.scraper`) pickles each figure beside
its PNG (``images/sphx_glr_<stem>_NNN.pickle``). The other languages render the page's
printed sentences and figures from these files and execute nothing. The same reset also
watches the machine while the example runs and keeps the verdicts it makes
(:mod:`compperf.verdicts`)::

    auto_examples/<chapter>/<stem>.verdicts.json
        {"example": ..., "seconds": 12.3, "disturbance": Disturbance.record(),
         "message": <record of str(disturbance)>, "verdicts": [Verdict.record(), ...]}

(:mod:`compperf_docs.execute.disturbed` shows it on the page, the about page and in the log).
The account also names the versions of the packages that made the outputs
(``"versions"``: torch, matplotlib, compperf, sphinx-gallery; :data:`VERSIONED`). A
sharded build counts all of them among an example's outputs (:func:`outputs_complete`),
and outputs made with other versions are not current (:func:`outputs_problem`): a merge
refuses them and a build of the first language runs the example again.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MESSAGES_SUFFIX",
    "RUN_SUFFIX",
    "Recorded",
    "figure_paths",
    "forget",
    "load",
    "load_run",
    "messages_path",
    "outputs_complete",
    "outputs_problem",
    "pickle_path",
    "records_in",
    "run_path",
    "versions",
    "write",
    "write_run",
]

MESSAGES_SUFFIX = ".messages.json"
RUN_SUFFIX = ".verdicts.json"
# sphinx-gallery's reST for a figure: ".. image-sg:: /auto_examples/<chapter>/images/x.png".
_IMAGE_SG = re.compile(r"^\s*\.\. image-sg:: (\S+\.png)\s*$", re.MULTILINE)


def messages_path(gallery: Path, stem: str) -> Path:
    """``<gallery>/<stem>.messages.json``."""
    return gallery / f"{stem}{MESSAGES_SUFFIX}"


def run_path(gallery: Path, stem: str) -> Path:
    """``<gallery>/<stem>.verdicts.json``: the run's disturbance and verdicts."""
    return gallery / f"{stem}{RUN_SUFFIX}"


# The packages whose versions decide what an executed example's outputs hold: its code's
# results (torch, compperf), its figures and their pickles (matplotlib) and its page
# (sphinx-gallery).
VERSIONED = ("torch", "matplotlib", "compperf", "sphinx-gallery")


def versions() -> dict[str, str | None]:
    """The installed version of each package of :data:`VERSIONED` (None: not installed)."""
    found: dict[str, str | None] = {}
    for name in VERSIONED:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def write_run(gallery: Path, stem: str, example: str, run: Mapping[str, Any]) -> Path:
    """Write an example's run account (:data:`compperf_docs.execute.gallery.last_run`), with the
    versions of the packages that made its outputs (:func:`versions`)."""
    path = run_path(gallery, stem)
    record = {"example": example, **run, "versions": versions()}
    text = json.dumps(record, ensure_ascii=False, indent=1)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def load_run(gallery: Path, stem: str) -> dict[str, Any] | None:
    """The example's run account, or None when it has none (or an unreadable one)."""
    path = run_path(gallery, stem)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("disturbance"), dict):
        return None
    return data


def forget(gallery: Path, stem: str) -> None:
    """Delete the example's messages and run account, if it has them.

    Called as the example starts running: sphinx-gallery writes its md5 stamp before the
    new records are written, so a build stopped in between would otherwise leave new
    figures beside old records, all looking current. Without records the example runs
    again (:func:`outputs_problem`).
    """
    messages_path(gallery, stem).unlink(missing_ok=True)
    run_path(gallery, stem).unlink(missing_ok=True)


def pickle_path(png: Path) -> Path:
    """Where the figure drawn into ``png`` is pickled: the same name, ``.pickle``."""
    return png.with_suffix(".pickle")


def write(gallery: Path, stem: str, example: str, records: list[dict[str, Any]]) -> Path:
    """Write an example's records; ``example`` is its path from the repository root."""
    path = messages_path(gallery, stem)
    text = json.dumps({"example": example, "records": records}, ensure_ascii=False, indent=1)
    path.write_text(text + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Recorded:
    """The sidecar of one executed example.

    Attributes
    ----------
    example : str
        The example's source, from the repository root (``examples/<chapter>/<stem>.py``).
    records : list of dict
        Every message it made, in order (:attr:`compperf.i18n.Text.record`).
    path : Path
        The sidecar file.
    """

    example: str
    records: list[dict[str, Any]]
    path: Path


def load(gallery: Path, stem: str) -> Recorded | None:
    """The example's sidecar, or None when it has none (it never ran here)."""
    path = messages_path(gallery, stem)
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return Recorded(example=data["example"], records=data["records"], path=path)


def records_in(records: list[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Every record and, after it, each record nested in its values."""
    for record in records:
        yield record
        nested = [v for v in record.get("values", {}).values() if isinstance(v, Mapping)]
        yield from records_in(nested)


def figure_paths(srcdir: Path, page: Path) -> list[Path]:
    """The figure PNGs that a generated example page (``<stem>.rst``) shows, in order."""
    if not page.is_file():
        return []
    text = page.read_text(encoding="utf-8")
    return [srcdir / uri.lstrip("/") for uri in _IMAGE_SG.findall(text)]


def outputs_complete(srcdir: Path, gallery: Path, stem: str) -> bool:
    """Whether an executed example's page has its sidecars and a pickle for each figure,
    all made with the versions of the packages installed now."""
    return outputs_problem(srcdir, gallery, stem) is None


def outputs_problem(srcdir: Path, gallery: Path, stem: str) -> str | None:
    """What makes an executed example's outputs unusable here, or None when nothing does:
    a missing sidecar or figure pickle, or outputs made with other package versions."""
    if not messages_path(gallery, stem).is_file() or not run_path(gallery, stem).is_file():
        return "no recorded messages or run account"
    if not all(pickle_path(png).is_file() for png in figure_paths(srcdir, gallery / f"{stem}.rst")):
        return "a figure has no pickle"
    run = load_run(gallery, stem) or {}
    made = run.get("versions")
    if not isinstance(made, dict):
        return "its outputs do not record the package versions that made them"
    now = versions()
    changed = [
        f"{name} {made.get(name)} (installed: {now[name]})"
        for name in VERSIONED
        if made.get(name) != now[name]
    ]
    return f"its outputs were made with {', '.join(changed)}" if changed else None
