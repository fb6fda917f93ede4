"""Check that every executed example page says which machine produced its outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinx.util import logging

from compperf_docs import shards

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["PROVENANCE_MARKER", "check_example_page"]

logger = logging.getLogger(__name__)

# How str(compperf.environment()) begins; examples print it in their first cell.
PROVENANCE_MARKER = "Measured on "
# sphinx-gallery marks every example page's title this way, and no other page.
_EXAMPLE_PAGE_SIGN = ".. rst-class:: sphx-glr-example-title"


def _executed(app: Sphinx) -> bool:
    value = app.config.sphinx_gallery_conf.get("plot_gallery", True)
    return str(value).strip().lower() not in ("0", "false", "no", "off")


def check_example_page(app: Sphinx, docname: str, source: list[str]) -> None:
    """Warn (an error under ``-W``) when an executed example page shows no provenance."""
    text = source[0]
    if _EXAMPLE_PAGE_SIGN not in text or not _executed(app):
        return
    if not shards.executes_chapter(app.config, docname):
        return  # another shard executes it; shards.restrict_execution says which
    if PROVENANCE_MARKER not in text:
        logger.warning(
            "example page shows no provenance: its output lacks %r; print "
            "compperf.environment() in the example's first cell",
            PROVENANCE_MARKER,
            location=docname,
            type="compperf",
            subtype="provenance",
        )
