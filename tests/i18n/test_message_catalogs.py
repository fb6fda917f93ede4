"""The catalogs of what compperf and its examples print, draw and comment (src/compperf/locales).

A catalog that fails here makes a zh_CN or ru page (or a downloaded script) print English,
or fail to print at all. ``nox -s translations`` extracts, merges and compiles them; a
translator fills in every msgstr. The checks live in message_checks.py.
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path

import compperf_project
import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.plurals import get_plural
from babel.messages.pofile import write_po
from compperf_docs import message_catalogs
from message_checks import (
    catalog_problems,
    compiled_problems,
    conflict_problems,
    folder_problems,
    read_catalog,
    sync_problems,
)

LOCALES = message_catalogs.LOCALES
# Every language but the first, the one the messages are written in.
TRANSLATED = compperf_project.load().codes[1:]
CATALOGS = sorted(
    path for code in TRANSLATED for path in (LOCALES / code / "LC_MESSAGES").rglob("*.po")
)
DOMAINS = message_catalogs.sources()


def _name(path: Path) -> str:
    return path.relative_to(LOCALES).as_posix()


def _domain(path: Path) -> str:
    folder = next(parent for parent in path.parents if parent.name == "LC_MESSAGES")
    return path.relative_to(folder).with_suffix("").as_posix()


@cache
def _template(domain: str) -> Catalog:
    return message_catalogs.template(domain, DOMAINS[domain])


def _explain(problems: list[str]) -> str:
    return f"{len(problems)} problems:\n" + "\n".join(problems)


def test_compperf_has_catalogs_in_every_language() -> None:
    for code in TRANSLATED:
        path = LOCALES / code / "LC_MESSAGES" / "compperf.po"
        assert path.is_file(), f"{path} is missing: run nox -s translations, then translate it"


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_every_source_has_its_catalogs(domain: str) -> None:
    paths = [LOCALES / code / "LC_MESSAGES" / f"{domain}.po" for code in TRANSLATED]
    missing = [str(path) for path in paths if not path.is_file()]
    if domain != "compperf" and len(missing) == len(paths):
        # An example's catalogs are delivered with its translation, all languages at once.
        pytest.skip(f"no catalogs for {domain} yet (nox -s translations creates them)")
    assert not missing, f"missing: {', '.join(missing)}; run nox -s translations"


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_catalog_belongs_to_a_source(path: Path) -> None:
    assert _domain(path) in DOMAINS, (
        f"{path}: no source file {_domain(path)}.py any more; nox -s translations deletes it"
    )


@pytest.mark.parametrize("code", TRANSLATED)
def test_one_message_has_one_translation_per_language(code: str) -> None:
    problems = conflict_problems(path for path in CATALOGS if path.is_relative_to(LOCALES / code))
    assert not problems, _explain(problems)


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_catalog_is_translated_with_every_placeholder(path: Path) -> None:
    problems = catalog_problems(path)
    assert not problems, _explain(problems)


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_catalog_has_the_plural_forms_of_its_language(path: Path) -> None:
    catalog = read_catalog(path)
    code = path.relative_to(LOCALES).parts[0]
    expected = get_plural(code)
    assert (catalog.num_plurals, catalog.plural_expr) == (
        expected.num_plurals,
        expected.plural_expr,
    ), f"{path}: Plural-Forms {catalog.plural_forms!r}, {code} needs {expected.plural_forms!r}"


@pytest.mark.parametrize("path", CATALOGS, ids=_name)
def test_compiled_catalog_matches(path: Path) -> None:
    problems = compiled_problems(path)
    assert not problems, _explain(problems)


@pytest.mark.parametrize("path", [path for path in CATALOGS if _domain(path) in DOMAINS], ids=_name)
def test_catalog_holds_what_its_source_says(path: Path) -> None:
    problems = sync_problems(path, _template(_domain(path)))
    assert not problems, _explain(problems)


def test_the_package_speaks_through_its_catalog() -> None:
    """compperf's own sentences are extracted: the checks above are not vacuous."""
    extracted = {message.id for message in _template("compperf") if message.id}
    for msgid in ("{n} torch thread", "device", "{category} caught: {message}"):
        assert any(msgid in (m if isinstance(m, tuple) else (m,)) for m in extracted), msgid


# The checks themselves, on crafted catalogs.


def _write(folder: Path, entries: list[tuple[object, object]], *, code: str = "ru") -> Path:
    catalog = Catalog(locale=code)
    for msgid, msgstr in entries:
        catalog.add(msgid, msgstr, flags=("python-brace-format",))
    path = folder / code / "LC_MESSAGES" / "compperf.po"
    path.parent.mkdir(parents=True)
    buffer = io.BytesIO()
    write_po(buffer, catalog)
    path.write_bytes(buffer.getvalue())
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    path.with_suffix(".mo").write_bytes(buffer.getvalue())
    return path


def test_a_translation_that_drops_or_renames_a_placeholder_is_named(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            ("{n} runs on {device}", "{n} запусков на {device}"),  # faithful
            ("{row:<28}{n:>6.1f}", "{row:<34}{n:>8.1f}"),  # wider columns, same number
            ("Took {seconds:.2f} s on {device}", "Заняло {seconds:.2f} с"),  # dropped
            ("Measured on {device}", "Измерено на {устройство}"),  # renamed
            ("IQR is {share:.0%}", "IQR {share}"),  # format spec lost
            (("{n} run", "{n} runs"), ("{n} запуск", "{n} запуска", "запусков")),  # a form
        ],
    )
    problems = catalog_problems(path)
    assert len(problems) == 4, _explain(problems)
    dropped, renamed, spec, plural = problems
    assert dropped.startswith(f"{path}: msgid 'Took {{seconds:.2f}} s on {{device}}' ")
    assert "msgstr 'Заняло {seconds:.2f} с' drops {device} (the message has" in dropped
    assert renamed.startswith(f"{path}: msgid 'Measured on {{device}}' ")
    assert "drops {device} and adds {устройство}" in renamed
    assert "drops {share:.0%} and adds {share}" in spec
    assert plural.startswith(f"{path}: msgid '{{n}} run' ")
    assert "msgstr[2] 'запусков' drops {n}" in plural


def test_untranslated_fuzzy_and_missing_forms_are_named(tmp_path: Path) -> None:
    path = _write(tmp_path, [("device", ""), (("{n} run", "{n} runs"), ("{n} запуск", "x"))])
    catalog = read_catalog(path)
    catalog["device"].string = "устройство"
    catalog["device"].flags.add("fuzzy")
    buffer = io.BytesIO()
    write_po(buffer, catalog)
    path.write_bytes(buffer.getvalue())
    problems = catalog_problems(path)
    assert any("msgid 'device' is fuzzy" in p for p in problems), problems
    # babel writes as many forms as the language has: the missing one is empty.
    assert any("msgid '{n} run' is not translated" in p for p in problems), problems
    empty = _write(tmp_path / "empty", [("device", "")])
    assert catalog_problems(empty) == [f"{empty}: msgid 'device' is not translated (empty msgstr)"]


def test_a_stale_compiled_catalog_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, [("device", "устройство")])
    assert compiled_problems(path) == []
    path.write_text(path.read_text(encoding="utf-8").replace("устройство", "прибор"), "utf-8")
    problems = compiled_problems(path)
    assert len(problems) == 1, problems
    assert "first msgid 'device'" in problems[0]
    assert problems[0].startswith(str(path.with_suffix(".mo")))
    path.with_suffix(".mo").unlink()
    assert folder_problems(tmp_path) == [
        f"{path.with_suffix('.mo')}: missing; nox -s translations compiles it from compperf.po"
    ]


def test_a_catalog_behind_its_source_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, [("device", "устройство"), ("gone", "ушло")])
    template = Catalog()
    template.add("device")
    template.add("new {n}")
    problems = sync_problems(path, template)
    assert problems == [
        (
            f"{path}: msgid 'new {{n}}' is in the sources but not in the catalog; "
            "run nox -s translations"
        ),
        f"{path}: msgid 'gone' is no longer in the sources; run nox -s translations",
    ]


def test_one_message_translated_two_ways_is_named(tmp_path: Path) -> None:
    first = _write(tmp_path / "a", [("{n} example", "{n} пример")])
    second = _write(tmp_path / "b", [("{n} example", "{n} примера")])  # another case
    problems = conflict_problems([first, second])
    assert len(problems) == 1, _explain(problems)
    assert problems[0].startswith(f"{second}: msgid '{{n}} example' is translated as")
    assert f"'{{n}} пример' in {first}" in problems[0]
