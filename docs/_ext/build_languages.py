"""Build the site's HTML in several languages, one after the other, in one Python process.

``nox -s docs`` runs this instead of one ``sphinx-build`` per language: Sphinx, its
extensions, matplotlib and Jupyter's libraries are imported once (about two seconds of
each build with nothing to do), so a rebuild with nothing changed costs little more than
one language::

    python docs/_ext/build_languages.py SOURCE HTML_ROOT DOCTREES_ROOT en,zh_CN,ru [ARGS...]

Each language builds into ``HTML_ROOT/<code>`` with doctrees in ``DOCTREES_ROOT/<code>``;
ARGS go to every sphinx-build. The first failing language stops the run with its status.
"""

from __future__ import annotations

import sys
from pathlib import Path

import sphinx.locale
from sphinx.cmd.build import build_main

__all__ = ["build", "main"]


def _forget_translations() -> None:
    """Drop the previous language's message catalogs before the next build.

    ``sphinx.locale.init`` merges a new language's catalogs into the translators it
    already holds (a Russian build would show Chinese labels after a Chinese one), so one
    process building several languages clears them, as Sphinx's own test fixtures do.
    """
    translators = getattr(sphinx.locale, "translators", None)
    if not hasattr(translators, "clear"):
        raise SystemExit(
            "build_languages.py: sphinx.locale.translators is gone in this Sphinx "
            f"({sphinx.__version__}); build each language with its own sphinx-build"
        )
    translators.clear()


def build(source: Path, html: Path, doctrees: Path, languages: list[str], args: list[str]) -> int:
    """Build each language in turn; the exit status of the first that fails, else 0."""
    for language in languages:
        _forget_translations()
        print(f"build_languages.py: building {language}", flush=True)
        status = build_main(
            ["-b", "html", "-D", f"language={language}", *args,
             "-d", str(doctrees / language), str(source), str(html / language)]
        )  # fmt: skip
        if status:
            return status
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    source, html, doctrees, languages, *args = argv
    codes = [code for code in languages.split(",") if code]
    return build(Path(source), Path(html), Path(doctrees), codes, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
