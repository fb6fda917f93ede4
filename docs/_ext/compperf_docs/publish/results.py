"""Results from several machines, side by side: the ``compperf-results`` directive.

A results record (``compperf-results/1``, described in :mod:`compperf.records`) holds one
machine's key figures for each example it ran. The build reads every record in the
repository's ``results/`` folder (``results/<machine>.json``; nothing executes) and makes
one more from its own examples' ``<stem>.figures.json`` (:mod:`compperf_docs.publish.published`),
written to ``<html folder of the language>/results-record.json`` for a maintainer to
copy into ``results/``.

``.. compperf-results:: <chapter>`` (in ``docs/results/<chapter>.md``) renders, for the
chapter's examples, one table per example: a row per key figure, a column per machine
(this build first), and above them a table naming each machine (device, torch, source,
date). The pages are read again on every build, as the records may have changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from compperf_docs.publish.site import N_

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

__all__ = [
    "BUILD_RECORD",
    "ResultsTable",
    "build_record",
    "figure_label",
    "machine_records",
    "setup",
]

logger = logging.getLogger(__name__)

BUILD_RECORD = "results-record.json"
RESULTS_FOLDER = "results"

THIS_BUILD = N_("this build")
NO_FIGURES = N_("No machine has key figures for this chapter yet.")
HEADERS = {
    "machine": N_("Machine"),
    "device": N_("Device"),
    "torch": N_("PyTorch"),
    "source": N_("Made by"),
    "made": N_("Date"),
    "figure": N_("Key figure"),
}
# A record's source, as the page shows it.
SOURCES = {
    "docs build": N_("docs build"),
    "chapter_run": N_("GPU chapter run"),
    "learner": N_("a learner's run"),
}


def _root(app: Sphinx) -> Path:
    return Path(app.srcdir).parent


def build_record(app: Sphinx) -> dict[str, Any] | None:
    """This build's own results record, from its examples' ``<stem>.figures.json``."""
    from compperf import records
    from compperf_docs.publish import published

    made = []
    for gallery in map(Path, app.config.sphinx_gallery_conf.get("gallery_dirs", [])):
        for path in sorted(gallery.glob(f"plot_*{published.FIGURES_SUFFIX}")):
            try:
                made.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                logger.warning("%s: unreadable key figures", path, type="compperf")
    if not made:
        return None
    record = records.results_record(made, source="docs build")
    return record


def machine_records(app: Sphinx) -> list[tuple[str, dict[str, Any]]]:
    """(column title, record): this build's first, then ``results/*.json`` by file name.

    Titles are in the build's language (:func:`machine_title`).
    """
    from sphinx.locale import _

    from compperf import records

    language = app.config.language or "en"
    found = []
    own = build_record(app)
    if own is not None:
        found.append((f"{_(THIS_BUILD)}: {machine_title(own, language)}", own))
    for path in sorted((_root(app) / RESULTS_FOLDER).glob("*.json")):
        try:
            record = records.read_record(path)
        except ValueError as error:
            logger.warning("%s", error, type="compperf", subtype="results")
            continue
        found.append((machine_title(record, language), record))
    return found


def _shown(figure: dict[str, Any] | None, language: str) -> str:
    from compperf import i18n, numerals
    from compperf.timing import format_time

    if figure is None:
        return "–"
    if figure["kind"] == "time":
        return i18n.render(format_time(figure["value"]).record, language)
    outcome = i18n.render(i18n.tr(figure.get("outcome", "unclear")).record, language)
    value = numerals.localize(format(figure["value"], ".3g"), figure["value"], language)
    return f"{value} ({outcome})"


def machine_title(record: dict[str, Any], language: str) -> str:
    """A record's column title in ``language``: its thread count in the reader's words.

    A title the record was given by hand (``--name``) is shown as it is.
    """
    from compperf import i18n, records

    environment, name = record["environment"], record["name"]
    threads = environment.get("num_threads")
    suffix = f", {threads} threads"
    if name != records.machine_name(environment) or not name.endswith(suffix):
        return name
    counted = i18n.tr_plural("{n} thread", "{n} threads", int(threads))
    return f"{name.removesuffix(suffix)}, {i18n.render(counted.record, language)}"


def _table(header: list[nodes.Node], rows: list[list[nodes.Node]]) -> nodes.table:
    table = nodes.table(classes=["compperf-results"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    for row_cells in [header]:
        row = nodes.row()
        for cell in row_cells:
            row += nodes.entry("", nodes.paragraph("", "", cell))
        head += row
    body = nodes.tbody()
    group += body
    for row_cells in rows:
        row = nodes.row()
        for cell in row_cells:
            row += nodes.entry("", nodes.paragraph("", "", cell))
        body += row
    return table


def _text(text: str) -> nodes.Text:
    return nodes.Text(text)


class ResultsTable(SphinxDirective):
    """``.. compperf-results:: <chapter>``: the chapter's key figures, one column per machine."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        from sphinx.locale import _

        from compperf import records

        if self.env.app.builder.name == "gettext":
            return []  # the tables are data and UI messages (sphinx.po), not page prose
        chapter = self.arguments[0]
        language = self.config.language
        machines = machine_records(self.env.app)
        prefix = f"{chapter}/"
        examples = sorted(
            {
                name
                for _title, record in machines
                for name in record["examples"]
                if name.startswith(prefix)
            }
        )
        if not examples:
            return [nodes.paragraph("", _(NO_FIGURES))]
        keys = ("machine", "device", "torch", "source", "made")
        overview = _table(
            [_text(_(HEADERS[key])) for key in keys],
            [
                [
                    _text(title),
                    nodes.literal(
                        "",
                        f"{record['environment'].get('device')} "
                        f"({record['environment'].get('device_name')})",
                    ),
                    nodes.literal("", str(record["environment"].get("torch"))),
                    _text(_(SOURCES.get(record.get("source", ""), record.get("source", "")))),
                    _text(str(record.get("made", ""))[:10]),
                ]
                for title, record in machines
            ],
        )
        made: list[nodes.Node] = [overview]
        for example in examples:
            columns = [r["examples"].get(example, {}).get("figures", []) for _t, r in machines]
            if not any(columns):
                continue  # an example that measures and concludes nothing
            section = nodes.rubric()
            reference = addnodes.pending_xref(
                "",
                nodes.inline("", example),
                refdomain="std",
                reftype="doc",
                reftarget=f"/auto_examples/{example}",
                refexplicit=False,
                refwarn=True,
            )
            section += reference
            made.append(section)
            # One row per figure on any device (records.comparable: "…: cpu" is "…: cuda:0").
            ordered = []
            for figures in columns:
                for figure in figures:
                    if records.comparable(figure["key"]) not in ordered:
                        ordered.append(records.comparable(figure["key"]))
            by_key = [
                {records.comparable(figure["key"]): figure for figure in figures}
                for figures in columns
            ]
            rows = [
                [nodes.literal("", self._label(key, example))]
                + [_text(_shown(found.get(key), language)) for found in by_key]
                for key in ordered
            ]
            made.append(
                _table([_text(_(HEADERS["figure"]))] + [_text(t) for t, _r in machines], rows)
            )
        return made

    def _label(self, key: str, example: str) -> str:
        """``key`` in the page's language (:func:`figure_label`); a key with no translation
        is shown in English and warned about (the build fails under ``-W``)."""
        from compperf import i18n

        try:
            return figure_label(key, example, self.config.language or "en")
        except i18n.MissingTranslation as error:
            if example.split("/")[0] in LABELS_NOT_YET_TRANSLATED:
                logger.info("%s (%s): not yet translated (issue 26)", error, example)
                return key
            logger.warning(
                "%s (%s): translate its messages in the example's catalog or compperf's",
                error,
                example,
                type="compperf",
                subtype="untranslated-figure",
                location=(self.env.docname, self.lineno),
            )
            return key


# Chapters whose pages still give conclude() and measure() plain-English subjects, so that
# their key figures have no msgid to be read back through. None since every page makes
# its subjects with compperf.tr or names them by their code: a key without a translation
# fails the build like any other. A new chapter written before its translations may
# stand here until they are done.
LABELS_NOT_YET_TRANSLATED: frozenset[str] = frozenset()


def figure_label(key: str, example: str, language: str) -> str:
    """A row's key figure in ``language``: read through ``example``'s catalog and compperf's
    (:func:`compperf.records.label`). Raises ``MissingTranslation`` when a part has none."""
    from compperf import records

    return records.label(key, language, example, strict=True)


def read_again(
    app: Sphinx, env: BuildEnvironment, added: set, changed: set, removed: set
) -> list[str]:
    """The Results pages are read on every build: the records may have changed."""
    return [name for name in env.found_docs if name.startswith(f"{RESULTS_FOLDER}/")]


def write_build_record(app: Sphinx, exception: Exception | None) -> None:
    """Write this build's own record beside its pages (``results-record.json``)."""
    if exception is not None or app.builder.format != "html":
        return
    record = build_record(app)
    if record is not None:
        Path(app.outdir, BUILD_RECORD).write_text(
            json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )


def setup(app: Sphinx) -> None:
    """Register the directive and the build's record (called from :func:`compperf_docs.setup`)."""
    app.add_directive("compperf-results", ResultsTable)
    app.connect("env-get-outdated", read_again)
    app.connect("build-finished", write_build_record)
