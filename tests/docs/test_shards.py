"""A sharded build of a tiny two-chapter site: each chapter executed in its own copy, merged.

The merged copy's build must execute nothing (no example, no notebook) and produce the
same pages as one unsharded build of the same sources.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import tiny_site
from compperf_docs import shards

# The tiny site's own [tool.compperf]: the real languages, two chapters.
PROJECT = tiny_site.project(site_url="https://example.org/site/", chapters=("one", "two"))

CONF = tiny_site.conf(
    "from compperf_docs import shards\n"
    'nb_execution_mode = "cache"\n'
    "nb_execution_cache_path = str(DOCS / shards.JUPYTER_CACHE)\n"
    "nb_execution_raise_on_error = True\n"
    'nb_execution_excludepatterns = ["auto_examples/**"]\n',
    extensions=("sphinx_gallery.gen_gallery", "myst_nb", "compperf_docs"),
)

INDEX = """
Tiny
====

.. toctree::

   auto_examples/one/index
   auto_examples/two/index
   notebook
"""

NOTEBOOK = """\
---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

# A notebook page

```{code-cell} ipython3
print("notebook says", 6 * 7)
```
"""

EXAMPLE = '''
"""
Chapter {name}
=============

Prints where it ran, then a number, then draws a line.
"""

# %%
import matplotlib.pyplot as plt

import compperf

print(compperf.environment())
print("chapter {name} computed", {number})

# %%
lines = plt.plot([0, 1], [0, {number}])
plt.title("A line")
'''

EXECUTED = re.compile(r"Sphinx-Gallery successfully executed (\d+) out of")
RUNNING_TIME = re.compile(r"\d+ minutes \d+\.\d+ seconds")
# The machine's account of the run (compperf_docs.execute.disturbed.RunLine) differs on every run too.
RUN_ACCOUNT = re.compile(r'(<p class="compperf-run"><strong>[^<]*</strong>)[^<]*(</p>)')


def _project(root: Path) -> Path:
    examples = {
        name: {f"plot_{name}.py": textwrap.dedent(EXAMPLE).format(name=name, number=number)}
        for number, name in enumerate(["one", "two"], start=1)
    }
    headers = {name: f"Chapter {name}\n=============\n\nOne example.\n" for name in examples}
    site = tiny_site.make(
        root, examples=examples, project=PROJECT, conf=CONF, index=INDEX, headers=headers,
        pages={"notebook.md": NOTEBOOK},
    )  # fmt: skip
    return site.docs


def _build(docs: Path, *options: str) -> str:
    """Build ``docs`` (warnings are errors); return the log. Fails the test on error."""
    result = tiny_site.Site(docs.parent).build(*options, quiet=False)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    return log


def _try(docs: Path, *options: str):
    """Build ``docs`` as a reader of its log would (``-q``, warnings stay warnings)."""
    return tiny_site.Site(docs.parent).build(*options, strict=False, nitpicky=False)


def _executed(log: str) -> int:
    return sum(int(count) for count in EXECUTED.findall(log))


def _pages(html: Path) -> dict[str, str]:
    """Every HTML page's text, the running time and the run's account masked (they differ
    on every run)."""
    return {
        str(path.relative_to(html)): RUN_ACCOUNT.sub(
            r"\1<account>\2", RUNNING_TIME.sub("<time>", path.read_text("utf-8"))
        )
        for path in html.rglob("*.html")
    }


def _files(html: Path) -> set[str]:
    return {
        str(path.relative_to(html))
        for path in html.rglob("*")
        if path.is_file() and path.name != ".buildinfo"
    }


@pytest.fixture(scope="module")
def sharded(tiny_sites: tiny_site.Sites) -> SimpleNamespace:
    base = tiny_sites.folder("sharded")
    _project(base / "source")
    copies = {}
    for name in ("whole", "one", "two", "merged"):
        shutil.copytree(base / "source", base / name)
        copies[name] = base / name / "docs"
    logs = {"whole": _build(copies["whole"])}
    for chapter in ("one", "two"):
        logs[chapter] = _build(copies[chapter], "-D", f"compperf_chapters={chapter}")
    report = shards.merge(
        [copies["one"], copies["two"]], copies["merged"], copies["merged"].parent / "examples"
    )
    logs["merged"] = _build(copies["merged"], "-D", "compperf_reuse_outputs=1")
    return SimpleNamespace(copies=copies, logs=logs, report=report)


def test_each_shard_executes_only_its_chapter(sharded: SimpleNamespace) -> None:
    assert _executed(sharded.logs["whole"]) == 2
    for chapter, other in (("one", "two"), ("two", "one")):
        assert _executed(sharded.logs[chapter]) == 1
        gallery = sharded.copies[chapter] / "auto_examples"
        assert (gallery / chapter / f"plot_{chapter}.py.md5").is_file()
        assert not (gallery / other / f"plot_{other}.py.md5").exists()
        # The other chapter's page is there, clearly without outputs, and the log says so.
        page = (sharded.copies[chapter] / "_build/html/auto_examples" / other).joinpath(
            f"plot_{other}.html"
        )
        assert "sphx-glr-script-out" not in page.read_text("utf-8")
        assert f"chapter {other} is not executed in this build" in sharded.logs[chapter]


def test_merge_takes_each_chapter_from_the_shard_that_executed_it(
    sharded: SimpleNamespace,
) -> None:
    assert sharded.report.chapters == {
        "one": sharded.copies["one"],
        "two": sharded.copies["two"],
    }
    assert sharded.report.incomplete == {}
    assert sharded.report.notebooks == 1  # both shards ran it; the cache keeps one


def test_merged_build_executes_nothing(sharded: SimpleNamespace) -> None:
    log = sharded.logs["merged"]
    assert _executed(log) == 0
    assert "Executing notebook" not in log
    assert "Using cached notebook" in log


def test_merged_build_has_the_pages_of_an_unsharded_build(sharded: SimpleNamespace) -> None:
    whole = sharded.copies["whole"] / "_build" / "html"
    merged = sharded.copies["merged"] / "_build" / "html"
    assert _files(merged) == _files(whole)
    whole_pages, merged_pages = _pages(whole), _pages(merged)
    assert merged_pages.keys() == whole_pages.keys()
    for name, text in whole_pages.items():
        assert merged_pages[name] == text, name
    assert "chapter two computed 2" in merged_pages["auto_examples/two/plot_two.html"]
    assert "notebook says 42" in merged_pages["notebook.html"]


def test_reusing_outputs_stops_when_a_chapter_is_missing(
    sharded: SimpleNamespace, tmp_path: Path
) -> None:
    shutil.copytree(sharded.copies["one"].parent / "examples", tmp_path / "examples")
    docs = _project_copy(sharded.copies["one"], tmp_path)
    report = shards.merge([sharded.copies["one"]], docs, tmp_path / "examples")
    assert report.incomplete == {"two": ["plot_two.py"]}  # shard one never executed it
    result = _try(docs, "-D", "compperf_reuse_outputs=1")
    assert result.returncode != 0
    assert re.search(r"no current outputs to reuse and would run: two/plot_two\.py", result.stderr)


def test_a_shard_without_outputs_is_one_message_naming_the_fix(
    sharded: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(sharded.copies["one"].parent / "examples", tmp_path / "examples")
    docs = _project_copy(sharded.copies["one"], tmp_path)
    argv = [
        str(sharded.copies["one"]),
        "--docs",
        str(docs),
        "--examples",
        str(tmp_path / "examples"),
    ]
    assert shards.main(argv) == 1
    assert "nox -s docs -- --chapters=two --languages=en" in capsys.readouterr().err
    assert shards.main([str(tmp_path / "nowhere"), "--docs", str(docs)]) == 2
    assert "is not a shard's docs folder" in capsys.readouterr().err
    # The build that would reuse the outputs: our message, not Sphinx's crash report.
    result = tiny_site.Site(docs.parent).build_languages(
        "en", "-q", "-D", "compperf_reuse_outputs=1"
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no current outputs to reuse and would run: two/plot_two.py" in result.stderr
    assert "To report this error to the developers" not in result.stderr


def _project_copy(docs: Path, root: Path) -> Path:
    """A fresh copy of a tiny project's sources (no build outputs) under ``root``."""
    target = root / "docs"
    shutil.copytree(docs, target, ignore=shutil.ignore_patterns("_build", "auto_examples"))
    shutil.copy2(docs.parent / "pyproject.toml", root / "pyproject.toml")
    return target


def test_unchosen_chapter_keeps_its_last_outputs(sharded: SimpleNamespace, tmp_path: Path) -> None:
    # A copy of the unsharded build, where both chapters ran: building only chapter two
    # again executes nothing (its examples are unchanged) and keeps chapter one's outputs.
    shutil.copytree(sharded.copies["whole"].parent, tmp_path / "whole")
    docs = tmp_path / "whole" / "docs"
    log = _build(docs, "-D", "compperf_chapters=two")
    assert _executed(log) == 0
    assert "chapter one is not executed in this build: 1 example(s) keep their last" in log
    page = docs / "_build" / "html" / "auto_examples" / "one" / "plot_one.html"
    assert "chapter one computed 1" in page.read_text("utf-8")


def test_unknown_chapter_is_named(sharded: SimpleNamespace, tmp_path: Path) -> None:
    docs = _project_copy(sharded.copies["one"], tmp_path)
    shutil.copytree(sharded.copies["one"].parent / "examples", tmp_path / "examples")
    result = _try(docs, "-D", "compperf_chapters=three")
    assert result.returncode != 0
    assert "no chapter named three (choose among one, two)" in result.stderr


def test_merged_outputs_carry_recorded_messages_and_figures(sharded: SimpleNamespace) -> None:
    """What the other languages are drawn from travels with a chapter's outputs."""
    for chapter in ("one", "two"):
        gallery = sharded.copies["merged"] / "auto_examples" / chapter
        assert (gallery / f"plot_{chapter}.messages.json").is_file()
        assert (gallery / f"plot_{chapter}.verdicts.json").is_file()
        assert (gallery / "images" / f"sphx_glr_plot_{chapter}_001.pickle").is_file()


@pytest.mark.parametrize(
    "lost",
    ["plot_one.messages.json", "plot_one.verdicts.json", "images/sphx_glr_plot_one_001.pickle"],
)
def test_a_shard_without_records_or_pickles_is_incomplete(
    sharded: SimpleNamespace, tmp_path: Path, lost: str
) -> None:
    shard = tmp_path / "shard"
    shutil.copytree(sharded.copies["one"], shard, ignore=shutil.ignore_patterns("_build"))
    (shard / "auto_examples" / "one" / lost).unlink()
    examples = sharded.copies["one"].parent / "examples"
    assert shards.chapter_status(examples / "one", shard / "auto_examples" / "one") == (
        [],
        ["plot_one.py"],
    )
    docs = _project_copy(sharded.copies["one"], tmp_path / "target")
    assert shards.merge([shard], docs, examples).incomplete["one"] == ["plot_one.py"]


def test_outputs_made_with_other_package_versions_are_refused_naming_them(
    sharded: SimpleNamespace, tmp_path: Path
) -> None:
    shard = tmp_path / "shard"
    shutil.copytree(sharded.copies["one"], shard, ignore=shutil.ignore_patterns("_build"))
    account = shard / "auto_examples" / "one" / "plot_one.verdicts.json"
    run = json.loads(account.read_text("utf-8"))
    run["versions"]["torch"] = "0.0.1"
    account.write_text(json.dumps(run), encoding="utf-8")
    examples = sharded.copies["one"].parent / "examples"
    assert shards.chapter_status(examples / "one", shard / "auto_examples" / "one") == (
        [],
        ["plot_one.py"],
    )
    docs = _project_copy(sharded.copies["one"], tmp_path / "target")
    report = shards.merge([shard], docs, examples)
    assert report.incomplete["one"] == ["plot_one.py"]
    assert "made with torch 0.0.1 (installed: " in report.refused["one"]["plot_one.py"]
