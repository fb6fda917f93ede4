"""Outputs that read (issue 21, item 5), in every language a page is shown in.

Every example runs once (the session's shared run); what it printed is checked as the
English page shows it and as the other languages render it again from its records
(``compperf.i18n.render``, as the docs build does in ``compperf_docs.printed``):

- every line of a message or table compperf printed fits 80 display columns (a CJK
  character takes two): compperf folds longer lines and says constant columns once;
- no raw object repr (``<... object at 0x...>``), no build machine's path (``.nox``,
  ``site-packages``, ``docs/_ext``, sphinx-gallery's frames);
- no bare number on a line of its own: every number printed says what it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import compperf_project
import pytest
from compperf_docs import printed
from harness import ROOT, chapters, examples, shared_run

from compperf import i18n

ALL = [path for chapter in chapters() for path in examples(chapter)]
LANGUAGES = compperf_project.load(ROOT / "pyproject.toml").codes
WIDTH = 80

# What only a build machine has, and what Python prints for an object without a repr.
_LEAKS = re.compile(r" object at 0x[0-9a-f]+|\.nox/|site-packages|docs/_ext/|sphinx_gallery")
# A line that is only a number, with or without its unit: "1", "3", "1.27 s" (any language).
_BARE = re.compile(r"\s*[-+−]?\d[\d.,\u00a0\u202f]*\s*(%|×|x|[nµmu]?s|с|мс|мкс|秒|毫秒)?\s*")


def _pages(path: Path) -> dict[str, str]:
    """What the example printed, as each language's page shows it."""
    run = shared_run(path).check()
    shown = {}
    for code in LANGUAGES:
        texts = {i18n.render(record, "en"): i18n.render(record, code) for record in run.records}
        shown[code] = printed.replace_messages(run.stdout, texts) if code != "en" else run.stdout
    return shown


@pytest.mark.executes
@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_printed_messages_fit_80_columns_in_every_language(path: Path) -> None:
    run = shared_run(path).check()
    wide = [
        f"{code} ({i18n.display_width(line)} columns): {line}"
        for record in run.records
        for code in LANGUAGES
        for line in i18n.render(record, code).splitlines()
        if i18n.display_width(line) > WIDTH
    ]
    assert not wide, f"{path.name}:\n" + "\n".join(wide)


@pytest.mark.executes
@pytest.mark.parametrize("path", ALL, ids=lambda path: path.name)
def test_outputs_show_no_reprs_no_build_paths_and_no_bare_numbers(path: Path) -> None:
    problems = []
    for code, text in _pages(path).items():
        for line in text.splitlines():
            if _LEAKS.search(line):
                problems.append(f"{code}: leaks the machine or an object repr: {line}")
            elif line.strip() and _BARE.fullmatch(line):
                problems.append(f"{code}: a number that says not what it is: {line!r}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_the_checks_catch_what_the_pages_printed_before() -> None:
    """The outputs issue 21 quoted fail these checks."""
    assert _LEAKS.search("<torch.utils.benchmark.utils.common.Measurement object at 0x7f9c>")
    assert _LEAKS.search('  File "/work/main/.nox/docs/lib/python3.11/site-packages/x.py"')
    for bare in ("1", "3", "1.27 s", "11.52 s", "2,48 с"):
        assert _BARE.fullmatch(bare), bare
    for labelled in ("graphs compiled: 3", "1  0.253", "z = [[3.0, 3.0]]"):
        assert not _BARE.fullmatch(labelled), labelled
    wide = "t1: frontend, one operation on cpu: median 7.59 µs per call, IQR 101 ns " * 2
    record = i18n.tr("{text}", text=wide).record
    assert all(i18n.display_width(line) <= WIDTH for line in i18n.render(record, "en").split("\n"))
