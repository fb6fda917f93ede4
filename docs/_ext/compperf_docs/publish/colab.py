"""Open in Colab: a button on every example page that opens its notebook, in the page's language.

Colab opens notebooks from GitHub
(``https://colab.research.google.com/github/<owner>/<repo>/blob/<ref>/<path>``). The
deployment workflow publishes every built notebook to a branch of the repository
(:func:`publish`, run as ``python docs/_ext/compperf_docs/publish/colab.py publish DEST``), one
folder per source revision, so that a page always opens the notebook it was built with::

    <notebooks branch>/<revision>/<language>/<chapter>/<stem>.ipynb

Where: ``repository`` and ``notebooks-branch`` in ``[tool.compperf]`` of pyproject.toml
(``$COMPPERF_REPOSITORY`` overrides the first; without either, ``site-url``'s
``https://<owner>.github.io/<name>/`` names it: the workflow sets it to the repository it
runs in, so a fork's site points at the fork). The revision is ``$COMPPERF_REVISION``,
else ``git rev-parse HEAD`` of the checkout (a local command), else ``"unknown"``.
Building the button contacts nothing: it is a plain link, with no badge image.

This module needs only the standard library for :func:`notebook_path`,
:func:`colab_url` and :func:`publish`; the workflow runs it without the docs' packages.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if __package__ in (None, ""):  # run as a script by the workflow
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import compperf_project

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = [
    "BUTTON",
    "REPOSITORY_VARIABLE",
    "REVISION_VARIABLE",
    "Notebooks",
    "colab_url",
    "notebook_path",
    "publish",
    "settings",
    "setup",
]

REPOSITORY_VARIABLE = "COMPPERF_REPOSITORY"
REVISION_VARIABLE = "COMPPERF_REVISION"
COLAB = "https://colab.research.google.com/github/"
_DEFAULT_BRANCH = "notebooks"


def N_(message: str) -> str:  # a UI message (sphinx.po), as compperf_docs.publish.site.N_
    return message


BUTTON = N_("Open in Colab")
BUTTON_TITLE = N_(
    "Opens this page's notebook in Google Colab: pick a GPU runtime there "
    "(Runtime → Change runtime type)"
)


class Notebooks:
    """Where the notebooks are published: ``repository``, ``branch`` and ``revision``."""

    def __init__(self, repository: str, branch: str, revision: str) -> None:
        self.repository, self.branch, self.revision = repository, branch, revision

    def __repr__(self) -> str:
        return f"Notebooks({self.repository!r}, {self.branch!r}, {self.revision!r})"


def _revision(root: Path) -> str:
    found = os.environ.get(REVISION_VARIABLE, "").strip()
    if found:
        return found
    try:
        result = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else "unknown"


@cache
def _table(pyproject: Path) -> dict:
    with pyproject.open("rb") as file:
        return tomllib.load(file).get("tool", {}).get("compperf", {})


def settings(pyproject: str | os.PathLike[str] | None = None) -> Notebooks:
    """The notebooks' repository, branch and revision for the checkout of ``pyproject``.

    Raises
    ------
    compperf_project.ProjectError
        If ``repository`` is neither in ``[tool.compperf]`` nor in ``$COMPPERF_REPOSITORY``,
        or is not ``owner/name``.
    """
    path = Path(pyproject or compperf_project.PYPROJECT).resolve()
    table = _table(path)
    repository = os.environ.get(REPOSITORY_VARIABLE, "").strip() or table.get("repository", "")
    if not repository:  # https://<owner>.github.io/<name>/ names its repository
        host, _, rest = str(table.get("site-url", "")).partition("://")[2].partition("/")
        if host.endswith(".github.io") and rest.strip("/"):
            repository = f"{host.removesuffix('.github.io')}/{rest.strip('/').split('/')[0]}"
    if not isinstance(repository, str) or repository.count("/") != 1 or " " in repository:
        raise compperf_project.ProjectError(
            f"[tool.compperf] in {path}: 'repository' must be 'owner/name' (the GitHub "
            f"repository the notebooks are published to), got {repository!r}"
        )
    branch = table.get("notebooks-branch", _DEFAULT_BRANCH)
    return Notebooks(repository, str(branch), _revision(path.parent))


def notebook_path(revision: str, language: str, chapter: str, stem: str) -> str:
    """A notebook's path on the notebooks branch: ``<revision>/<language>/<chapter>/<stem>.ipynb``."""
    return f"{revision}/{language}/{chapter}/{stem}.ipynb"


def colab_url(notebooks: Notebooks, language: str, chapter: str, stem: str) -> str:
    """The address that opens a notebook in Colab, pinned to the built revision."""
    path = notebook_path(notebooks.revision, language, chapter, stem)
    return f"{COLAB}{notebooks.repository}/blob/{notebooks.branch}/{path}"


def built_notebook(docs: Path, language: str, chapter: str, stem: str) -> Path:
    """Where a build leaves the copy of a notebook that Colab opens (with the runtime note).

    ``docs/auto_examples/_colab/<language>/<chapter>/<stem>.ipynb``, written by
    :func:`compperf_docs.publish.published.write_colab_copies` in each language's build.
    """
    return docs / "auto_examples" / "_colab" / language / chapter / f"{stem}.ipynb"


def publish(docs: Path, destination: Path, revision: str | None = None) -> list[Path]:
    """Copy every built notebook to ``destination/<revision>/<language>/<chapter>/``.

    ``destination`` is a checkout of the notebooks branch. Returns the files written.
    """
    project = compperf_project.load(docs.parent / "pyproject.toml")
    revision = revision or _revision(docs.parent)
    written = []
    for language in project.codes:
        for chapter in project.chapters:
            for source in sorted((docs.parent / "examples" / chapter).glob("plot_*.py")):
                built = built_notebook(docs, language, chapter, source.stem)
                if not built.is_file():
                    continue
                target = destination / notebook_path(revision, language, chapter, source.stem)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(built, target)
                written.append(target)
    return written


def _example(pagename: str, chapters: tuple[str, ...]) -> tuple[str, str] | None:
    parts = pagename.split("/")
    if len(parts) == 3 and parts[0] == "auto_examples" and parts[1] in chapters:
        return (parts[1], parts[2]) if parts[2].startswith("plot_") else None
    return None


def _say_once(app: Sphinx, message: str) -> None:
    from sphinx.util import logging

    if not getattr(app, "_compperf_colab_said", False):
        app._compperf_colab_said = True  # type: ignore[attr-defined]
        logging.getLogger(__name__).info(message)


def add_button(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Put the Open-in-Colab link under an example page's title (``html-page-context``)."""
    from sphinx.locale import _

    project = compperf_project.load(Path(app.srcdir).parent / "pyproject.toml")
    found = _example(pagename, project.chapters)
    body = context.get("body")
    if found is None or not isinstance(body, str) or "</h1>" not in body:
        return
    try:
        notebooks = settings(Path(app.srcdir).parent / "pyproject.toml")
    except compperf_project.ProjectError as error:
        _say_once(app, f"compperf: no Open in Colab links: {error}")
        return
    url = colab_url(notebooks, app.config.language, *found)
    link = (
        f'<p class="compperf-colab"><a class="reference external" href="{html.escape(url)}" '
        f'title="{html.escape(_(BUTTON_TITLE))}" rel="noopener" '
        'style="display:inline-block;padding:0.2em 0.8em;border:1px solid currentColor;'
        f'border-radius:0.3em;text-decoration:none">{html.escape(_(BUTTON))}</a></p>'
    )
    at = body.index("</h1>") + len("</h1>")
    context["body"] = body[:at] + link + body[at:]


def setup(app: Sphinx) -> None:
    """Connect the button (called from :func:`compperf_docs.publish.setup`)."""
    app.connect("html-page-context", add_button)


def main(argv: list[str] | None = None) -> int:
    """``colab.py publish DEST [--revision SHA]``: copy the built notebooks into DEST."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("command", choices=["publish"])
    parser.add_argument("destination", type=Path)
    parser.add_argument("--revision")
    parser.add_argument("--docs", type=Path, default=Path(__file__).resolve().parents[3])
    args = parser.parse_args(argv)
    written = publish(args.docs, args.destination, args.revision)
    print(f"{len(written)} notebooks published under {args.destination}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
