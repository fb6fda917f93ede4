"""How disturbed each example's run was: on its page, on the about page, in the build log.

While the English build executes an example, :func:`compperf_docs.execute.gallery.reset_state`
watches the machine (:func:`compperf.watch`) and keeps the verdicts the example makes;
:mod:`compperf_docs.execute.recorded` writes both to ``<stem>.verdicts.json`` beside the page.
From that file, in every language (the zh_CN and ru builds execute nothing):

- :class:`RunLine` adds a line after the page's running time: the machine's account of
  the run (CPU steal, CPU pressure, reference probe drift), rendered in the page's
  language from the recorded message;
- :class:`ExampleRuns` (the ``compperf-runs`` directive) lists every example with its
  running time, the account and its verdicts' outcomes (the about page);
- :func:`list_disturbed` names the disturbed examples at the end of the English build,
  as information: a disturbed machine is a fact about the run, not an error (``-W``
  stays green); each page says itself which of its conclusions stayed unclear.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from compperf_docs import order, shards
from compperf_docs.execute import recorded
from compperf_docs.languages import i18n

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

__all__ = ["ExampleRuns", "RunLine", "account", "example_runs", "list_disturbed"]

logger = logging.getLogger(__name__)

_TIMING_CLASS = "sphx-glr-timing"


def account(run: Mapping[str, Any], language: str) -> str:
    """The recorded account of a run (``str(Disturbance)``), in ``language``.

    A message without a translation shows in English (``pytest tests/i18n`` keeps
    compperf's catalogs complete); a record that cannot be rendered falls back to the
    bare reasons.
    """
    from compperf import i18n as compperf_i18n

    message = run.get("message")
    if isinstance(message, Mapping):
        try:
            return compperf_i18n.render(message, language)
        except (KeyError, ValueError, IndexError):
            pass
    reasons = run.get("disturbance", {}).get("reasons") or []
    return ", ".join(reasons) if reasons else _("quiet")


def _outcomes(run: Mapping[str, Any]) -> str:
    counts = Counter(v.get("outcome") for v in run.get("verdicts", []))
    return _("{yes} yes, {no} no, {unclear} unclear").format(
        yes=counts["yes"], no=counts["no"], unclear=counts["unclear"]
    )


def example_runs(config: Config) -> Iterator[tuple[Path, str, dict[str, Any] | None]]:
    """(gallery folder, stem, run account or None) for every example, in gallery order."""
    conf = config.sphinx_gallery_conf
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        for source in sorted(Path(examples).glob("plot_*.py")):
            yield Path(gallery), source.stem, recorded.load_run(Path(gallery), source.stem)


class RunLine(SphinxTransform):
    """After an example page's running time, say how disturbed the machine was."""

    default_priority = order.RUN_LINE

    def apply(self, **kwargs: Any) -> None:
        if not self.env.docname.startswith(f"{shards.GALLERY_ROOT}/"):
            return
        source = Path(self.document["source"])
        run = recorded.load_run(source.parent, source.stem)
        self.env.note_dependency(str(recorded.run_path(source.parent, source.stem)))
        if run is None:
            return
        for timing in list(self.document.findall(nodes.paragraph)):
            if _TIMING_CLASS not in timing.get("classes", []):
                continue
            label = _("The machine during this run:")
            text = " " + account(run, self.config.language)
            line = nodes.paragraph("", "", nodes.strong(label, label), nodes.Text(text))
            line["classes"].append("compperf-run")
            line["translatable"] = False
            timing.parent.insert(timing.parent.index(timing) + 1, line)
            return


class ExampleRuns(SphinxDirective):
    """``compperf-runs``: a table of every example's running time, account and verdicts."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        i18n.note_ui_catalog(self.env)
        header = [_("Example"), _("Running time"), _("The machine during the run"),
                  _("Verdicts")]  # fmt: skip
        rows = []
        for gallery, stem, run in example_runs(self.config):
            self.env.note_dependency(str(recorded.run_path(gallery, stem)))
            chapter = gallery.name
            page = addnodes.pending_xref(
                "", nodes.inline("", f"{chapter}/{stem}"), refdomain="std", reftype="doc",
                reftarget=f"/{shards.GALLERY_ROOT}/{chapter}/{stem}", refexplicit=False,
            )  # fmt: skip
            if run is None:
                cells = [_("not run in this build"), "", ""]
            else:
                seconds = _("{seconds:.1f} s").format(seconds=float(run.get("seconds", 0)))
                cells = [seconds, account(run, self.config.language), _outcomes(run)]
            rows.append([page, *cells])
        return [_table(header, rows)]


def _table(header: list[str], rows: list[list[Any]]) -> nodes.table:
    table = nodes.table(classes=["compperf-runs"])
    group = nodes.tgroup(cols=len(header))
    table += group
    group += [nodes.colspec(colwidth=1) for _ in header]

    def row(cells: list[Any]) -> nodes.row:
        made = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            paragraph = nodes.paragraph()
            paragraph += cell if isinstance(cell, nodes.Node) else nodes.Text(str(cell))
            paragraph["translatable"] = False
            entry += paragraph
            made += entry
        return made

    head = nodes.thead()
    head += row(header)
    body = nodes.tbody()
    body += [row(cells) for cells in rows]
    group += [head, body]
    return table


def list_disturbed(app: Sphinx, exception: Exception | None) -> None:
    """At the end of the English build, name each example that ran on a disturbed machine.

    Information, not a warning: the build stays green under ``-W``; the pages say which
    of their verdicts stayed unclear.
    """
    if exception is not None or app.config.language != "en":
        return
    runs = [(c, s, r) for c, s, r in example_runs(app.config) if r is not None]
    disturbed = [(c, s, r) for c, s, r in runs if r["disturbance"].get("disturbed")]
    logger.info(
        "compperf: %d of %d recorded example runs were disturbed%s",
        len(disturbed),
        len(runs),
        ":" if disturbed else "",
    )
    for gallery, stem, run in disturbed:
        unclear = sum(v.get("outcome") == "unclear" for v in run.get("verdicts", []))
        logger.info(
            "compperf: disturbed: %s/%s (%s; %d unclear verdicts of %d): %s",
            gallery.name,
            stem,
            ", ".join(run["disturbance"].get("reasons", [])),
            unclear,
            len(run.get("verdicts", [])),
            account(run, "en"),
        )


def setup(app: Sphinx) -> None:
    """Wire this module's transform, directive and log (called by compperf_docs.execute.setup)."""
    app.add_transform(RunLine)
    app.add_directive("compperf-runs", ExampleRuns)
    app.connect("build-finished", list_disturbed)
