"""The translation catalogs: complete, not fuzzy, valid, faithful to their source, in sync.

A catalog that fails here shows (parts of) its page in English. ``nox -s translations``
brings the catalogs in line with the English sources; a translator then fills them in.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import compperf_project
import pytest
import tiny_site
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from compperf_docs.execute.provenance import PROVENANCE_MARKER
from docutils import nodes as docutils_nodes
from i18n_markup import markup_tokens

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LOCALES = DOCS / "locales"
# Every language but the first, the source language the pages are written in.
TRANSLATED = compperf_project.load().codes[1:]
CATALOGS = sorted(
    path for code in TRANSLATED for path in (LOCALES / code / "LC_MESSAGES").rglob("*.po")
)
# What the translations session passes on (noxfile.py): a fixed POT-Creation-Date.
CATALOG_EPOCH = "1767225600"


def _name(path: Path) -> str:
    return path.relative_to(LOCALES).as_posix()


def _read(path: Path) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, abort_invalid=True)


def _messages(catalog: Catalog) -> list:
    return [message for message in catalog if message.id]


def test_every_language_has_catalogs() -> None:
    for code in TRANSLATED:
        assert (LOCALES / code / "LC_MESSAGES" / "sphinx.po").is_file(), code
        assert (LOCALES / code / "LC_MESSAGES" / "index.po").is_file(), code


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_catalog_is_complete_and_not_fuzzy(path: Path) -> None:
    catalog = _read(path)
    untranslated = [m.id for m in _messages(catalog) if not m.string]
    fuzzy = [m.id for m in _messages(catalog) if m.fuzzy]
    problems = [f"untranslated: {msgid!r}" for msgid in untranslated]
    problems += [f"fuzzy: {msgid!r}" for msgid in fuzzy]
    assert not problems, (
        f"{_name(path)}: {len(untranslated)} of {len(_messages(catalog))} messages "
        f"untranslated, {len(fuzzy)} fuzzy; first: {problems[0]}"
    )


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_catalog_passes_msgfmt_check(path: Path) -> None:
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:  # GNU gettext absent: babel's own checks (formats, plurals)
        problems = [(m.id, errors) for m, errors in _read(path).check()]
        assert not problems, f"{_name(path)}: {problems}"
        return
    result = subprocess.run(
        [msgfmt, "--check", "--output-file", os.devnull, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert not result.stderr, result.stderr  # warnings too, e.g. a header left at its default


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_translation_keeps_references_literals_and_substitutions(path: Path) -> None:
    changed = [
        (m.id, m.string, markup_tokens(m.id) - markup_tokens(m.string))
        for m in _messages(_read(path))
        if m.string and markup_tokens(m.id) != markup_tokens(m.string)
    ]
    assert not changed, "\n".join(
        f"{_name(path)}: {msgid!r}\n  -> {msgstr!r}\n  lost or changed: {dict(lost)}"
        for msgid, msgstr, lost in changed
    )


def _extract(docs: Path, out: Path) -> subprocess.Popen[str]:
    """Start the translations session's extraction (nothing executes) into ``out``."""
    cache = out.parent / f"{out.name}-cache"
    # jieba's pkg_resources warning under setuptools 80.9 (see filterwarnings in pyproject).
    env = dict(
        os.environ,
        SOURCE_DATE_EPOCH=CATALOG_EPOCH,
        PYTHONWARNINGS="ignore:pkg_resources is deprecated as an API:UserWarning",
    )
    for name in ("MPLCONFIGDIR", "IPYTHONDIR", "XDG_CACHE_HOME", "TMPDIR"):
        env[name] = str(cache / name.lower())
        Path(env[name]).mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-b", "gettext", "-E", "-W", "--keep-going", "-q",
         "-D", "plot_gallery=0", "-D", "nb_execution_mode=off",
         "-d", str(out.parent / f"{out.name}-doctrees"), str(docs), str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Message templates extracted twice, side by side: two processes, each with a copy of
    docs/ and examples/ of its own (sphinx-gallery writes into its sources) laid out alike,
    so that the templates' source locations read the same."""
    root = tmp_path_factory.mktemp("extract")
    generated = shutil.ignore_patterns("_build", "auto_examples", "locales", "jupyter_execute")
    runs, outputs = [], []
    for name in ("first", "second"):
        copy = root / name
        shutil.copytree(DOCS, copy / "docs", ignore=generated)
        shutil.copytree(ROOT / "examples", copy / "examples")
        shutil.copy(ROOT / "pyproject.toml", copy)  # [tool.compperf]: chapters, languages
        outputs.append(copy / "gettext")
        runs.append(_extract(copy / "docs", outputs[-1]))
    try:
        logs = [run.communicate(timeout=tiny_site.HANG_GUARD)[0] for run in runs]
    finally:
        for run in runs:
            run.kill()
    for run, log in zip(runs, logs, strict=True):
        assert run.returncode == 0, log
    return outputs[0], outputs[1]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.pot")}


def test_extraction_is_stable(extracted: tuple[Path, Path]) -> None:
    first, second = (_files(folder) for folder in extracted)
    assert first.keys() == second.keys()
    assert [name for name in first if first[name] != second[name]] == []


# Text that changes from run to run: the running-time line, the execution-times pages
# ("00:08.968"), and captured output (whose first line says where it was measured).
_RUN_DEPENDENT = re.compile(
    r"Total running time|\d+ minutes \d|\b\d\d:\d\d\.\d{3}\b|" + PROVENANCE_MARKER
)


def test_no_run_dependent_message_is_extracted(extracted: tuple[Path, Path]) -> None:
    pages = {n: c for n, c in _files(extracted[0]).items() if n != "sphinx.pot"}
    found = [
        (name, m.id)
        for name, content in pages.items()
        for m in _messages(read_po(content.decode("utf-8").splitlines()))
        if _RUN_DEPENDENT.search(m.id)
    ]
    assert not found


def test_catalogs_match_the_english_sources(extracted: tuple[Path, Path]) -> None:
    """Every page has a catalog per language, holding exactly the page's current messages."""
    templates = {
        name.removesuffix(".pot"): {m.id for m in _messages(read_po(content.splitlines()))}
        for name, content in ((n, c.decode("utf-8")) for n, c in _files(extracted[0]).items())
    }
    problems = []
    for code in TRANSLATED:
        folder = LOCALES / code / "LC_MESSAGES"
        catalogs = {p.relative_to(folder).with_suffix("").as_posix(): p for p in CATALOGS
                    if p.is_relative_to(folder)}  # fmt: skip
        for page, ids in sorted(templates.items()):
            if page not in catalogs:
                problems.append(f"{code}: no catalog for {page}")
                continue
            have = {m.id for m in _messages(_read(catalogs[page]))}
            if have != ids:
                problems.append(
                    f"{code}/{page}: {len(ids - have)} new, {len(have - ids)} stale messages"
                )
        problems += [
            f"{code}: {page}.po belongs to no page" for page in catalogs.keys() - templates.keys()
        ]
    assert not problems, "run `nox -s translations`:\n" + "\n".join(problems)


def _rest_problems(text: str) -> list[str]:
    """What docutils reports about the inline markup of ``text`` (roles taken as known)."""
    from docutils.core import publish_doctree
    from docutils.parsers.rst import roles
    from docutils.parsers.rst.roles import register_generic_role

    for name in ("ref", "doc", "func", "class", "meth", "mod", "attr", "obj", "exc"):
        if name not in roles._roles:
            register_generic_role(name, docutils_nodes.literal)
    stream = io.StringIO()
    settings = {"report_level": 2, "halt_level": 5, "warning_stream": stream}
    publish_doctree(text, settings_overrides=settings)
    return [line for line in stream.getvalue().splitlines() if "start-string" in line]


def _is_rest_page(path: Path) -> bool:
    """Gallery pages and .rst pages; MyST pages (docs/<page>.md) use another parser."""
    page = path.relative_to(path.parents[len(path.relative_to(LOCALES).parts) - 3])
    return path.name != "sphinx.po" and not (DOCS / page).with_suffix(".md").is_file()


@pytest.mark.parametrize("path", [p for p in CATALOGS if _is_rest_page(p)], ids=_name)
def test_translation_is_valid_inline_rest(path: Path) -> None:
    """A translation whose inline markup reST cannot close fails the build (e.g. a literal
    followed directly by a full-width parenthesis in Chinese)."""
    broken = [
        (m.string, problems[0])
        for m in _messages(_read(path))
        if m.string and not _rest_problems(m.id) and (problems := _rest_problems(m.string))
    ]
    assert not broken, "\n".join(
        f"{_name(path)}: {msgstr!r}\n  {problem} (put a space or '\\ ' after the markup)"
        for msgstr, problem in broken
    )
