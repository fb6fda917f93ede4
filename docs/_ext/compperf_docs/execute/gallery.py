"""sphinx-gallery settings shared by the site and its tiny test build.

Also what runs around each example (:func:`reset_state`: the state handover, the
recording of messages and verdicts) and when an example must run again (another
notebook conversion, lost records, other package versions). About 370 lines, because
the settings and the hooks they name belong together.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging

from compperf_docs import workarounds
from compperf_docs.execute import recorded
from compperf_docs.languages import figures
from compperf_docs.publish import notebook_markdown, site
from compperf_docs.publish.site import N_

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

logger = logging.getLogger(__name__)

__all__ = [
    "NOTEBOOK_EXTRAS",
    "first_notebook_cell",
    "forget_outputs_made_with_another_conversion",
    "gallery_conf",
    "reset_state",
    "use_site_url",
]

# What a downloaded notebook needs beyond torch and Jupyter (compperf comes from the site).
NOTEBOOK_EXTRAS = ("matplotlib", "graphviz")


# The first cell's comment, a UI message (sphinx.po): a zh_CN or ru notebook says it in
# its reader's language (compperf_docs.languages.language_downloads).
INSTALL_NOTE = N_(
    "Installs what this notebook needs besides torch and Jupyter: compperf (from the "
    "site that published this notebook) and plotting helpers. Install torch first, in "
    "the build that fits your machine (CPU, CUDA or Apple MPS). Optional: Graphviz's "
    "`dot` program draws the graphs (apt-get or brew install graphviz), and "
    "torch.compile on a CPU needs a C++ compiler; without them the examples say what is "
    "missing and carry on."
)


def first_notebook_cell(wheel_url: str, note: str = INSTALL_NOTE) -> str:
    """The first cell of every downloaded notebook; it never runs during the docs build.

    ``note`` is :data:`INSTALL_NOTE`, or its translation for a zh_CN or ru notebook.
    """
    from compperf.i18n import wrap  # CJK-aware; imported late, with torch

    comment = "\n".join(f"# {line}" for line in wrap(note, 76).splitlines())
    return f"{comment}\n" + "\n".join(f"%pip {args}" for args in install_arguments(wheel_url))


def install_arguments(wheel_url: str) -> list[str]:
    """pip's arguments, one install per item: the extras, then compperf from ``wheel_url``.

    compperf is installed again every time, without the download cache: a notebook run
    after the site was rebuilt with a changed compperf (same version number) gets the
    code its page ran, not the compperf pip kept from last time.
    """
    return [
        f"install --quiet {' '.join(NOTEBOOK_EXTRAS)}",
        f"install --quiet --force-reinstall --no-deps --no-cache-dir {wheel_url}",
    ]


def use_site_url(app: Sphinx, config: Config) -> None:
    """Give notebooks the install cell for ``compperf_site_url``, then bring old ones up to date.

    Runs at ``config-inited``, after ``-D`` has been applied and before sphinx-gallery
    reads its configuration. sphinx-gallery writes an example's notebook only when it
    executes the example, so the notebooks already in the gallery folders get the new
    first cell here (:func:`compperf_docs.workarounds.rewrite_first_notebook_cell`):
    a build for another site URL executes nothing.
    """
    cell = first_notebook_cell(site.wheel_url(config.compperf_site_url))
    conf = config.sphinx_gallery_conf
    conf["first_notebook_cell"] = cell
    for folder in map(Path, conf.get("gallery_dirs", [])):
        if folder.is_dir():
            workarounds.rewrite_first_notebook_cell(folder, cell)


# Remembers, in each gallery folder, how its notebooks' Markdown was made: pandoc's options,
# the Lua programs they name and pandoc's version.
_CONVERSION_STAMP = ".notebook_conversion"


def _conversion_recipe(conf: dict) -> str:
    options = conf.get("pypandoc") or {}
    programs = [notebook_markdown.READER, notebook_markdown.FILTER] if options else []
    digests = [hashlib.sha256(path.read_bytes()).hexdigest() for path in programs]
    # Another pandoc may convert differently: a new version converts again.
    version = [f"pandoc {notebook_markdown.pandoc_version()}"] if options else []
    return "\n".join([json.dumps(options, sort_keys=True), *digests, *version])


def forget_outputs_made_with_another_conversion(app: Sphinx) -> None:
    """Make sphinx-gallery run a chapter again when its notebooks' Markdown would differ.

    sphinx-gallery writes an example's notebook only when it executes the example, so a
    change of the pandoc conversion would otherwise leave old notebooks in place. Deleting
    the md5 stamps of such a gallery folder makes its examples run (and their downloads
    be written) again. The site URL is not part of the recipe: notebooks link to the
    canonical site (``site-url`` in ``[tool.compperf]``) and get their install cell from
    :func:`use_site_url`, so a build for another address executes nothing.
    """
    conf = app.config.sphinx_gallery_conf
    recipe = _conversion_recipe(conf)
    for folder in map(Path, conf.get("gallery_dirs", [])):
        stamp = folder / _CONVERSION_STAMP
        if stamp.is_file() and stamp.read_text(encoding="utf-8") != recipe:
            logger.info("notebook conversion changed: %s runs its examples again", folder)
            for md5 in folder.glob("*.md5"):
                md5.unlink()
        if folder.is_dir():
            stamp.write_text(recipe, encoding="utf-8")


def forget_outputs_without_records(app: Sphinx) -> None:
    """Make sphinx-gallery run an example again whose outputs the other languages cannot show.

    An example executed before its messages were recorded (or whose sidecar or figure
    pickles were lost), or with other versions of torch, matplotlib, compperf or
    sphinx-gallery (:func:`compperf_docs.execute.recorded.outputs_problem`), has current md5
    stamps, so sphinx-gallery would not run it; its stamp is deleted here. Only a build of the first language, which executes, and not
    one that must reuse merged outputs (it stops and names them instead).
    """
    from compperf_docs import shards

    if app.config.language != "en" or app.config.compperf_reuse_outputs:
        return
    if str(app.config.plot_gallery).strip().lower() in ("0", "false", "no", "off"):
        return  # --no-exec
    chosen = shards.chosen_chapters(app.config)
    conf = app.config.sphinx_gallery_conf
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        gallery = Path(gallery)
        if chosen and gallery.name not in chosen:
            continue
        current, _stale = shards.chapter_status(Path(examples), gallery, complete=False)
        for name in current:
            problem = recorded.outputs_problem(gallery.parent.parent, gallery, Path(name).stem)
            if problem is not None:
                logger.info("compperf: %s: %s: it runs again", name, problem)
                (gallery / f"{name}.md5").unlink()


# The process-wide settings an example may change, as they were before the first one ran.
_INITIAL: dict[str, object] = {}
# The warning filters around the example that is running (entered before, left after).
_WARNINGS: list[warnings.catch_warnings] = []


def _example_folders(gallery_conf: dict, fname: str) -> tuple[Path, Path] | None:
    """The (examples folder, gallery folder) of the example ``fname`` that just ran.

    sphinx-gallery names it by file name alone; the figure scraper saw its gallery
    folder, and a name found in one chapter only needs no scraper.
    """
    pairs = list(
        zip(
            map(Path, gallery_conf.get("examples_dirs", [])),
            map(Path, gallery_conf.get("gallery_dirs", [])),
            strict=True,
        )
    )
    seen = figures.last_gallery(Path(fname).name)
    for examples, gallery in pairs:
        if seen is not None and gallery.resolve() == seen.resolve():
            return examples, gallery
    found = [(e, g) for e, g in pairs if (e / Path(fname).name).is_file()]
    return found[0] if len(found) == 1 else None


# The watch and verdicts of the example that is running (started before, read after).
_WATCHING: list[object] = []
# What the last example's run left: {"disturbance": Disturbance.record(), "message": the
# translated account's record, "seconds": ..., "verdicts": [...]}; the example tests'
# runner (tests/examples/run_examples.py) reads it after each example.
last_run: dict[str, object] = {}


def _start_watching() -> None:
    from compperf import disturbance, verdicts

    while _WATCHING:  # an example that failed before its "after" never closed its watch
        _WATCHING.pop()
    verdicts.start_recording()
    watched = disturbance.watch()
    watched.__enter__()
    _WATCHING.append(watched)


def _stop_watching() -> dict[str, object]:
    """The run's account: its disturbance and the verdicts it made (see :data:`last_run`)."""
    from compperf import verdicts

    made = verdicts.stop_recording()
    last_run.clear()
    if not _WATCHING:
        return last_run
    watched = _WATCHING.pop()
    watched.__exit__(None, None, None)
    disturbance = watched.disturbance
    last_run.update(
        seconds=round(disturbance.seconds, 3),
        disturbance=disturbance.record(),
        message=str(disturbance).record,
        verdicts=made,
    )
    return last_run


def _save_records(gallery_conf: dict, fname: str | None) -> None:
    """Write the messages and verdicts the example made while it ran beside its page."""
    from compperf import i18n

    records = i18n.stop_recording()
    run = _stop_watching()
    if fname is None or not gallery_conf.get("gallery_dirs"):
        return  # the example tests' runner: nothing to write
    folders = _example_folders(gallery_conf, fname)
    if folders is None:
        raise RuntimeError(
            f"compperf_docs: cannot tell which chapter's {fname} just ran, so its recorded "
            "messages have nowhere to go; give examples of different chapters different "
            "file names"
        )
    examples, gallery = folders
    source = examples / Path(fname).name
    root = Path(gallery_conf.get("src_dir", examples.parent.parent)).resolve().parent
    try:
        example = source.resolve().relative_to(root).as_posix()
    except ValueError:
        example = source.as_posix()
    recorded.write(gallery, source.stem, example, records)
    recorded.write_run(gallery, source.stem, example, run)


def reset_state(gallery_conf: dict, fname: str | None, when: str) -> None:
    """Give each example the state that a fresh ``python plot_x.py`` would see.

    All examples of a build run in one process. Without this, one example's compiled
    graphs, Dynamo statistics (``torch.compiler.reset()`` keeps
    ``torch._dynamo.utils.counters``), seed, default dtype or device, thread count, warning
    filters and already-shown warnings would change what the next one prints. Modules an
    earlier example imported stay imported, so a page that times a "first call" must keep
    import time out of it. sphinx-gallery calls this before and after every example
    (``reset_modules_order="both"``).

    It also records the messages the example prints and draws
    (:func:`compperf.i18n.start_recording`) and, after it, writes them to
    ``<gallery folder>/<stem>.messages.json`` (:mod:`compperf_docs.execute.recorded`): the
    other languages show them from there, without running the example again. It watches
    the machine while the example runs (:func:`compperf.watch`) and keeps the verdicts
    the example makes (:func:`compperf.verdicts.start_recording`), written to
    ``<gallery folder>/<stem>.verdicts.json``: the page's run line, the about page and
    the build log's list of disturbed examples come from there.
    """
    if when == "after":
        while _WARNINGS:  # restores the filters and forgets which warnings were shown
            _WARNINGS.pop().__exit__(None, None, None)
        _save_records(gallery_conf, fname)
        return
    from compperf import i18n

    i18n.use_language(i18n.SOURCE_LANGUAGE)  # the build records English
    i18n.start_recording()
    _start_watching()
    if fname is not None:
        figures.forget_example(Path(fname).name)
        folders = _example_folders(gallery_conf, fname)
        if folders is not None:
            recorded.forget(folders[1], Path(fname).stem)
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
    pages_url: str | None = None,
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
        Chapter folder names, in reading order (``chapters`` in ``[tool.compperf]``).
    pages_url : str, optional
        Absolute URL of the pages that notebooks link to (``<site>/en/``): a ``:ref:``
        or ``:doc:`` role in an example becomes a link there; without it, plain words.
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
        # Set from compperf_site_url once -D has been applied (use_site_url).
        "first_notebook_cell": None,
        # Text blocks become Markdown through pandoc (the pypandoc-binary wheel ships it):
        # tables, roles and admonitions that Jupyter shows as such, not as raw reST.
        "pypandoc": notebook_markdown.pandoc_options(docs_dir, pages_url),
        "remove_config_comments": True,
        "reset_modules": ("matplotlib", "compperf_docs.execute.gallery.reset_state"),
        "reset_modules_order": "both",
        "capture_repr": ("_repr_html_", "__repr__"),
        # sphinx-gallery's matplotlib scraper, which also pickles each figure so that the
        # other languages can draw it again with translated labels.
        "image_scrapers": ("compperf_docs.languages.figures.scraper",),
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
