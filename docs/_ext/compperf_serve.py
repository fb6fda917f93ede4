"""``nox -s serve``: sphinx-autobuild that rebuilds once per saved file and never while idle.

sphinx-autobuild rebuilds for every path its watcher (watchfiles) reports and its filter
does not ignore. With only its own ignore options it also rebuilds for:

- what a build writes in the watched folders (``docs/``, ``examples/``, ``src/compperf/``):
  Python's bytecode in ``__pycache__`` (of ``docs/_ext`` and ``src/compperf``), the compiled
  catalogs, sphinx-gallery's generated folder and md5 stamps. A build that writes one
  starts another build;
- a folder. A polling watcher (``WATCHFILES_FORCE_POLLING=1``, what network, container and
  WSL file systems need) reports a folder as modified whenever a file in it is created or
  deleted, so a new ``docs/auto_examples`` or an editor's temporary file starts a build
  through its folder even where the file itself is ignored;
- editors' temporary files: vim's ``4913`` probe, its swap files (written while one types,
  before any save) and ``~`` backups, emacs' ``.#lock`` and ``#autosave#`` files.

:func:`ignored` ignores all of these: a folder's change always comes with an event of the
file that changed, which is what counts. The builds that :func:`main` starts write no
bytecode. Run as ``python docs/_ext/compperf_serve.py SPHINX-AUTOBUILD-ARGS``, from the
repository root (``nox -s serve``); ``tests/docs/test_serve.py`` checks it on a tiny site.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from pathlib import Path

__all__ = ["IGNORED_FOLDERS", "IGNORED_NAMES", "WATCHED", "ignored", "main"]

# Watched besides the Sphinx source folder: the pages come from the examples and the
# package's docstrings too.
WATCHED = ("examples", "src/compperf")
# What the build writes (relative to the repository root): never a reason to build.
IGNORED_FOLDERS = ("docs/_build", "docs/auto_examples", "docs/jupyter_execute")
# Names of files, or of a folder anywhere above them, that no build reads: bytecode,
# compiled catalogs, md5 stamps, the examples' own outputs (examples/**/*_output/), and
# editors' temporary files.
IGNORED_NAMES = (
    "__pycache__",
    "*.py[cod]",
    "*.mo",
    "*.md5",
    "*_output",
    ".ipynb_checkpoints",
    ".git",
    "4913",
    "*~",
    "*.sw[a-p]",
    "*.swpx",
    ".#*",
    "#*#",
    ".DS_Store",
)


def ignored(path: str | os.PathLike[str], root: Path | None = None) -> bool:
    """Whether a change of ``path`` must not start a build (``root``: the repository)."""
    path = Path(path)
    if path.is_dir():
        return True  # a folder event: the file that changed has its own
    root = (root or Path.cwd()).resolve()
    try:
        relative = path.resolve().relative_to(root)
    except ValueError:
        relative = path
    posix = relative.as_posix()
    if any(posix == folder or posix.startswith(f"{folder}/") for folder in IGNORED_FOLDERS):
        return True
    return any(fnmatch.fnmatch(part, name) for part in relative.parts for name in IGNORED_NAMES)


def main(argv: list[str]) -> None:
    """Run sphinx-autobuild with ``argv``, watching :data:`WATCHED`, filtered by :func:`ignored`."""
    # The builds run in subprocesses, which inherit this: no bytecode written mid-watch.
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    from sphinx_autobuild import __main__ as autobuild

    # sphinx-autobuild 2025.8.25 has no option to leave folders or a filter function out:
    # its main() builds its filter from the class it imported, which this replaces.
    original = getattr(autobuild, "IgnoreFilter", None)
    if original is None:
        sys.exit("sphinx-autobuild no longer has IgnoreFilter: update docs/_ext/compperf_serve.py")

    class Filter(original):
        def __call__(self, filename: str, /) -> bool:
            return ignored(filename) or super().__call__(filename)

    autobuild.IgnoreFilter = Filter
    watched = [argument for folder in WATCHED for argument in ("--watch", folder)]
    autobuild.main([*watched, *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
