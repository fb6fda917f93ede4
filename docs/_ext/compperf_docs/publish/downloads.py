"""What a reader downloads is what the page shows: no hidden lines in the ``.py`` files.

sphinx-gallery hides the lines between ``# sphinx_gallery_start_ignore`` and
``# sphinx_gallery_end_ignore`` from the page and the notebook, but publishes the
example's source as is for the ``.py`` download and the zips (sphinx-gallery 0.22). The
examples keep only test scaffolding there (``COMPPERF_FAST``), which a reader must not
have to read or run. After sphinx-gallery has written its folders, this removes those
blocks from the published copies, with sphinx-gallery's own ``remove_ignore_blocks``,
and writes the zips again. The sources in ``examples/`` and the md5 stamps stay as they
are, so nothing executes again; the copies keep their source's modification time and
a zip is rewritten only when it still holds hidden lines, so Sphinx sees no changed
download and a rebuild with nothing changed rewrites no page.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging
from sphinx_gallery.downloads import generate_zipfiles
from sphinx_gallery.py_source_parser import remove_ignore_blocks

from compperf_docs import workarounds

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["strip_hidden_lines"]

logger = logging.getLogger(__name__)

_NAME = "hidden-lines-in-downloads"


def _member(path: Path, name: str) -> str | None:
    with zipfile.ZipFile(path) as archive:
        return archive.read(name).decode("utf-8") if name in archive.namelist() else None


def strip_hidden_lines(app: Sphinx) -> None:
    """Remove ignore blocks from each gallery folder's ``.py`` copies and their zips."""
    conf = app.config.sphinx_gallery_conf
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        folder = Path(gallery)
        changed = False
        for source in sorted(Path(examples).glob("*.py")):
            copy = folder / source.name
            if not copy.is_file():  # sphinx-gallery copies every source, executed or not
                workarounds.slipped(_NAME, f"sphinx-gallery wrote no {copy}")
                continue
            text = copy.read_text(encoding="utf-8")
            visible = remove_ignore_blocks(text)
            if visible == text:
                continue
            copy.write_text(visible, encoding="utf-8")
            stat = source.stat()  # sphinx-gallery's fresh copy would look like a change
            os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            changed = True
            example_zip = copy.with_suffix(".zip")
            if example_zip.is_file() and _member(example_zip, copy.name) != visible:
                workarounds.rewrite_zip_member(example_zip, copy.name, visible, _NAME)
        if changed:
            generate_zipfiles(folder, app.srcdir, conf)  # the chapter's "download all"
            logger.info("compperf: hidden lines removed from the downloads of %s", folder)
