"""A build in shards: execute some chapters here, merge outputs from elsewhere, execute nothing.

Three steps, each a ``nox -s docs`` option (see README):

1. ``--chapters=asynchronous`` (``-D compperf_chapters=asynchronous``) executes only that
   chapter's examples; the other chapters keep their last outputs where sphinx-gallery's
   md5 stamps are current and appear without outputs otherwise, and the build says which.
2. :func:`merge` copies each chapter's executed gallery folder (pages, md5 stamps, images,
   downloads) and every executed notebook of the jupyter cache from the shards' docs
   folders into this one.
3. ``-D compperf_reuse_outputs=1`` builds from the merged outputs: it stops before anything
   runs when an example has no current outputs, and fails if a MyST notebook executed.

Why one module of about 400 lines: the three steps share one definition of "current
outputs" (:func:`chapter_status`, :func:`stale_reasons`), which the merge, the build's
refusal and the command line must agree on.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.errors import ConfigError, ExtensionError
from sphinx.util import logging

from compperf_docs import order

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

__all__ = [
    "GALLERY_ROOT",
    "JUPYTER_CACHE",
    "MergeReport",
    "chapter_status",
    "check_outputs_reused",
    "chosen_chapters",
    "executes_chapter",
    "main",
    "merge",
    "record_notebook_cache",
    "require_outputs",
    "restrict_execution",
    "setup",
    "stale_reasons",
]

logger = logging.getLogger(__name__)

# Where, under the Sphinx source folder, the executed outputs live (docs/conf.py uses both).
GALLERY_ROOT = "auto_examples"
JUPYTER_CACHE = Path("_build") / ".jupyter_cache"
# The examples sphinx-gallery executes (gallery.gallery_conf's filename_pattern matches them).
_EXAMPLE_GLOB = "plot_*.py"


def _md5(path: Path) -> str:
    # sphinx-gallery's own text-mode checksum, the one its .md5 stamps hold.
    from sphinx_gallery.utils import get_md5sum

    return get_md5sum(path, mode="t")


def chapter_status(
    examples: Path, gallery: Path, *, complete: bool = True
) -> tuple[list[str], list[str]]:
    """Split a chapter's examples into those with current outputs and those without.

    Parameters
    ----------
    examples : Path
        The chapter's source folder (``examples/<chapter>``).
    gallery : Path
        Its generated gallery folder (``docs/auto_examples/<chapter>``) in some build.
    complete : bool
        Also require what the other languages are made from: the recorded messages and
        a pickle of each figure (:func:`compperf_docs.execute.recorded.outputs_complete`).

    Returns
    -------
    current, stale : list of str
        Example file names whose outputs in ``gallery`` were made from the source as it is
        now (sphinx-gallery's md5 stamp matches, and with ``complete`` nothing is
        missing), and the others.
    """
    from compperf_docs.execute import recorded

    current, stale = [], []
    for source in sorted(examples.glob(_EXAMPLE_GLOB)):
        stamp = gallery / f"{source.name}.md5"
        fresh = stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == _md5(source)
        if fresh and complete:
            fresh = recorded.outputs_complete(gallery.parent.parent, gallery, source.stem)
        (current if fresh else stale).append(source.name)
    return current, stale


def stale_reasons(examples: Path, gallery: Path) -> dict[str, str]:
    """Why each example of a chapter whose md5 stamp is current still has no usable
    outputs in ``gallery`` (e.g. made with other package versions), by file name."""
    from compperf_docs.execute import recorded

    current, _ = chapter_status(examples, gallery, complete=False)
    found = {}
    for name in current:
        problem = recorded.outputs_problem(gallery.parent.parent, gallery, Path(name).stem)
        if problem is not None:
            found[name] = problem
    return found


def _galleries(config: Config) -> dict[str, tuple[Path, Path]]:
    """Chapter name -> (examples folder, gallery folder), from sphinx_gallery_conf."""
    conf = config.sphinx_gallery_conf
    return {
        Path(gallery).name: (Path(examples), Path(gallery))
        for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True)
    }


def chosen_chapters(config: Config) -> list[str]:
    """The chapters ``compperf_chapters`` names (empty: every chapter executes)."""
    value = config.compperf_chapters
    names = value.split(",") if isinstance(value, str) else list(value)
    return [name.strip() for name in names if name.strip()]


def executes_chapter(config: Config, docname: str) -> bool:
    """Whether this build executes the examples of the gallery page ``docname``."""
    chosen = chosen_chapters(config)
    parts = docname.split("/")
    return not chosen or (len(parts) > 2 and parts[0] == GALLERY_ROOT and parts[1] in chosen)


def restrict_execution(app: Sphinx, config: Config) -> None:
    """With ``compperf_chapters`` set, let sphinx-gallery execute only those chapters.

    sphinx-gallery executes the examples whose path matches ``filename_pattern``; this
    narrows the pattern to the chosen chapter folders. Examples of other chapters keep
    the outputs of their last run when their md5 stamps are current (sphinx-gallery
    then skips them) and show their code without outputs otherwise.
    """
    chosen = chosen_chapters(config)
    if not chosen:
        return
    galleries = _galleries(config)
    unknown = [name for name in chosen if name not in galleries]
    if unknown:
        raise ConfigError(
            f"compperf_chapters: no chapter named {', '.join(unknown)} "
            f"(choose among {', '.join(galleries)})"
        )
    conf = config.sphinx_gallery_conf
    alternatives = "|".join(re.escape(name) for name in chosen)
    # The example's parent folder is one of the chosen chapters, and the original
    # pattern matches somewhere in its path.
    conf["filename_pattern"] = (
        rf"^(?=.*[\\/](?:{alternatives})[\\/][^\\/]+$).*?(?:{conf['filename_pattern']})"
    )
    for name, (examples, gallery) in galleries.items():
        if name in chosen:
            continue
        current, stale = chapter_status(examples, gallery)
        logger.info(
            "compperf: chapter %s is not executed in this build: %d example(s) keep their "
            "last outputs, %d appear without outputs%s",
            name,
            len(current),
            len(stale),
            f" ({', '.join(stale)})" if stale else "",
        )


def require_outputs(app: Sphinx) -> None:
    """With ``compperf_reuse_outputs``, stop before sphinx-gallery runs anything.

    Every example must have current outputs (a merge brought them); otherwise the build
    stops and names the examples that would have run.
    """
    if not app.config.compperf_reuse_outputs:
        return
    missing = [
        f"{name}/{example}"
        for name, (examples, gallery) in _galleries(app.config).items()
        for example in chapter_status(examples, gallery)[1]
    ]
    if missing:
        galleries = _galleries(app.config)
        reasons = [
            f"{chapter}/{example}: {reason}"
            for chapter, (examples, gallery) in galleries.items()
            for example, reason in stale_reasons(examples, gallery).items()
        ]
        raise ExtensionError(
            "compperf_reuse_outputs: these examples have no current outputs to reuse and "
            f"would run: {', '.join(missing)}"
            + (f" ({'; '.join(reasons)})" if reasons else "")
            + ". Merge a shard that executed their chapter "
            "(built from the same sources and the same COMPPERF_SITE_URL), or build "
            "without reusing outputs."
        )


def _open_cache(path: Path):
    from jupyter_cache import get_cache

    return get_cache(str(path))


def _cached_keys(path: Path) -> set[str]:
    if not path.is_dir():
        return set()
    return {record.hashkey for record in _open_cache(path).list_cache_records()}


def record_notebook_cache(app: Sphinx) -> None:
    """Remember which notebooks the jupyter cache holds before the build reads anything."""
    cache = getattr(app.config, "nb_execution_cache_path", None)  # set when myst-nb is on
    if app.config.compperf_reuse_outputs and cache:
        app.compperf_cached_notebooks = _cached_keys(Path(cache))


def check_outputs_reused(app: Sphinx, env: object) -> None:
    """Fail a build that reuses outputs if myst-nb executed (and cached) a notebook.

    myst-nb has no mode that reads its cache without executing on a miss; this notices
    the miss once the pages are read, by the new entries in the cache.
    """
    before = getattr(app, "compperf_cached_notebooks", None)
    if before is None:
        return
    cache = Path(app.config.nb_execution_cache_path)
    new = [
        record.uri
        for record in (_open_cache(cache).list_cache_records() if cache.is_dir() else [])
        if record.hashkey not in before
    ]
    if new:
        raise ExtensionError(
            "compperf_reuse_outputs: these notebooks had no cached outputs and were "
            f"executed: {', '.join(sorted(new))}. Merge a shard that executed them."
        )


@dataclass
class MergeReport:
    """What :func:`merge` took from where.

    Attributes
    ----------
    chapters : dict of str to Path
        Chapter name -> the shard docs folder its executed gallery folder came from.
    incomplete : dict of str to list of str
        Chapter name -> examples that no shard had current outputs for (the chapter
        was left as it was here).
    notebooks : int
        Executed notebooks added to this folder's jupyter cache.
    refused : dict of str to dict of str to str
        Chapter name -> example -> why a shard's current-looking outputs of it were not
        taken (made with other package versions, a lost sidecar).
    """

    chapters: dict[str, Path] = field(default_factory=dict)
    # Chapter name -> {example: why a shard's outputs of it were refused} (stale_reasons).
    refused: dict[str, dict[str, str]] = field(default_factory=dict)
    incomplete: dict[str, list[str]] = field(default_factory=dict)
    notebooks: int = 0


def _merge_notebooks(source: Path, target: Path) -> int:
    from jupyter_cache.base import CacheBundleIn

    if not source.is_dir():
        return 0
    origin, destination = _open_cache(source), _open_cache(target)
    added = 0
    for record in origin.list_cache_records():
        bundle = origin.get_cache_bundle(record.pk)
        try:
            destination.match_cache_notebook(bundle.nb)
        except KeyError:
            destination.cache_notebook_bundle(
                CacheBundleIn(bundle.nb, record.uri, artifacts=bundle.artifacts, data=record.data),
                check_validity=False,
            )
            added += 1
    return added


def merge(shards: list[Path], docs: Path, examples: Path) -> MergeReport:
    """Copy the executed outputs of separate chapter builds into ``docs``.

    Parameters
    ----------
    shards : list of Path
        Docs folders of other builds (a checkout's ``docs/``, or an artifact with the
        same layout): each has ``auto_examples/<chapter>/`` and may have
        ``_build/.jupyter_cache/``.
    docs : Path
        The Sphinx source folder that receives them (``docs/``).
    examples : Path
        The example sources of this checkout (``examples/``): a chapter's gallery folder
        is taken from the first shard whose md5 stamps match every one of its examples.

    Returns
    -------
    MergeReport
        Which shard each chapter came from, chapters that no shard had complete, and how
        many notebooks the jupyter cache gained.

    Raises
    ------
    FileNotFoundError
        If a shard folder does not exist or has no ``auto_examples/``.
    """
    report = MergeReport()
    for shard in shards:
        if not (shard / GALLERY_ROOT).is_dir():
            raise FileNotFoundError(
                f"{shard} is not a shard's docs folder: it has no {GALLERY_ROOT}/ folder"
            )
    chapters = sorted({path.name for shard in shards for path in (shard / GALLERY_ROOT).iterdir()})
    for name in chapters:
        if not (examples / name).is_dir():
            continue  # a chapter these sources no longer have
        best_missing: list[str] | None = None
        for shard in shards:
            gallery = shard / GALLERY_ROOT / name
            if not gallery.is_dir():
                continue
            stale = chapter_status(examples / name, gallery)[1]
            for example, reason in stale_reasons(examples / name, gallery).items():
                report.refused.setdefault(name, {})[example] = f"{reason} in {shard}"
            if not stale:
                target = docs / GALLERY_ROOT / name
                if gallery.resolve() != target.resolve():
                    shutil.rmtree(target, ignore_errors=True)
                    shutil.copytree(gallery, target)
                report.chapters[name] = shard
                break
            if best_missing is None or len(stale) < len(best_missing):
                best_missing = stale
        else:
            if not chapter_status(examples / name, docs / GALLERY_ROOT / name)[1]:
                continue  # already complete here
            report.incomplete[name] = best_missing or []
    for shard in shards:
        report.notebooks += _merge_notebooks(shard / JUPYTER_CACHE, docs / JUPYTER_CACHE)
    return report


def setup(app: Sphinx) -> dict[str, object]:
    """Stage 2, sharded builds: which chapters execute, and a build that reuses merged outputs."""
    app.add_config_value("compperf_chapters", "", "", types=(str, list))
    app.add_config_value("compperf_reuse_outputs", False, "", types=(bool,))
    app.connect("config-inited", restrict_execution, priority=order.CHAPTERS)
    app.connect("builder-inited", require_outputs, priority=order.REQUIRE_OUTPUTS)
    app.connect("builder-inited", record_notebook_cache, priority=order.REQUIRE_OUTPUTS)
    app.connect("env-updated", check_outputs_reused)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    """``python -m compperf_docs.shards SHARD...``: merge, print the report, 1 if incomplete."""
    parser = argparse.ArgumentParser(description=merge.__doc__.splitlines()[0])
    parser.add_argument("shards", nargs="+", type=Path, help="the shards' docs folders")
    parser.add_argument("--docs", type=Path, default=Path("docs"), help="receives them")
    parser.add_argument("--examples", type=Path, default=Path("examples"))
    args = parser.parse_args(argv)
    try:
        report = merge(args.shards, args.docs, args.examples)
    except FileNotFoundError as error:
        print(f"compperf_docs.shards: {error}; name each shard's docs folder", file=sys.stderr)
        return 2
    for name, shard in report.chapters.items():
        print(f"{name}: executed outputs from {shard}")
    print(f"notebooks added to the jupyter cache: {report.notebooks}")
    for name, missing in report.incomplete.items():
        for example, reason in report.refused.get(name, {}).items():
            print(f"{name}: refused {example}: {reason}", file=sys.stderr)
        print(
            f"{name}: no shard has current outputs for {', '.join(missing)}; build that "
            f"chapter from these same sources (and COMPPERF_SITE_URL) in a shard: "
            f"nox -s docs -- --chapters={name} --languages=en",
            file=sys.stderr,
        )
    return 1 if report.incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
