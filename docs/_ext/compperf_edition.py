"""The ``compperf-edition`` directive: which machine ran this edition's examples.

The home page says where its numbers come from without anyone typing it in: the
directive reads the provenance line that every example printed first (recorded by the
English build in ``auto_examples/<chapter>/<stem>.messages.json``, see
``compperf_docs.execute.recorded``) and writes one item per distinct machine: device, its name,
the PyTorch build, Python and the platform. Only names and versions, so the item reads
the same in every language. When the examples of one edition ran on more than one
machine (a sharded build), each item names the chapters that ran there. An example
without records (not executed yet) is left out; with none at all the directive writes
nothing and the build log says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

# How the provenance message begins (compperf.environment(); compperf_docs.execute.provenance).
_PROVENANCE = "Measured on "
_GALLERY = "auto_examples"


def machines(srcdir: Path) -> dict[tuple[str, ...], list[str]]:
    """``{(device, name, torch, python, platform): [chapter, ...]}`` from the records."""
    found: dict[tuple[str, ...], list[str]] = {}
    for path in sorted((srcdir / _GALLERY).glob("*/*.messages.json")):
        try:
            records = json.loads(path.read_text(encoding="utf-8")).get("records", [])
        except (OSError, ValueError):
            continue
        for record in records:
            if not str(record.get("message", "")).startswith(_PROVENANCE):
                continue
            values = record.get("values", {})
            key = tuple(
                str(values.get(name, "?"))
                for name in ("device", "device_name", "libraries", "python", "platform")
            )
            chapters = found.setdefault(key, [])
            if path.parent.name not in chapters:
                chapters.append(path.parent.name)
            break
    return found


class Edition(SphinxDirective):
    """One bullet per machine that ran examples of this build."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(__file__)
        self.env.metadata[self.env.docname]["compperf_edition"] = True
        found = machines(Path(self.env.srcdir))
        if not found:
            logger.info("compperf-edition: no example has recorded its machine yet")
            return []
        items = nodes.bullet_list(classes=["compperf-edition"])
        for (device, name, torch, python, platform), chapters in found.items():
            paragraph = nodes.paragraph()
            paragraph += nodes.literal(text=device)
            paragraph += nodes.Text(f" ({name}), {torch}, Python {python}, {platform}")
            if len(found) > 1:
                paragraph += nodes.Text(": ")
                for i, chapter in enumerate(chapters):
                    if i:
                        paragraph += nodes.Text(", ")
                    ref = addnodes.pending_xref(
                        "",
                        refdomain="std",
                        reftype="doc",
                        reftarget=f"/{_GALLERY}/{chapter}/index",
                        refexplicit=False,
                        refdoc=self.env.docname,
                    )
                    ref += nodes.inline(text=chapter)
                    paragraph += ref
            items += nodes.list_item("", paragraph)
        return [items]


def _always_outdated(app: Sphinx, env, added, changed, removed) -> list[str]:
    """The pages that show the edition are read again: records change without a source edit."""
    return [name for name, meta in env.metadata.items() if meta.get("compperf_edition")]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("compperf-edition", Edition)
    app.connect("env-get-outdated", _always_outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
