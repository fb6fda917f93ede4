"""Build the site's HTML in several languages, one after the other, in one Python process.

``nox -s docs`` runs this instead of one ``sphinx-build`` per language: Sphinx, its
extensions, matplotlib and Jupyter's libraries are imported once (about two seconds of
each build with nothing to do), so a rebuild with nothing changed costs little more than
one language::

    python docs/_ext/build_languages.py SOURCE HTML_ROOT DOCTREES_ROOT en,zh_CN,ru [ARGS...]

Each language builds into ``HTML_ROOT/<code>`` with doctrees in ``DOCTREES_ROOT/<code>``;
ARGS go to every sphinx-build. The first failing language stops the run with its status.

Before the first build, :mod:`compperf_docs.preflight` checks what the builds need (the
languages' fonts, readable catalogs, and, when examples execute, Graphviz's ``dot``): a
missing piece stops the run in its first seconds, with the command that installs it. An
error of the site's own making (raised by ``docs/_ext``, or sphinx-gallery's summary of
examples that raised) is printed as one message with exit status 2, instead of Sphinx's
crash report, which asks for a report to Sphinx; ``-T`` keeps Sphinx's full report.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import sphinx._cli.util.errors
import sphinx.locale
from sphinx.cmd.build import build_main
from sphinx.errors import SphinxError

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


EXTENSIONS = Path(__file__).resolve().parent


def _innermost_file(error: BaseException) -> Path | None:
    frames = traceback.extract_tb(error.__traceback__)
    return Path(frames[-1].filename).resolve() if frames else None


def _ours(path: Path | None) -> bool:
    return path is not None and path.is_relative_to(EXTENSIONS)


def own_message(error: BaseException) -> str | None:
    """The one message for an error of the site's own making; ``None`` for any other.

    Ours: a Sphinx error raised in ``docs/_ext`` (missing font, unreadable catalog,
    incomplete shard, ...), any exception raised there that Sphinx wrapped (its
    ``orig_exc``), and sphinx-gallery's summary of the examples that raised.
    """
    where = _innermost_file(error)
    if isinstance(error, SphinxError) and _ours(where):
        return str(error)
    original = getattr(error, "orig_exc", None)
    if isinstance(original, BaseException) and _ours(_innermost_file(original)):
        frame = traceback.extract_tb(original.__traceback__)[-1]
        return (
            f"{type(original).__name__} in {frame.filename}:{frame.lineno} "
            f"({frame.name}): {original}"
        )
    if (
        isinstance(error, SphinxError)
        and where is not None
        and "sphinx_gallery" in where.parts
        and "failing examples" in str(error)
    ):
        return (
            f"{error}\nAn example raised: run it alone (`python examples/<chapter>/<file>.py`), "
            "fix it, and build again; only the changed example executes."
        )
    return None


_sphinx_handle_exception = sphinx._cli.util.errors.handle_exception


def _handle_exception(error: BaseException, /, *, stderr: object = sys.stderr, **options: object):
    """Our errors as one message; anything else (or with ``-T``) as Sphinx reports it."""
    message = None if options.get("print_traceback") else own_message(error)
    if message is None:
        return _sphinx_handle_exception(error, stderr=stderr, **options)
    print(f"\nbuild_languages.py: the build stopped.\n{message}", file=stderr)
    return None


def preflight(source: Path, languages: list[str], args: list[str]) -> int:
    """Check what the builds need before any runs; 1 (and the problems) if something lacks."""
    from compperf_docs import preflight as checks

    options = " ".join(args)
    executes = "plot_gallery=0" not in options and "compperf_reuse_outputs=1" not in options
    report = checks.check(source, languages, executes=executes)
    for note in report.notes:
        print(f"build_languages.py: {note}", flush=True)
    if report.problems:
        print(
            f"build_languages.py: cannot build {', '.join(languages)}; nothing was executed:\n  "
            + "\n  ".join(report.problems),
            file=sys.stderr,
            flush=True,
        )
        return 1
    return 0


def build(source: Path, html: Path, doctrees: Path, languages: list[str], args: list[str]) -> int:
    """Build each language in turn; the exit status of the first that fails, else 0."""
    status = preflight(source, languages, args)
    if status:
        return status
    sphinx._cli.util.errors.handle_exception = _handle_exception
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
