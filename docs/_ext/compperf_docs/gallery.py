"""sphinx-gallery settings shared by the site and its tiny test build."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

__all__ = [
    "NOTEBOOK_EXTRAS",
    "first_notebook_cell",
    "forget_outputs_made_for_another_cell",
    "gallery_conf",
    "reset_state",
]

# What a downloaded notebook needs beyond torch and Jupyter (compperf comes from the site).
NOTEBOOK_EXTRAS = ("matplotlib", "graphviz")


def first_notebook_cell(wheel_url: str) -> str:
    """The first cell of every downloaded notebook; it never runs during the docs build."""
    return (
        "# Installs what this notebook needs besides torch and Jupyter: compperf (from\n"
        "# the site that published this notebook) and plotting helpers. Install torch\n"
        "# first, in the build that fits your machine (CPU, CUDA or Apple MPS).\n"
        "# Optional: Graphviz's `dot` program draws the graphs (apt-get or brew install\n"
        "# graphviz), and torch.compile on a CPU needs a C++ compiler; without them the\n"
        "# examples say what is missing and carry on.\n"
        f"%pip install --quiet {wheel_url} {' '.join(NOTEBOOK_EXTRAS)}"
    )


# Remembers, in each gallery folder, the first notebook cell its notebooks were written with.
_CELL_STAMP = ".first_notebook_cell"


def forget_outputs_made_for_another_cell(app: Sphinx) -> None:
    """Make sphinx-gallery run an example again when its notebook's first cell changed.

    sphinx-gallery rewrites an example's notebook and zip only when the example's source
    changes, so a build for another ``COMPPERF_SITE_URL`` would otherwise publish
    notebooks that install compperf from the old address. Deleting the md5 stamps of
    such a gallery folder makes its examples run (and their downloads be written) again.
    """
    conf = app.config.sphinx_gallery_conf
    cell = conf.get("first_notebook_cell") or ""
    for folder in map(Path, conf.get("gallery_dirs", [])):
        stamp = folder / _CELL_STAMP
        if stamp.is_file() and stamp.read_text(encoding="utf-8") != cell:
            logger.info("first notebook cell changed: %s runs its examples again", folder)
            for md5 in folder.glob("*.md5"):
                md5.unlink()
        if folder.is_dir():
            stamp.write_text(cell, encoding="utf-8")


# The process-wide settings an example may change, as they were before the first one ran.
_INITIAL: dict[str, object] = {}
# The warning filters around the example that is running (entered before, left after).
_WARNINGS: list[warnings.catch_warnings] = []


def reset_state(gallery_conf: dict, fname: str | None, when: str) -> None:
    """Give each example the state that a fresh ``python plot_x.py`` would see.

    All examples of a build run in one process. Without this, one example's compiled
    graphs, Dynamo statistics (``torch.compiler.reset()`` keeps
    ``torch._dynamo.utils.counters``), seed, default dtype or device, thread count, warning
    filters and already-shown warnings would change what the next one prints. Modules an
    earlier example imported stay imported, so a page that times a "first call" must keep
    import time out of it. sphinx-gallery calls this before and after every example
    (``reset_modules_order="both"``).
    """
    if when == "after":
        while _WARNINGS:  # restores the filters and forgets which warnings were shown
            _WARNINGS.pop().__exit__(None, None, None)
        return
    context = warnings.catch_warnings()
    context.__enter__()
    _WARNINGS.append(context)
    torch = sys.modules.get("torch")
    if torch is None:  # nothing to reset, and importing torch here would cost seconds
        return
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float32)
    torch.set_default_device(None)
    torch.set_num_threads(_INITIAL.setdefault("threads", torch.get_num_threads()))
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None:
        dynamo.reset()
        dynamo.utils.counters.clear()


def gallery_conf(
    docs_dir: Path,
    examples_dir: Path,
    chapters: Sequence[str],
    *,
    wheel_url: str,
    gallery_root: str = "auto_examples",
) -> dict[str, object]:
    """``sphinx_gallery_conf`` for one gallery per chapter.

    Parameters
    ----------
    docs_dir : Path
        The Sphinx source folder (where ``conf.py`` is).
    examples_dir : Path
        Holds one folder per chapter, each with ``GALLERY_HEADER.rst`` and ``plot_*.py``.
    chapters : sequence of str
        Chapter folder names, in reading order.
    wheel_url : str
        Absolute URL of the compperf wheel that downloaded notebooks install.
    gallery_root : str
        Folder under ``docs_dir`` that receives the generated pages.

    Raises
    ------
    FileNotFoundError
        If a chapter folder or its ``GALLERY_HEADER.rst`` is missing.
    """
    for chapter in chapters:
        header = examples_dir / chapter / "GALLERY_HEADER.rst"
        if not header.is_file():
            raise FileNotFoundError(
                f"chapter {chapter!r} has no gallery header: {header} is missing"
            )
    return {
        "examples_dirs": [str(examples_dir / chapter) for chapter in chapters],
        "gallery_dirs": [str(docs_dir / gallery_root / chapter) for chapter in chapters],
        # Every plot_*.py is executed; other files are shown as code only.
        "filename_pattern": r"/plot_",
        "within_subsection_order": "FileNameSortKey",
        "first_notebook_cell": first_notebook_cell(wheel_url),
        "remove_config_comments": True,
        "reset_modules": ("matplotlib", "compperf_docs.gallery.reset_state"),
        "reset_modules_order": "both",
        "capture_repr": ("_repr_html_", "__repr__"),
        "image_scrapers": ("matplotlib",),
        # A failing example fails the build; the summary names its file.
        "abort_on_example_error": False,
        "only_warn_on_example_error": False,
        "download_all_examples": True,
        # memory_profiler is not installed (the option would warn) and joblib gained
        # nothing on two cores.
        "show_memory": False,
        "parallel": False,
        "min_reported_time": 0,
        "show_signature": False,
        # The execution-times pages load jQuery and DataTables from CDNs, which an offline
        # reader cannot reach; each page states its own running time instead.
        "write_computation_times": False,
    }
