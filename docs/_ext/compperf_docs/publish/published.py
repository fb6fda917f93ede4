"""The published numbers travel in each download: a learner's run ends comparing with them.

While the English build executes an example, every measurement and verdict it makes is
noted as a key figure (:mod:`compperf.records`); after it,
:func:`record_figures` writes them with the environment they were measured on to
``<gallery folder>/<stem>.figures.json`` (part of the example's outputs: it travels with
a shard's folder). An English build runs an example again whose outputs lack it.

Then :func:`embed_in_downloads` appends one code block to each example's ``.py``
download and one code cell to its notebook, after sphinx-gallery and
:mod:`compperf_docs.publish.downloads` have written them and before the other languages' files
are made from them (:mod:`compperf_docs.languages.language_downloads` copies the block, which
holds no prose and no comment, as it is)::

    # %%
    compperf.compare_published(
        {'format': 'compperf-figures/1', 'example': ..., 'environment': ..., 'figures': [...]}
    )

Run by a learner, it prints where the page was measured and where they measured, and a
table of each key figure both runs made: published, theirs and the ratio, in the
language the download chose (:func:`compperf.compare_published`). An example without
figures gets ``compperf.compare_published(None)``, which says once that there is
nothing to compare.

The notebooks that the "Open in Colab" buttons open are copies
(``auto_examples/_colab/<language>/<chapter>/``, :func:`write_colab_copies`) with,
right after the install cell, a Markdown cell saying which Colab runtime to pick
(:data:`COLAB_NOTE`, a UI message, in the copy's language).
"""

from __future__ import annotations

import json
import os
import pprint
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.util import logging

from compperf_docs import order, workarounds
from compperf_docs.publish.site import N_

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

__all__ = [
    "COLAB_NOTE",
    "FIGURES_SUFFIX",
    "block",
    "embed_in_downloads",
    "figures_path",
    "record_figures",
    "setup",
]

logger = logging.getLogger(__name__)

FIGURES_SUFFIX = ".figures.json"
_CALL = "compperf.compare_published("
_MARK = f"\n# %%\n{_CALL}"
_CELL_KEY = "compperf"  # notebook cell metadata: {"compperf": "published" | "colab"}
_NAME = "published-numbers-in-downloads"

COLAB_NOTE = N_(
    "**On Google Colab:** choose *Runtime → Change runtime type → T4 GPU* (any GPU) "
    "before you run the first cell. Colab already has torch, so that cell installs only "
    "compperf and what is missing."
)


def figures_path(gallery: Path, stem: str) -> Path:
    """``<gallery folder>/<stem>.figures.json``."""
    return gallery / f"{stem}{FIGURES_SUFFIX}"


def record_figures(gallery_conf: dict, fname: str | None, when: str) -> None:
    """sphinx-gallery's reset hook: note key figures from zero before, write them after."""
    from compperf import records

    if when == "before":
        records.reset()
        return
    if fname is None or not gallery_conf.get("gallery_dirs"):
        return
    from compperf_docs.execute import gallery

    folders = gallery._example_folders(gallery_conf, fname)
    if folders is None:
        return  # gallery's own hook already stops the build with a message
    examples, folder = folders
    example = f"{examples.name}/{Path(fname).stem}"
    seconds = gallery.last_run.get("seconds") if gallery.last_run else None
    made = records.example_figures(example, seconds)
    figures_path(folder, Path(fname).stem).write_text(
        json.dumps(made, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def add_hook(app: Sphinx, config: Config) -> None:
    """Add :func:`record_figures` to sphinx-gallery's reset hooks (before it reads them)."""
    conf = config.sphinx_gallery_conf
    hooks = tuple(conf.get("reset_modules", ()))
    name = f"{__name__}.record_figures"
    if name not in hooks:
        conf["reset_modules"] = (*hooks, name)


def forget_outputs_without_figures(app: Sphinx) -> None:
    """Make sphinx-gallery run an example again whose outputs lack its figures (English)."""
    from compperf_docs import shards

    if app.config.language != "en" or app.config.compperf_reuse_outputs:
        return
    if str(app.config.plot_gallery).strip().lower() in ("0", "false", "no", "off"):
        return
    chosen = shards.chosen_chapters(app.config)
    conf = app.config.sphinx_gallery_conf
    for gallery in map(Path, conf["gallery_dirs"]):
        if chosen and gallery.name not in chosen:
            continue
        for md5 in sorted(gallery.glob("*.py.md5")):
            stem = md5.name.removesuffix(".py.md5")
            if not figures_path(gallery, stem).is_file():
                logger.info("compperf: %s has no recorded key figures: it runs again", stem)
                md5.unlink()


def published(gallery: Path, stem: str) -> dict[str, Any] | None:
    """What goes into the downloads: the figures and environment, or None without them."""
    path = figures_path(gallery, stem)
    if not path.is_file():
        return None
    made = json.loads(path.read_text(encoding="utf-8"))
    if not made.get("figures"):
        return None
    return {key: made[key] for key in ("format", "example", "environment", "figures")}


def block(record: dict[str, Any] | None) -> str:
    """The code the downloads end with (without the ``# %%`` line)."""
    literal = pprint.pformat(record, width=75, sort_dicts=False)
    return f"{_CALL}\n    " + literal.replace("\n", "\n    ") + "\n)\n"


def with_block(text: str, code: str) -> str:
    """``text`` (a script) ending with ``code`` as its last ``# %%`` block, once."""
    at = text.find(_MARK)
    body = text[:at] if at >= 0 else text
    return body.rstrip("\n") + "\n\n" + "# %%\n" + code


def _notebook_with(text: str, code: str) -> str:
    """The notebook ``text`` ending with ``code`` as sphinx-gallery makes a last code block.

    So a notebook made from the script (a translated one, :mod:`compperf_docs.languages.language_notebooks`)
    is the same notebook; an earlier pass's cell is replaced.
    """
    from sphinx_gallery.notebook import add_code_cell

    notebook = json.loads(text)
    notebook["cells"] = [
        cell for cell in notebook["cells"] if not "".join(cell.get("source", "")).startswith(_CALL)
    ]
    add_code_cell(notebook, code)
    return json.dumps(notebook, indent=2)  # as sphinx_gallery.notebook.save_notebook


def colab_notebook(text: str, note: str) -> str:
    """The notebook ``text`` with ``note`` (Markdown) right after its install cell.

    Only the copies Colab opens get it (:func:`write_colab_copies`): the install cell stays
    first (``workarounds.rewrite_first_notebook_cell``) and the downloads stay as made.
    """
    notebook = json.loads(text)
    cells = notebook["cells"]
    at = next((i for i, cell in enumerate(cells) if cell["cell_type"] == "code"), -1) + 1
    cells.insert(at, {"cell_type": "markdown", "metadata": {_CELL_KEY: "colab"}, "source": [note]})
    return json.dumps(notebook, indent=2, ensure_ascii=False)


def _write_if_changed(path: Path, text: str, mtime_from: Path | None = None) -> bool:
    if path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    if mtime_from is not None:  # a fresh copy would look like a changed download
        stat = mtime_from.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return True


def _embed(folder: Path, stem: str, code: str, source: Path) -> bool:
    changed = False
    script, notebook = folder / f"{stem}.py", folder / f"{stem}.ipynb"
    if script.is_file() and "import compperf" in script.read_text(encoding="utf-8"):
        text = with_block(script.read_text(encoding="utf-8"), code)
        if _write_if_changed(script, text, source):
            changed = True
            _rewrite_zip(folder / f"{stem}.zip", script.name, text)
    if notebook.is_file():
        text = _notebook_with(notebook.read_text(encoding="utf-8"), code)
        if _write_if_changed(notebook, text):
            changed = True
            _rewrite_zip(folder / f"{stem}.zip", notebook.name, text)
    return changed


def _rewrite_zip(path: Path, member: str, text: str) -> None:
    if path.is_file():
        workarounds.rewrite_zip_member(path, member, text, _NAME)


def embed_in_downloads(app: Sphinx) -> None:
    """The gallery folders' English downloads, in every build (sphinx-gallery copies the
    sources again each time), before the other languages' files are made from them."""
    from sphinx_gallery.downloads import generate_zipfiles

    conf = app.config.sphinx_gallery_conf
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        gallery = Path(gallery)
        changed = False
        for source in sorted(Path(examples).glob("*.py")):
            if (gallery / source.name).is_file():
                code = block(published(gallery, source.stem))
                changed |= _embed(gallery, source.stem, code, source)
        if changed:
            generate_zipfiles(gallery, app.srcdir, conf)  # the chapter's "download all"


def colab_folder(gallery: Path, language: str) -> Path:
    """``auto_examples/_colab/<language>/<chapter>``: the notebooks Colab opens."""
    return gallery.parent / "_colab" / language / gallery.name


def write_colab_copies(app: Sphinx) -> None:
    """Copy this language's notebooks, with the Colab note, for the notebooks branch.

    After :mod:`compperf_docs.languages.language_downloads` has made the other languages' notebooks;
    :func:`compperf_docs.publish.colab.publish` takes them from here.
    """
    if app.builder.format != "html":
        return
    from sphinx.locale import _

    from compperf_docs.languages import language_downloads

    language = app.config.language
    note = _(COLAB_NOTE)
    conf = app.config.sphinx_gallery_conf
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        gallery = Path(gallery)
        folder = (
            gallery if language == "en" else language_downloads.language_folder(gallery, language)
        )
        for source in sorted(Path(examples).glob("*.py")):
            made = folder / f"{source.stem}.ipynb"
            if not made.is_file():
                continue
            copy = colab_folder(gallery, language) / made.name
            text = colab_notebook(made.read_text(encoding="utf-8"), note)
            if not copy.is_file() or copy.read_text(encoding="utf-8") != text:
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_text(text, encoding="utf-8")


def setup(app: Sphinx) -> None:
    """Connect the hooks (called from :func:`compperf_docs.publish.setup`; order: ``order``)."""
    app.connect("config-inited", add_hook, priority=order.GALLERY_RESET_HOOK)
    app.connect(
        "builder-inited", forget_outputs_without_figures, priority=order.FORGET_WITHOUT_FIGURES
    )
    app.connect("builder-inited", embed_in_downloads, priority=order.EMBED_PUBLISHED)
    app.connect("builder-inited", write_colab_copies, priority=order.COLAB_COPIES)
