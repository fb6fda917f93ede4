"""Learners (issue 26): Open in Colab, the published numbers in the downloads, Results pages.

One tiny build (one chapter, one example that measures and concludes), with a results
record of another machine in its repository's ``results/`` folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from compperf_docs.languages import language_downloads
from compperf_docs.publish import colab, published

sys.path.insert(0, str(Path(__file__).resolve().parent))  # --import-mode=importlib
from test_tiny_build import _build, _project

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "docs.yml"
REVISION = "0123456789abcdef0123456789abcdef01234567"
REPOSITORY = "someone/fork"

MEASURING_EXAMPLE = '''
"""
Time a sum
==========

Times a sum and concludes about it.
"""

# %%
import torch

import compperf

print(compperf.environment("cpu"))
x = torch.ones(1000)
m = compperf.measure(lambda: x.sum(), device="cpu", description="sum of 1000")
print(m)
verdict = compperf.conclude("cheap", "sum of 1000", m.median, m.median * 1.1, below=1.0)
print(verdict.outcome)
'''

OTHER_MACHINE = {
    "format": "compperf-results/1",
    "name": "Some GPU box",
    "made": "2026-11-30T10:00:00+00:00",
    "source": "chapter_run",
    "compperf": "0.1.0",
    "environment": {
        "device": "cuda:0",
        "device_name": "NVIDIA H200",
        "accelerators": ["NVIDIA H200"],
        "torch": "2.13.0+cu130",
        "cuda": "13.0",
        "cudnn": "91000",
        "cpu": "Some CPU",
        "num_threads": 16,
        "python": "3.12.0",
        "platform": "Linux",
    },
    "examples": {
        "tiny/plot_time": {
            "seconds": 1.0,
            "figures": [{"key": "sum of 1000", "kind": "time", "value": 4.25e-6}],
        }
    },
}


def _build_here(docs: Path) -> subprocess.CompletedProcess[str]:
    """The tiny build, as the workflow runs it: for a repository and a revision."""
    names = ("COMPPERF_REVISION", "COMPPERF_REPOSITORY")
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update(COMPPERF_REVISION=REVISION, COMPPERF_REPOSITORY=REPOSITORY)
    try:
        return _build(docs)
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None) if value is None else os.environ.update({name: value})


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    docs = _project(tmp_path_factory.mktemp("learners"), {"plot_time.py": MEASURING_EXAMPLE})
    (docs / "results").mkdir()
    (docs / "results" / "tiny.rst").write_text(
        ":orphan:\n\nResults\n=======\n\n.. compperf-results:: tiny\n", encoding="utf-8"
    )
    (docs.parent / "results").mkdir()
    (docs.parent / "results" / "gpu.json").write_text(json.dumps(OTHER_MACHINE), "utf-8")
    result = _build_here(docs)
    assert result.returncode == 0, result.stdout + result.stderr
    html = docs / "_build" / "html"
    return SimpleNamespace(docs=docs, html=html)


def test_colab_button_opens_the_notebook_the_workflow_publishes(
    built: SimpleNamespace, tmp_path: Path
) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    site = workflow["jobs"]["site"]
    assert site["env"]["COMPPERF_REVISION"] == "${{ github.sha }}"
    assert site["env"]["COMPPERF_REPOSITORY"] == "${{ github.repository }}"
    (publish,) = [s for s in site["steps"] if "colab.py publish" in s.get("run", "")]
    # The workflow's own command, in the tiny site's checkout.
    command = publish["run"].replace(
        "docs/_ext/compperf_docs/publish/colab.py", str(Path(colab.__file__))
    )
    command += f" --docs {built.docs}"
    env = {**os.environ, "COMPPERF_REVISION": REVISION}
    subprocess.run(["bash", "-e", "-c", command], cwd=tmp_path, env=env, check=True)
    notebooks_job = workflow["jobs"]["notebooks"]
    assert notebooks_job["env"]["BRANCH"] == "${{ needs.plan.outputs.notebooks-branch }}"
    assert "contents" in notebooks_job["permissions"]

    page = (built.html / "auto_examples" / "tiny" / "plot_time.html").read_text("utf-8")
    (url,) = re.findall(r'<p class="compperf-colab"><a [^>]*href="([^"]+)"', page)
    prefix = f"https://colab.research.google.com/github/{REPOSITORY}/blob/notebooks/"
    assert url.startswith(prefix), url
    path = url.removeprefix(prefix)
    assert path == f"{REVISION}/en/tiny/plot_time.ipynb"
    assert (tmp_path / "notebooks" / path).is_file(), sorted((tmp_path / "notebooks").rglob("*"))
    assert "<img" not in page.split('class="compperf-colab"')[1].split("</p>")[0]


def test_language_notebooks_are_where_the_publisher_looks(tmp_path: Path) -> None:
    gallery = tmp_path / "auto_examples" / "tiny"
    for language in ("en", "zh_CN", "ru"):
        expected = published.colab_folder(gallery, language) / "plot_x.ipynb"
        assert colab.built_notebook(tmp_path, language, "tiny", "plot_x") == expected
        url = colab.colab_url(colab.Notebooks("a/b", "nb", "r1"), language, "tiny", "plot_x")
        assert url.endswith(f"/a/b/blob/nb/r1/{language}/tiny/plot_x.ipynb")
    # The copies are made from the downloads of each language.
    assert language_downloads.language_folder(gallery, "ru") != published.colab_folder(
        gallery, "ru"
    )


def test_repository_defaults_to_the_github_pages_address(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("COMPPERF_REPOSITORY", raising=False)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.compperf]\nsite-url = "https://me.github.io/proj/"\n', "utf-8")
    assert colab.settings(pyproject).repository == "me/proj"


def test_downloads_carry_the_published_figures_and_compare(
    built: SimpleNamespace, tmp_path: Path
) -> None:
    gallery = built.docs / "auto_examples" / "tiny"
    figures = json.loads(published.figures_path(gallery, "plot_time").read_text("utf-8"))
    keys = [figure["key"] for figure in figures["figures"]]
    assert keys == ["sum of 1000", "cheap: sum of 1000"], keys
    script = (gallery / "plot_time.py").read_text("utf-8")
    assert script.count("compperf.compare_published(") == 1
    assert script.rstrip().endswith(")")
    notebook = json.loads((gallery / "plot_time.ipynb").read_text("utf-8"))
    last = "".join(notebook["cells"][-1]["source"])
    assert last.startswith("compperf.compare_published(")
    assert [c["metadata"].get("compperf") for c in notebook["cells"]].count("colab") == 0
    # The copy Colab opens: the install cell first, then which runtime to pick.
    copy = json.loads(
        colab.built_notebook(built.docs, "en", "tiny", "plot_time").read_text("utf-8")
    )
    assert copy["cells"][0] == notebook["cells"][0]
    assert copy["cells"][1]["metadata"].get("compperf") == "colab"
    assert "T4 GPU" in "".join(copy["cells"][1]["source"])
    assert copy["cells"][2:] == notebook["cells"][1:]
    # A learner runs the download: the published value is printed beside theirs.
    copy = tmp_path / "plot_time.py"
    copy.write_text(script, encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, str(copy)], capture_output=True, text=True, timeout=120, check=True
    )
    assert "Published: measured on cpu" in ran.stdout, ran.stdout
    table = ran.stdout.split("yours / published")[1]
    assert "sum of 1000" in table
    assert "cheap: sum of 1000" in table
    # Run again, the build changes nothing (no second block, no new notebook cells).
    again = _build_here(built.docs)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (gallery / "plot_time.py").read_text("utf-8") == script


def test_block_without_figures_says_so_once() -> None:
    code = published.block(None)
    text = published.with_block(published.with_block("import compperf\n", code), code)
    assert text.count("compare_published") == 1
    ran = subprocess.run(
        [sys.executable, "-c", text], capture_output=True, text=True, timeout=120, check=True
    )
    assert ran.stdout.count("nothing to compare") == 1


def test_results_page_has_one_column_per_machine(built: SimpleNamespace) -> None:
    page = (built.html / "results" / "tiny.html").read_text("utf-8")
    headers = re.findall(r"<th[^>]*>(.*?)</th>", page, re.DOTALL)
    text = [re.sub(r"<[^>]+>", "", h).strip() for h in headers]
    assert any(t.startswith("this build:") for t in text), text
    assert "Some GPU box" in text
    words = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert "4.25 µs" in words  # the other machine's figure, formatted
    assert "cuda:0 (NVIDIA H200)" in words
    record = json.loads((built.html / "results-record.json").read_text("utf-8"))
    assert record["format"] == "compperf-results/1"
    assert "tiny/plot_time" in record["examples"]


def test_build_reads_no_broken_record(tmp_path: Path) -> None:
    from compperf import records

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**OTHER_MACHINE, "format": "other"}), "utf-8")
    with pytest.raises(ValueError, match="format"):
        records.read_record(bad)


def test_shipped_records_are_valid() -> None:
    from compperf import records

    shipped = sorted((ROOT / "results").glob("*.json"))
    assert shipped, "ship at least this machine's record in results/"
    for path in shipped:
        record = records.read_record(path)
        assert record["examples"], path
        for name in record["examples"]:
            assert (ROOT / "examples" / f"{name}.py").is_file(), (path, name)
        assert any(entry["figures"] for entry in record["examples"].values()), path


def test_results_pages_label_every_key_figure_in_the_readers_language() -> None:
    """Each row of a Results page reads in the page's language: the key, made of the
    example's messages and a claim, read back through the example's catalog and compperf's.
    A key with a part nobody translated is named here (and warned about in the build)."""
    from compperf_docs import results

    from compperf import i18n

    example = "asynchronous/plot_barriers_and_blockers"
    key = "returns early: no blocker vs compperf.synchronize() on <device>"
    assert results.figure_label(key, example, "en") == key
    assert results.figure_label(key, example, "ru") == (
        "возвращает управление раньше: без блокировки против compperf.synchronize() на <device>"
    )
    zh = results.figure_label(key, example, "zh_CN")
    assert "提前返回" in zh, zh
    assert "无阻塞操作" in zh, zh
    assert "returns" not in zh, zh
    assert results.figure_label("wait once, N=1", "asynchronous/plot_cost_model", "ru") == (
        "одно ожидание, N=1"
    )
    untranslated = []
    for path in sorted((ROOT / "results").glob("*.json")):
        for name, entry in json.loads(path.read_text(encoding="utf-8"))["examples"].items():
            for figure in entry["figures"]:
                for language in ("zh_CN", "ru"):
                    try:
                        results.figure_label(figure["key"], name, language)
                    except i18n.MissingTranslation as error:
                        untranslated.append(f"{path.name}: {name}: {error}")
    assert not untranslated, "\n".join(untranslated)


def test_results_pages_write_numbers_and_units_the_readers_way() -> None:
    """A Results page's cells and column titles in the page's language: a Russian decimal
    comma, the time unit and the thread count in the reader's words."""
    from compperf_docs import results

    verdict = {"kind": "verdict", "value": 0.8123, "outcome": "yes"}
    assert results._shown(verdict, "en") == "0.812 (yes)"
    assert results._shown(verdict, "ru") == "0,812 (да)"
    assert results._shown(verdict, "zh_CN") == "0.812 (是)"
    assert results._shown({"kind": "time", "value": 6.37e-6}, "ru") == "6,37 мкс"
    cpu = {"device": "cpu", "device_name": "AMD EPYC", "num_threads": 2}
    record = {"name": "AMD EPYC, 2 threads", "environment": cpu}
    assert results.machine_title(record, "en") == "AMD EPYC, 2 threads"
    assert results.machine_title(record, "ru") == "AMD EPYC, 2 потока"
    assert results.machine_title(record, "zh_CN") == "AMD EPYC, 2 个线程"
    # A title given by hand (python -m compperf.records run ... --name) is the learner's.
    assert results.machine_title({**record, "name": "my laptop"}, "ru") == "my laptop"
    assert results.machine_title(OTHER_MACHINE, "ru") == "Some GPU box"
