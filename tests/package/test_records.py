"""compperf.records: key figures, the learner's comparison table and results records."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import compperf
from compperf import records


@pytest.fixture(autouse=True)
def fresh():
    records.reset()
    yield
    records.reset()
    compperf.use_language("en")


def _work() -> None:
    compperf.environment("cpu")
    x = torch.ones(64)
    compperf.measure(lambda: x.sum(), device="cpu", description="sum")
    compperf.measure(lambda: x.sum(), device="cpu", description="sum")
    compperf.conclude("cheap", "sum", 0.5, 0.8, below=1.0)


def test_measurements_and_verdicts_are_noted_under_stable_keys() -> None:
    _work()
    found = records.figures()
    assert [f["key"] for f in found] == ["sum", "sum #2", "cheap: sum"]
    assert [f["kind"] for f in found] == ["time", "time", "verdict"]
    assert found[2]["outcome"] == "yes"
    assert found[2]["value"] == pytest.approx((0.5 * 0.8) ** 0.5)
    made = records.example_figures("chapter/plot_x", 1.5)
    assert made["format"] == records.FIGURES_FORMAT
    assert made["environment"]["device"] == "cpu"


def test_comparison_prints_published_yours_and_ratio() -> None:
    _work()
    published = records.example_figures("chapter/plot_x")
    published["environment"] = {**published["environment"], "device": "cuda:0",
                                 "device_name": "NVIDIA H200"}  # fmt: skip
    published["figures"][0]["value"] = records.figures()[0]["value"] * 4
    out = io.StringIO()
    compperf.compare_published(published, file=out)
    text = out.getvalue()
    assert "Published: measured on cuda:0 (NVIDIA H200)" in text
    assert "Yours: measured on cpu" in text
    (row,) = [line for line in text.splitlines() if line.startswith("sum  ")]
    assert row.endswith("0.25×")
    assert "(yes)" in text


def test_comparison_in_the_learners_language() -> None:
    _work()
    published = records.example_figures("chapter/plot_x")
    compperf.use_language("ru")
    out = io.StringIO()
    compperf.compare_published(published, file=out)
    assert "Опубликовано" in out.getvalue()
    assert " threads)" not in out.getvalue()  # the thread count in the reader's words
    compperf.use_language("zh_CN")
    out = io.StringIO()
    compperf.compare_published(published, file=out)
    assert "发布" in out.getvalue()


def test_without_a_record_or_a_matching_figure_it_says_so_once() -> None:
    out = io.StringIO()
    compperf.compare_published(None, file=out)
    assert out.getvalue().count("\n") == 1
    _work()
    other = {"environment": {}, "figures": [{"key": "other", "kind": "time", "value": 1.0}]}
    out = io.StringIO()
    compperf.compare_published(other, file=out)
    assert "none of the key figures" in out.getvalue()
    # Said once (one message; folded to 80 columns, so it may take two lines).
    assert out.getvalue().count("nothing to compare") == 1


def test_results_record_round_trips_and_bad_ones_are_named(tmp_path: Path) -> None:
    _work()
    record = records.results_record([records.example_figures("c/plot_x")], source="learner")
    path = tmp_path / "me.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert records.read_record(path) == record
    record["examples"]["c/plot_x"]["figures"][0]["kind"] = "speed"
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match="unknown kind"):
        records.read_record(path)


def test_learners_command_writes_a_record(tmp_path: Path) -> None:
    chapter = tmp_path / "mine"
    chapter.mkdir()
    (chapter / "plot_a.py").write_text(
        textwrap.dedent(
            """
            import torch
            import compperf
            print(compperf.environment("cpu"))
            compperf.measure(lambda: torch.ones(8).sum(), device="cpu", description="tiny")
            """
        ),
        encoding="utf-8",
    )
    out = tmp_path / "me.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "compperf.records",
            "run",
            str(chapter / "plot_a.py"),
            "--out",
            str(out),
            "--name",
            "my laptop",
        ],
        check=True,
        timeout=120,
        capture_output=True,
    )
    record = records.read_record(out)
    assert record["name"] == "my laptop"
    assert record["source"] == "learner"
    assert [f["key"] for f in record["examples"]["mine/plot_a"]["figures"]] == ["tiny"]


def test_the_same_figure_on_another_device_is_compared() -> None:
    compperf.conclude("ready", "loop returns: cpu", 0.5, 0.8, below=1.0)
    published = {
        "environment": {"device": "cuda:0"},
        "figures": [{"key": "ready: loop returns: cuda:0", "kind": "verdict", "value": 0.5,
                     "low": 0.4, "high": 0.6, "outcome": "yes"}],
    }  # fmt: skip
    out = io.StringIO()
    compperf.compare_published(published, file=out)
    assert "ready: loop returns: cuda:0" in out.getvalue()
    assert records.comparable("x.cpu() on cpu") == "x.cpu() on <device>"


def test_keys_are_english_in_any_language() -> None:
    compperf.use_language("ru")
    x = torch.ones(8)
    compperf.measure(lambda: x.sum(), device="cpu", description=compperf.tr("median"))
    compperf.conclude("faster", compperf.tr("median"), 0.5, 0.8, below=1.0)
    assert [f["key"] for f in records.figures()] == ["median", "faster: median"]


def _translated_comparison() -> None:
    x = torch.ones(8)
    median, published = compperf.tr("median"), compperf.tr("published")
    comparison = compperf.interleave(
        {median: lambda: x.sum(), published: lambda: x.mean()},
        device="cpu",
        budget=0.01,
        min_rounds=2,
    )
    comparison.faster(median, published)
    comparison.pays_back(str(median), str(published), one_off=0.0)


def test_translated_variant_names_make_the_published_keys() -> None:
    # The published page ran in English; a learner's zh_CN or ru download names the same
    # variants in their language, and its default subjects ("a vs b") must match.
    _translated_comparison()
    published = records.example_figures("c/plot_x")
    assert [f["key"] for f in published["figures"] if f["kind"] == "verdict"] == [
        "faster: median vs published",
        "pays back: median vs published",
    ]
    for language, label, versus in (("ru", "медиана", "против"), ("zh_CN", "中位数", "对比")):
        records.reset()
        compperf.use_language(language)
        _translated_comparison()
        verdicts = [f["key"] for f in records.figures() if f["kind"] == "verdict"]
        assert verdicts == ["faster: median vs published", "pays back: median vs published"]
        out = io.StringIO()
        compperf.compare_published(published, file=out)
        rows = [line for line in out.getvalue().splitlines() if label in line]
        assert len(rows) == 3, out.getvalue()  # its timing and two verdicts, in the reader's words
        assert sum(versus in row for row in rows) == 2, rows


def test_comparison_table_names_claims_in_the_learners_language() -> None:
    # A verdict's claim ("faster", "pays back") is an English key: the learner's table
    # shows it in their words, as it shows the variants' names.
    for language, words in (
        ("ru", ("быстрее", "окупается", "медиана", "против")),
        ("zh_CN", ("更快", "能回本", "中位数", "对比")),
    ):
        records.reset()
        compperf.use_language("en")
        _translated_comparison()
        published = records.example_figures("c/plot_x")
        records.reset()
        compperf.use_language(language)
        _translated_comparison()
        out = io.StringIO()
        compperf.compare_published(published, file=out)
        text = out.getvalue()
        assert all(word in text for word in words), text
        assert "faster" not in text, text
        assert "pays back" not in text, text


def test_a_key_reads_back_through_the_examples_catalog() -> None:
    label = records.label
    example = "asynchronous/plot_cost_model"
    assert label("wait once, N=32", "ru", example) == "одно ожидание, N=32"
    assert label("wait once, N=32 #2", "zh_CN", example) == "只等待一次，N=32 #2"
    assert (
        label("faster: wait once, N=32 vs wait every step, N=32", "ru", example, strict=True)
        == "быстрее: одно ожидание, N=32 против ожидание на каждом шаге, N=32"
    )
    assert label("faster: wait once, N=32", "en", example) == "faster: wait once, N=32"
    # Code and devices read as they are; an English word never does.
    assert label(".item()", "ru", "asynchronous/plot_barriers_and_blockers", strict=True) == (
        ".item()"
    )
    with pytest.raises(compperf.i18n.MissingTranslation, match="no ru translation"):
        label("faster: some words nobody translated", "ru", example, strict=True)
    assert label("some words", "ru", example) == "some words"  # without strict: English
    for claim in records.CLAIMS:  # every claim a verdict makes has its words
        for language in ("ru", "zh_CN"):
            assert label(claim, language, strict=True) != claim, (claim, language)
