"""Downloads in the page's language: a tiny site built in English, then in Chinese.

The example gets its own page catalog (docs/locales) and its own comment catalog (a
folder named by ``compperf_comment_catalogs``), both written here. Nothing executes in
the Chinese build; its ``.py``, ``.ipynb`` and zips are made from the English copy.
"""

from __future__ import annotations

import io
import json
import re
import runpy
import shutil
import subprocess
import tokenize
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import tiny_site
from compperf_docs.languages import language_notebooks, rst_text
from sphinx_gallery.gen_gallery import _fill_gallery_conf_defaults

DOCS = tiny_site.DOCS
PROJECT = tiny_site.project(chapters=("tiny",))
LANGUAGE = "zh_CN"
if LANGUAGE not in PROJECT.codes:  # pragma: no cover - the site's languages changed
    pytest.skip(f"the site has no {LANGUAGE} build", allow_module_level=True)

CONF = tiny_site.conf(
    tiny_site.TRANSLATED
    + tiny_site.NO_SEARCH_DICTIONARY
    + 'compperf_comment_catalogs = str(DOCS.parent / "comment_locales")\n'
)

EXAMPLE = '''
"""
Sum a tensor
============

Prints where it ran, then a sum, so that you see what the machine did with
the numbers you gave it.
"""

# %%
# The machine
# -----------
# The first line says where the numbers come from.
import torch

import compperf

print(compperf.environment())

# %%
# Adding up
# ---------
# Things to look for:
#
# * the sum, printed below;
# * nothing else.
#
# .. note::
#
#    Sums are exact for integers.

# The numbers from 1 to N, added up
# one after the other.
N = 4
# sphinx_gallery_start_ignore
HIDDEN_SWITCH = "tests only"
# sphinx_gallery_end_ignore
total = int(torch.arange(1, N + 1).sum())  # an integer, not a tensor
print("sum is", total)
'''

PAGE = {
    "Sum a tensor": "张量求和",
    "Prints where it ran, then a sum, so that you see what the machine did with "
    "the numbers you gave it.": "先打印运行的位置，再打印总和，让你看到机器用你给它的数字做了什么；"
    "这一段故意写得很长很长，长到一行放不下，好检查换行。",
    "The machine": "机器",
    "The first line says where the numbers come from.": "第一行说明这些数字从哪里来。",
    "Adding up": "求和",
    "Things to look for:": "要注意的地方：",
    "the sum, printed below;": "下面打印的总和；",
    "nothing else.": "没有别的。",
    "Sums are exact for integers.": "整数的和是精确的。",
}
COMMENTS = {
    "The numbers from 1 to N, added up one after the other.": "从 1 到 N 的数字，一个接一个相加。",
    "an integer, not a tensor": "一个整数，不是张量",
}


def _po(path: Path, messages: dict[str, str], context: str | None = None) -> None:
    tiny_site.write_po(path, LANGUAGE, messages, context=context)


def _project(root: Path) -> Path:
    site = tiny_site.make(
        root, examples={"plot_sum.py": EXAMPLE.lstrip()}, project=PROJECT, conf=CONF,
        wheel=True,
    )  # fmt: skip
    docs = site.docs
    folder = docs / "locales" / LANGUAGE / "LC_MESSAGES"
    folder.mkdir(parents=True)
    shutil.copy(DOCS / "locales" / LANGUAGE / "LC_MESSAGES" / "sphinx.po", folder / "sphinx.po")
    _po(folder / "index.po", {"Tiny": "小站"})
    _po(folder / "auto_examples" / "tiny" / "index.po", {"Tiny chapter": "小章节"})
    _po(folder / "auto_examples" / "tiny" / "plot_sum.po", PAGE)
    comments = site.root / "comment_locales" / LANGUAGE / "LC_MESSAGES" / "examples" / "tiny"
    _po(comments / "plot_sum.po", COMMENTS, context="comment")
    return docs


def _build(docs: Path, language: str) -> subprocess.CompletedProcess[str]:
    return tiny_site.Site(docs.parent).build(language=language)


@pytest.fixture(scope="module")
def tiny(tiny_sites: tiny_site.Sites) -> SimpleNamespace:
    docs = _project(tiny_sites.folder("downloads"))
    for language in ("en", LANGUAGE):
        result = _build(docs, language)
        assert result.returncode == 0, result.stdout + result.stderr
    html = docs / "_build" / "html"
    return SimpleNamespace(docs=docs, html=html, folder=docs / "auto_examples" / f"_{LANGUAGE}")


def _page(tiny: SimpleNamespace, language: str, name: str = "plot_sum") -> Path:
    return tiny.html / language / "auto_examples" / "tiny" / f"{name}.html"


def _downloads(tiny: SimpleNamespace, language: str, name: str = "plot_sum") -> dict[str, Path]:
    """The files a page's download links lead to, by suffix (or zip name)."""
    page = _page(tiny, language, name)
    links = re.findall(r'class="reference download internal" download="" href="([^"]+)"',
                       page.read_text("utf-8"))  # fmt: skip
    return {Path(link).name: (page.parent / link).resolve() for link in links}


def _code_tokens(text: str) -> list[tuple[int, str]]:
    """The script's tokens without comments, blank lines and the module docstring."""
    tokens = [
        (token.type, token.string)
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type not in (tokenize.COMMENT, tokenize.NL)
    ]
    assert tokens[0][0] == tokenize.STRING  # the docstring: prose, translated
    return tokens[1:]


def test_download_differs_only_in_prose_comments_and_one_line(tiny: SimpleNamespace) -> None:
    english = _downloads(tiny, "en")["plot_sum.py"].read_text("utf-8")
    chinese = _downloads(tiny, LANGUAGE)["plot_sum.py"].read_text("utf-8")
    lines = chinese.split("\n")
    added = f'compperf.use_language("{LANGUAGE}")'
    assert lines.count(added) == 1
    assert lines[lines.index(added) - 1] == "import compperf"
    lines.remove(added)
    assert _code_tokens("\n".join(lines)) == _code_tokens(english)
    assert "HIDDEN_SWITCH" not in chinese
    unwrapped = re.sub(r"\n[#* ]*", "", chinese)  # lines joined without their comment marks
    for translated in [*PAGE.values(), *COMMENTS.values()]:
        assert translated in unwrapped, translated
    for english_text in ["Sum a tensor", "The machine", "added up", "not a tensor", "exact for"]:
        assert english_text not in chinese, english_text
    # Titles keep their underlines as wide as the text (a CJK character is two columns).
    assert "\n张量求和\n========\n" in chinese
    assert "\n# 机器\n# ----\n" in chinese
    assert "#    整数的和是精确的。" in chinese  # inside the note, at its indentation
    assert "# 从 1 到 N 的数字，一个接一个相加。\nN = 4" in chinese
    assert "sum())  # 一个整数，不是张量" in chinese
    for line in chinese.split("\n"):
        assert rst_text.columns(line) <= 79, line


def test_notebook_is_made_from_the_translated_script(tiny: SimpleNamespace) -> None:
    def cells(path: Path) -> list[dict]:
        return json.loads(path.read_text("utf-8"))["cells"]

    english = cells(_downloads(tiny, "en")["plot_sum.ipynb"])
    chinese = cells(_downloads(tiny, LANGUAGE)["plot_sum.ipynb"])
    assert [c["cell_type"] for c in chinese] == [c["cell_type"] for c in english]
    # The install cell: the same command, its note in the notebook's language.
    install, english_install = "".join(chinese[0]["source"]), "".join(english[0]["source"])
    assert install.splitlines()[-1] == english_install.splitlines()[-1]
    assert install.startswith("# 安装本笔记本")
    assert "Installs what" not in install
    markdown = ["".join(c["source"]) for c in chinese if c["cell_type"] == "markdown"]
    assert markdown[0].startswith("# 张量求和\n")
    # One paragraph, wrapped in the .py between two characters: no gap in the notebook.
    assert (
        "让你看到机器用你给它的数字做了什么；这一段故意写得很长很长，长到一行放不下，好检查换行。"
        in markdown[0]
    )
    assert "> **备注:** 整数的和是精确的。" in markdown[2]  # Sphinx's own title for a note
    assert "整数的和是精确的。" in markdown[2]
    code = "\n".join("".join(c["source"]) for c in chinese if c["cell_type"] == "code")
    assert f'compperf.use_language("{LANGUAGE}")' in code
    assert "# 从 1 到 N 的数字，一个接一个相加。" in code


def test_notebook_conversion_is_sphinx_gallerys(tiny: SimpleNamespace) -> None:
    """One pandoc run per notebook makes what sphinx-gallery's run per text block made."""
    conf = runpy.run_path(str(tiny.docs / "conf.py"))["sphinx_gallery_conf"]
    conf = _fill_gallery_conf_defaults(conf)
    english = tiny.docs / "auto_examples" / "tiny" / "plot_sum.ipynb"
    conf["first_notebook_cell"] = json.loads(english.read_text("utf-8"))["cells"][0]["source"][0]
    made = language_notebooks.notebook(english.with_suffix(".py"), conf, conf["pypandoc"])
    assert made == english.read_text("utf-8")


def test_zips_hold_the_languages_files(tiny: SimpleNamespace) -> None:
    links = _downloads(tiny, LANGUAGE)
    script = links["plot_sum.py"].read_text("utf-8")
    notebook = links["plot_sum.ipynb"].read_text("utf-8")
    with zipfile.ZipFile(links["plot_sum.zip"]) as archive:
        assert sorted(archive.namelist()) == ["plot_sum.ipynb", "plot_sum.py"]
        assert archive.read("plot_sum.py").decode() == script
        assert archive.read("plot_sum.ipynb").decode() == notebook
    chapter = _downloads(tiny, LANGUAGE, "index")
    assert sorted(chapter) == ["tiny_jupyter.zip", "tiny_python.zip"]
    with zipfile.ZipFile(chapter["tiny_python.zip"]) as archive:
        assert archive.namelist() == ["plot_sum.py"]
        assert archive.read("plot_sum.py").decode() == script
    with zipfile.ZipFile(chapter["tiny_jupyter.zip"]) as archive:
        assert archive.read("plot_sum.ipynb").decode() == notebook
    # English keeps its own, and its chapter zip holds no other language's files.
    english = _downloads(tiny, "en", "index")
    with zipfile.ZipFile(english["tiny_python.zip"]) as archive:
        assert archive.namelist() == ["plot_sum.py"]
        assert "Sum a tensor" in archive.read("plot_sum.py").decode()


def test_page_code_shows_the_translated_comments(tiny: SimpleNamespace) -> None:
    chinese = _page(tiny, LANGUAGE).read_text("utf-8")
    english = _page(tiny, "en").read_text("utf-8")
    assert "从 1 到 N 的数字" in chinese
    assert "一个整数，不是张量" in chinese
    assert "one after the other" not in chinese
    assert "one after the other" in english
    assert "use_language" not in chinese  # only the download selects the language


def test_rebuild_with_nothing_changed_writes_no_download(tiny: SimpleNamespace) -> None:
    files = sorted(tiny.folder.rglob("*.*"))
    before = {path: path.stat().st_mtime_ns for path in files}
    result = _build(tiny.docs, LANGUAGE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {path: path.stat().st_mtime_ns for path in files} == before


def test_missing_paragraph_translation_fails_the_build_naming_it(tiny: SimpleNamespace) -> None:
    catalog = tiny.docs / "locales" / LANGUAGE / "LC_MESSAGES" / "auto_examples" / "tiny"
    catalog = catalog / "plot_sum.po"
    saved = catalog.read_bytes()
    _po(catalog, {k: v for k, v in PAGE.items() if k != "nothing else."})
    try:
        result = _build(tiny.docs, LANGUAGE)
    finally:
        catalog.write_bytes(saved)
    assert result.returncode != 0
    assert "examples/tiny/plot_sum.py" in result.stderr
    assert "prose 'nothing else.'" in result.stderr
    assert str(catalog.relative_to(tiny.docs.parent)) in result.stderr


def test_missing_comment_translation_fails_the_build_naming_it(tiny: SimpleNamespace) -> None:
    catalog = tiny.docs.parent / "comment_locales" / LANGUAGE / "LC_MESSAGES" / "examples"
    catalog = catalog / "tiny" / "plot_sum.po"
    saved = catalog.read_bytes()
    _po(catalog, {k: v for k, v in COMMENTS.items() if "tensor" not in k}, context="comment")
    try:
        result = _build(tiny.docs, LANGUAGE)
    finally:
        catalog.write_bytes(saved)
    assert result.returncode != 0
    assert "examples/tiny/plot_sum.py" in result.stderr
    assert "'an integer, not a tensor'" in result.stderr
    assert str(catalog.relative_to(tiny.docs.parent)) in result.stderr
    again = _build(tiny.docs, LANGUAGE)  # the translation is back: the download follows
    assert again.returncode == 0, again.stdout + again.stderr
    script = _downloads(tiny, LANGUAGE)["plot_sum.py"].read_text("utf-8")
    assert "一个整数，不是张量" in script
