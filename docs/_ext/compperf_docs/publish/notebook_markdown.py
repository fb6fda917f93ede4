"""Notebook cells in Markdown: how sphinx-gallery's pandoc conversion is set up for the site.

sphinx-gallery writes each text block of an example into a downloaded notebook. Its own
converter leaves most Sphinx markup as it is (``:func:`` roles, ``.. list-table::``); with
``"pypandoc"`` it runs pandoc (shipped by the ``pypandoc-binary`` wheel) on each block.
Two small Lua programs beside this module finish the job: ``pandoc/rst_sections.lua``
reads each block with section levels from the adornment characters (each block is
converted alone), and ``pandoc/notebook_markdown.lua`` turns roles into code spans or
links and admonitions into quotes or folded ``<details>``. The output is GitHub-flavoured
Markdown, which Jupyter renders (pipe tables, ``$math$``, raw HTML).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
from pathlib import Path

from docutils.nodes import make_id

__all__ = [
    "FILTER",
    "READER",
    "link_targets",
    "pandoc_options",
    "pandoc_version",
    "use_pinned_pandoc",
]

# compperf_docs/pandoc/, shared with languages/language_notebooks.py. The paths are part of
# the notebook conversion recipe (execute/gallery.py): moved, every example would run again.
_HERE = Path(__file__).resolve().parents[1] / "pandoc"
READER = _HERE / "rst_sections.lua"
FILTER = _HERE / "notebook_markdown.lua"
# GitHub-flavoured Markdown, with $math$ (what Jupyter's MathJax reads) instead of
# GitHub's $`math`$.
_MARKDOWN = "gfm-tex_math_gfm"
# Folders of the Sphinx sources that hold no page of their own.
_NOT_PAGES = {"_build", "_ext", "_static", "_templates", "auto_examples", "locales"}

# MyST: "(label)=" above a "# Title"; reST: ".. _label:" above "Title" and its underline.
_MYST_LABEL = re.compile(r"^\((?P<label>[^)\s]+)\)=\s*\n+#+ +(?P<title>.+)$", re.MULTILINE)
_MYST_TITLE = re.compile(r"^# +(?P<title>.+)$", re.MULTILINE)
_RST_LABEL = re.compile(
    r"^\.\. _(?P<label>[^:]+):\s*\n\s*\n(?:[=\-~^\"'#*]{3,}\n)?(?P<title>\S.*)\n[=\-~^\"'#*]{3,}$",
    re.MULTILINE,
)
_RST_TITLE = re.compile(r"^(?P<title>\S.*)\n[=\-~^\"'#*]{3,}$", re.MULTILINE)


def _pages(docs_dir: Path) -> list[Path]:
    return sorted(
        path
        for suffix in ("*.md", "*.rst")
        for path in docs_dir.rglob(suffix)
        if not _NOT_PAGES & set(path.relative_to(docs_dir).parts[:-1])
    )


def link_targets(docs_dir: Path, pages_url: str) -> dict[str, list[str]]:
    """Where ``:ref:`label``` and ``:doc:`/page``` lead on the site, and their titles.

    Parameters
    ----------
    docs_dir : Path
        The Sphinx source folder; its MyST and reST pages are read (not the gallery's).
    pages_url : str
        Absolute URL of one language's pages, ending in ``/`` (``<site>/en/``).

    Returns
    -------
    dict
        ``label`` (lower case, as Sphinx stores it) and ``/page`` -> ``[url, title]``.
    """
    targets: dict[str, list[str]] = {}
    for path in _pages(docs_dir):
        page = path.relative_to(docs_dir).with_suffix("").as_posix()
        url = f"{pages_url}{page}.html"
        text = path.read_text(encoding="utf-8")
        labels, title = (
            (_MYST_LABEL, _MYST_TITLE) if path.suffix == ".md" else (_RST_LABEL, _RST_TITLE)
        )
        first = title.search(text)
        if first is not None:
            targets[f"/{page}"] = [url, first["title"].strip()]
        for found in labels.finditer(text):
            label = found["label"].lower()
            targets[label] = [f"{url}#{make_id(label)}", found["title"].strip()]
    return targets


def use_pinned_pandoc() -> Path:
    """Make pypandoc run the pandoc of the ``pypandoc-binary`` wheel the project pins.

    Left alone, pypandoc runs the newest pandoc it finds, the one on ``PATH`` included, so
    a system pandoc would convert the notebooks with another version than the one the
    Lua programs were written for. ``PYPANDOC_PANDOC`` is the one path pypandoc then uses.

    Raises
    ------
    FileNotFoundError
        If the wheel's pandoc is missing (the docs dependency group installs it).
    """
    import pypandoc

    pandoc = Path(pypandoc.__file__).resolve().parent / "files" / "pandoc"
    if not pandoc.is_file():
        raise FileNotFoundError(
            f"no pandoc in the pypandoc-binary wheel ({pandoc}); the notebooks are "
            "converted with that one only: python -m pip install --group docs ."
        )
    os.environ["PYPANDOC_PANDOC"] = str(pandoc)
    return pandoc


def pandoc_version() -> str:
    """The version of the pinned pandoc (:func:`use_pinned_pandoc`)."""
    import pypandoc

    use_pinned_pandoc()
    return pypandoc.get_pandoc_version()


def pandoc_options(docs_dir: Path, pages_url: str | None) -> dict[str, list[str]]:
    """sphinx-gallery's ``"pypandoc"`` setting: the reader, the filter and what they need.

    sphinx-gallery 0.22 calls ``pypandoc.convert_text(block, to="md", format="rst",
    **options)`` and pypandoc puts ``extra_args`` after its own ``--from``/``--to``,
    so the reader and the Markdown flavour given here are the ones pandoc uses.
    ``pages_url`` (``<site>/en/``) makes roles that name a page of the site links to
    it; ``None`` leaves them as words. pandoc is the pinned one (:func:`use_pinned_pandoc`).
    """
    use_pinned_pandoc()  # before sphinx-gallery or a language's download runs pandoc
    links = link_targets(docs_dir, pages_url) if pages_url else {}
    release = importlib.metadata.version("compperf")
    substitutions = {"release": release, "version": release}
    return {
        "extra_args": [
            f"--from={READER}",
            f"--to={_MARKDOWN}",
            # One line per paragraph: Jupyter wraps for its reader, and a table row that
            # pandoc wrapped (or kept wrapped) would stop being one row.
            "--wrap=none",
            "--quiet",  # what it would warn about, compperf_docs.publish.notebook_check reports
            f"--metadata=compperf-links:{json.dumps(links)}",
            f"--metadata=compperf-substitutions:{json.dumps(substitutions)}",
        ],
        "filters": [str(FILTER)],
    }
