"""What a build needs, checked in its first seconds, before any example executes.

``docs/_ext/build_languages.py`` calls :func:`check` before the first language builds: a
zh_CN figure drawn after minutes of executing examples must not be the first to find that
its font is missing. Each problem names what is missing and the command that installs it;
the one optional piece, a C++ compiler for Inductor, is a note (the compiler pages then say
what they could not do).
"""

from __future__ import annotations

import gettext
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Preflight", "check", "cxx_compiler"]

# What `nox -s docs` sets up; a build started by hand needs the same.
NOX_HINT = "`nox -s docs` installs it"


@dataclass
class Preflight:
    """What is missing (``problems``: the build stops) and what is optional (``notes``)."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def cxx_compiler() -> str | None:
    """The C++ compiler Inductor would use on the CPU (``$CXX``, else c++, g++, clang++)."""
    names = [os.environ["CXX"]] if os.environ.get("CXX") else ["c++", "g++", "clang++"]
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def _check_fonts(languages: list[Any], report: Preflight) -> None:
    from compperf_docs.languages import figures

    for language in languages:
        if language.font == "DejaVu Sans":  # matplotlib's own
            continue
        try:
            figures.check_font(language)
        except figures.FigureTextError as error:
            report.problems.append(str(error))


def _check_dot(report: Preflight) -> None:
    try:
        import graphviz  # noqa: F401
    except ImportError:
        report.problems.append(
            "the graphviz Python package is missing (the graph pages draw with it); "
            f"{NOX_HINT}, or: python -m pip install graphviz"
        )
        return
    dot = shutil.which("dot")
    fix = (
        f"{NOX_HINT} (graphviz-pure, linked as `dot` in its virtualenv); by hand: python -m "
        'pip install graphviz-pure && ln -s graphviz-pure "$(dirname "$(command -v python)")/dot"'
        ", or apt-get install graphviz"
    )
    if dot is None:
        report.problems.append(f"no `dot` program on PATH: the graph pages would show text; {fix}")
        return
    try:
        result = subprocess.run(
            [dot, "-Tsvg"], input="digraph { a -> b }", capture_output=True, text=True,
            timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        report.problems.append(f"{dot} does not run ({error}); {fix}")
        return
    if result.returncode or "<svg" not in result.stdout:
        report.problems.append(
            f"{dot} cannot draw a graph (exit {result.returncode}: {result.stderr.strip()}); {fix}"
        )


def _check_catalogs(codes: list[str], source: Path, report: Preflight) -> None:
    """Every catalog the languages read can be read: the pages' .po and compperf's .mo."""
    from babel.messages.pofile import PoFileError, read_po

    import compperf.i18n

    for code in codes:
        for path in sorted((source / "locales" / code / "LC_MESSAGES").rglob("*.po")):
            try:
                with path.open("rb") as handle:
                    read_po(handle, abort_invalid=True)
            except (OSError, PoFileError, UnicodeError, ValueError) as error:
                report.problems.append(
                    f"cannot read the catalog {path} ({error}); fix it with a PO editor, "
                    "or restore it (git checkout) and run `nox -s translations`"
                )
        for path in sorted((compperf.i18n.LOCALES / code / "LC_MESSAGES").rglob("*.mo")):
            try:
                with path.open("rb") as handle:
                    gettext.GNUTranslations(handle)
            except (OSError, UnicodeError, ValueError) as error:
                report.problems.append(
                    f"cannot read the compiled catalog {path} ({error}); run `nox -s "
                    "translations` (it compiles the .mo files from their .po)"
                )


def check(source: Path, codes: list[str], *, executes: bool) -> Preflight:
    """What the build of ``codes`` from ``source`` (the docs folder) lacks.

    ``executes``: whether examples run (not ``--no-exec``, not a merge); only then are
    ``dot`` and the C++ compiler needed.
    """
    import compperf_project

    pyproject = source.resolve().parent / "pyproject.toml"
    project = compperf_project.load(pyproject if pyproject.is_file() else None)
    report = Preflight()
    languages = [project.language(code) for code in codes if code in project.codes]
    _check_fonts(languages, report)
    _check_catalogs([code for code in codes if code != project.codes[0]], source, report)
    if executes:
        _check_dot(report)
        compiler = cxx_compiler()
        if compiler is None:
            report.notes.append(
                "no C++ compiler (c++, g++, clang++ or $CXX): torch.compile cannot generate "
                "CPU code here, and the compiler pages say so where they would use it "
                "(optional; Debian: apt-get install g++)"
            )
        else:
            report.notes.append(f"C++ compiler for Inductor: {compiler}")
    return report
