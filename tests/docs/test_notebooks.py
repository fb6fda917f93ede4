"""Downloaded notebooks read as Markdown: the check that finds reST, and the built notebooks.

The tiny build (test_tiny_build.py) proves that the conversion removes roles, tables and
directives; here the check itself is shown to fail and pass, and then it scans every
notebook that a site build left behind (the gallery's and each language's downloads).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compperf_docs.publish import notebook_check

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize(
    ("markdown", "what"),
    [
        (":func:`compile` turns text into bytecode.", "role"),
        ("See :py:class:`torch.nn.Module`.", "role"),
        ('`compile`{.interpreted-text role="func"} runs.', "role left as attributes"),
        (".. list-table::\n   :header-rows: 1\n", "directive or target"),
        ("  .. note::", "directive or target"),
        (".. _run-yourself:", "directive or target"),
        (".. |version| replace:: 1", "directive or target"),
        ("   :class: dropdown", "directive option"),
        ("Built with |release| today.", "substitution"),
        ("Built with \\|release\\| today.", "substitution"),
        ("Read `the docs <https://pytorch.org>`_ first.", "reST link"),
        ("Read `the docs <https://pytorch.org>`__ first.", "reST link"),
        ("Summary\n-------\n", "section underline"),
        ("Title\n=====\n", "section underline"),
        ("The code is as follows::\n\n    x = 1\n", "literal-block marker"),
        ("[x](##SUBST##|x|)", "unresolved reference"),
        ("| a | b |\n|---|---|\n| c | d, and\nmore d |\n", "table row split across lines"),
    ],
)
def test_check_finds_rest(markdown: str, what: str) -> None:
    problems = notebook_check.rest_in_markdown(markdown)
    assert any(f": {what}: " in problem for problem in problems), problems


@pytest.mark.parametrize(
    "markdown",
    [
        "# Summary\n\n- one\n- two\n",
        "`compile` turns text into bytecode; see [the page](https://e.org/a.html#b).",
        "| Format | Needs Python |\n|---|---|\n| `.pt` | No |\n",
        "| a |b|\n|:--|--:|\n",
        "Text.\n\n---\n\nMore text.",
        "> **Note:** compiling takes seconds.",
        "<details>\n<summary>Answer</summary>\n\n42\n\n</details>",
        "$t = t_1 + N t_2$ and `torch::jit::load`.",
        "```rst\n.. note::\n   :class: x\nTitle\n=====\n```",
        "Time: 3 s; ratio 2:1 `x`.",
    ],
)
def test_check_passes_markdown(markdown: str) -> None:
    assert notebook_check.rest_in_markdown(markdown) == []


def test_check_reads_only_markdown_cells(tmp_path: Path) -> None:
    notebook = tmp_path / "example.ipynb"
    cells = [
        {"cell_type": "code", "source": ["# .. note:: in code is code\n"], "metadata": {}},
        {"cell_type": "markdown", "source": ["# Title\n", "\n", "See :func:`f`.\n"]},
    ]
    notebook.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert notebook_check.notebook_problems(notebook) == ["cell 1, line 3: role: :func:`f`"]


def _built_notebooks() -> list[Path]:
    gallery = sorted((DOCS / "auto_examples").glob("**/*.ipynb"))
    downloads = sorted((DOCS / "_build" / "html").glob("*/_downloads/**/*.ipynb"))
    return gallery + downloads


BUILT = _built_notebooks()


@pytest.mark.skipif(not BUILT, reason="no site built here: `nox -s docs` writes the notebooks")
# ids as a list: pytest 8.0 calls an ids function even for an empty parameter set.
@pytest.mark.parametrize("notebook", BUILT, ids=[str(path.relative_to(DOCS)) for path in BUILT])
def test_built_notebook_has_no_rest(notebook: Path) -> None:
    problems = notebook_check.notebook_problems(notebook)
    assert not problems, f"{notebook} shows raw markup to its reader:\n" + "\n".join(problems)
