"""Every catalog says each glossary term the one way its language's glossary says it.

The glossaries are ``docs/locales/<lang>/glossary.tsv`` (see tests/i18n/glossary.py); the
catalogs are the pages' (``docs/locales``) and what compperf and the examples print, draw
and comment (``src/compperf/locales``).
"""

from __future__ import annotations

from pathlib import Path

import compperf_project
import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po
from glossary import LOCALES, ROOT, glossary_problems, load_glossary, message_problems

PACKAGE_LOCALES = ROOT / "src" / "compperf" / "locales"
TRANSLATED = compperf_project.load().codes[1:]
CATALOGS = sorted(
    path
    for code in TRANSLATED
    for folder in (LOCALES, PACKAGE_LOCALES)
    for path in (folder / code / "LC_MESSAGES").rglob("*.po")
    if path.name != "sphinx.po"  # the theme's interface strings
)
# The concepts issue 22 names; every translated language's glossary has a row for each.
REQUIRED = (
    "eager mode", "guard (Dynamo)", "thread (CPU)", "stream (CUDA)", "trace / tracing",
    "operation", "batch / batch size", "synchronize", "kernel launch", "warm-up",
    "unclear (verdict)",
)  # fmt: skip


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _language(path: Path) -> str:
    return next(code for code in TRANSLATED if f"/{code}/" in path.as_posix())


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_language_has_a_glossary_of_the_shared_concepts(code: str) -> None:
    terms = {term.english for term in load_glossary(code)}
    assert not set(REQUIRED) - terms, f"{code}/glossary.tsv lacks {set(REQUIRED) - terms}"


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_catalog_uses_the_glossary(path: Path) -> None:
    with path.open("rb") as handle:
        catalog = read_po(handle)
    problems = glossary_problems(catalog, load_glossary(_language(path)), _name(path))
    assert not problems, "\n".join(problems)


def test_the_check_names_an_other_term_an_inflection_and_an_exception() -> None:
    ru = load_glossary("ru")
    zh = load_glossary("zh_CN")
    assert message_problems("Each CUDA stream runs in order.", "Каждый поток CUDA …", ru)
    assert not message_problems("Two streams.", "Два CUDA-стрима.", ru)  # an inflected form
    assert not message_problems("A stream and a thread.", "Стрим и поток.", ru)  # a thread
    assert message_problems("The batch size.", "Размер пакета.", ru)
    assert not message_problems("The ``batch`` package.", "Пакет ``batch``.", ru)  # a literal
    assert message_problems("Dynamo traces it.", "Dynamo 跟踪它。", zh)
    assert message_problems("Two operations.", "两个操作。", zh)
    assert not message_problems("The operating system.", "操作系统。", zh)
    catalog = Catalog(locale="ru")
    catalog[("guard")] = Message("guard", "проверка")
    (problem,) = glossary_problems(catalog, ru, "x.po")
    assert problem.startswith("x.po: 'guard': 'guard (Dynamo)'")
    assert "охранное условие" in problem
