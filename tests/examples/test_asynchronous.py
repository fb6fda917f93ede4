"""The chapter "Asynchronous computation": what each page claims holds when it runs.

Every example runs alone through the shared harness (a fresh process, the tests' fast
settings); a probe expression hands back, as JSON, the values the page computed, and the
records of the messages it printed and drew, which must read in every language.
"""

from __future__ import annotations

import re
import shutil
import unicodedata
from functools import cache
from pathlib import Path

import pytest
from harness import Run, examples, numbers, run_alone, share, shared_run

from compperf import i18n

# Every check here runs the chapter's pages: `nox -s examples`, not `nox -s tests`.
pytestmark = pytest.mark.executes

CHAPTER = "asynchronous"

# What each page's probe returns: the numbers and decisions its printed sentences rest on.
PROBES = {
    "plot_async_matmul.py": """{
        "device": str(device),
        "naive": naive,
        "synchronized": synchronized,
        "timer_median": m,
        "figures": len(plt.get_fignums()),
    }""",
    "plot_async_where_time_goes.py": """{
        "device": str(device),
        "repeats": repeats,
        "runs": len(naive_times),
        "warmup_runs": warmup_runs,
        "timed_runs": len(returned.times),
        "naive_median": returned_row.median,
        "synced_median": ready_row.median,
        "wait_median": waited_row.median,
        "synchronous": synchronous.outcome,
        "cpu_synchronous": cpu_synchronous.outcome,
        "ratio": [ratio.low, ratio.estimate, ratio.high],
        "median_text": compperf.format_time(ready_row.median),
        "peak_share": [share.within.outcome, share.share_low, share.share_high],
        "figures": len(plt.get_fignums()),
    }""",
    "plot_backend_dependency_graph.py": """{
        "device": str(device),
        "operations": [node.name for node in operations],
        "targets": [str(node.target) for node in operations],
        "levels": {node.name: depth for node, depth in level.items()},
        "independent_pairs": independent_pairs,
        "result": graph_module().tolist(),
        "dispatched": dispatched,
        "has_png": png is not None,
        "has_graphviz": graphviz is not None,
        "figures": len(plt.get_fignums()),
    }""",
    "plot_backend_who_schedules.py": """{
        "device": str(device),
        "ran": ran,
        "topological": topological,
        "depth": depth,
        "figures": len(plt.get_fignums()),
    }""",
    "plot_barriers_and_blockers.py": """{
        "device": str(device),
        "rows": [m.description for m in results],
        "blockers": list(blockers),
        "runs": [m.runs for m in results],
        "medians": [m.median for m in results],
        "repeats": repeats,
        "not_measured": sorted(not_measured),
        "returns_early": bool(returns_early),
        "early": early.outcome,
        "lowest_bar": min(
            m.median - m.quartiles[0] for m in results
        ),
        "figures": len(plt.get_fignums()),
    }""",
    "plot_cost_model.py": """{
        "device": str(device),
        "t1": t1, "t2": t2, "t3": t3, "c": c,
        "error_once": error_once, "error_every": error_every,
        "counts": counts, "once": len(once), "every": len(every),
        "faster": faster.outcome,
        "largest_once": compperf.format_time(once[-1].median),
        "largest_every": compperf.format_time(every[-1].median),
        "bar_bottoms": float(min(
            (once_median * 1e6 - quartile_bars(once)[0]).min(),
            (every_median * 1e6 - quartile_bars(every)[0]).min(),
        )),
        "backend_slower": [pipeline(1000, 1.0, 2.0, 0.5), 1.0 + 1000 * 2.0 + 0.5],
        "frontend_slower": [pipeline(1000, 2.0, 1.0, 0.5), 2.0 + 1000 * 1.0 + 0.5],
        "figures": len(plt.get_fignums()),
    }""",
    "plot_frontend_running_ahead.py": """{
        "device": str(device),
        "issued": len(issued),
        "launches": launches,
        "queued_products": queued_products,
        "nothing_queued": nothing_queued.outcome,
        "rounds": rounds,
        "kept_bytes": kept_bytes,
        "expected_bytes": memory_launches * size * size * 4,
        "figures": len(plt.get_fignums()),
    }""",
    "plot_profiler_trace.py": """{
        "device": str(device),
        "trace_path": str(trace_path),
        "trace": __import__("json").loads(trace_path.read_text(encoding="utf-8")),
        "host": len(host),
        "kernels": len(kernels),
        "steps": steps,
        "added": added,
        "link": Download(trace_path)._repr_html_()[:80],
        "figures": len(plt.get_fignums()),
    }""",
}


share(PROBES)  # the session's one run of each example evaluates them


@cache
def _recorded(name: str) -> tuple[Run, list[dict]]:
    """Each example run alone once per test session, with its probe and its messages."""
    run = shared_run(name, PROBES[name]).check()
    return run, run.records


def ran(name: str) -> Run:
    return _recorded(name)[0]


def prose(out: str) -> str:
    """The printed output with line breaks folded, as the examples wrap their sentences."""
    return " ".join(out.split())


def on_cpu(run: Run) -> None:
    if run.probe["device"] != "cpu":
        pytest.skip(
            f"the claims checked here are about the CPU; this run used {run.probe['device']}"
        )


def test_the_chapter_has_its_examples_and_every_one_a_probe():
    names = [path.name for path in examples(CHAPTER)]
    assert "plot_async_matmul.py" in names  # other pages link to it by name
    assert sorted(PROBES) == names


def said(text: str, outcome: str, sentences: dict[str, str]) -> None:
    """The page printed the sentence of its verdict's outcome, and not the others'."""
    for case, sentence in sentences.items():
        assert (sentence in text) == (case == outcome), (outcome, sentence, text)


def test_where_time_goes_reports_its_share_of_the_measured_peak():
    run = ran("plot_async_where_time_goes.py")
    outcome, low, high = run.probe["peak_share"]
    assert 0 < low <= high
    text = prose(run.stdout)
    # A share is printed only when its whole interval lies below the peak.
    readable = outcome == "yes"
    assert readable == (high < 1) or outcome == "unclear"
    assert ("% of the measured peak of" in text) == readable
    assert ("share of the peak is unclear here" in text) != readable


def test_async_matmul_shows_each_clock_and_the_real_apis():
    run = ran("plot_async_matmul.py")
    p = run.probe
    # Which timing to trust: one run of each clock, then the Timer's median.
    assert p["naive"] > 0
    assert p["synchronized"] > 0
    assert p["timer_median"] > 0
    assert "torch, naive:" in run.stdout
    assert "torch, synchronized:" in run.stdout
    # The real APIs are shown, and the CUDA-only cell says what a GPU would print.
    assert "CUDA events: on a GPU, about the synchronized time" in run.stdout
    assert "torch, CUDA events:" not in run.stdout
    assert "Timer: median" in run.stdout  # torch.utils.benchmark.Timer's result
    assert "threads: 1, per loop:" in run.stdout  # the answer to exercise 3
    assert p["figures"] == 1


def test_where_time_goes_naive_and_synchronized_agree_on_cpu():
    run = ran("plot_async_where_time_goes.py")
    on_cpu(run)
    p = run.probe
    # The warm-up runs are timed but kept out of the table and the verdict.
    assert p["runs"] == p["repeats"]
    assert p["timed_runs"] == p["repeats"] + p["warmup_runs"]
    # The work was done when the loop returned: reading the result costs little ...
    assert p["wait_median"] < 0.25 * p["naive_median"]
    # ... and the verdict never says the work was queued on a CPU (unclear is allowed
    # on a busy machine); its line prints that outcome, as does the verdict of the
    # answer to exercise 1 (the prose says what each outcome means).
    assert p["synchronous"] != "no"
    low, estimate, high = p["ratio"]
    assert low <= estimate <= high
    text = prose(run.stdout)
    assert p["cpu_synchronous"] != "no"
    outcomes = re.findall(r"result ready when the loop returns \(cpu\): (yes|no|unclear)", text)
    assert outcomes == [p["synchronous"], p["cpu_synchronous"]], text
    # The table's last row holds the median the verdict rests on.
    ready = [line for line in run.stdout.splitlines() if "result ready (synchronized)" in line]
    assert len(ready) == 1
    assert p["median_text"] in ready[0]
    assert p["figures"] == 1


def test_dependency_graph_is_the_program():
    run = ran("plot_backend_dependency_graph.py")
    p = run.probe
    assert p["operations"] == ["ones", "ones_1", "mul", "add"]
    assert p["targets"] == [
        "aten.ones.default",
        "aten.ones.default",
        "aten.mul.Tensor",
        "aten.add.Tensor",
    ]
    assert p["levels"] == {"ones": 0, "ones_1": 0, "mul": 1, "add": 2}
    assert p["independent_pairs"] == [["ones", "ones_1"]]
    # The recorded graph computes what the program computes: 1 * 1 + 2.
    assert p["result"] == [[3.0, 3.0]]
    if p["has_graphviz"] and shutil.which("dot"):
        assert p["has_png"]
        assert p["figures"] == 1
    else:
        assert p["figures"] == 0


def test_eager_pytorch_dispatches_in_program_order():
    run = ran("plot_backend_dependency_graph.py")
    p = run.probe
    assert p["dispatched"] == ["ones", "ones", "mul", "add"]
    # The page prints both orders; the prose says they are the same list.
    assert "dispatched: ones, ones, mul, add" in run.stdout
    assert "program order: ones, ones, mul, add" in run.stdout
    # The answer to the second exercise: x + 1 and y * 2 are independent.
    assert "('add', 'mul')" in run.stdout


def test_autograd_runs_the_backward_graph_by_its_dependencies():
    run = ran("plot_backend_who_schedules.py")
    p = run.probe
    assert p["ran"][:3] == ["SumBackward0", "AddBackward0", "MulBackward0"]
    assert sorted(p["ran"][3:]) == ["AccumulateGrad(x)", "AccumulateGrad(y)"]
    assert p["topological"]
    assert "in dependency order: True" in run.stdout
    # The figure's rows: one per step away from the loss, both leaves last.
    assert p["depth"] == {
        "SumBackward0": 0,
        "AddBackward0": 1,
        "MulBackward0": 2,
        "AccumulateGrad(x)": 3,
        "AccumulateGrad(y)": 3,
    }
    assert p["figures"] == 1
    # The answer to exercise 1 names the leaf this run accumulated last.
    assert f"accumulated last: {p['ran'][-1]}" in run.stdout
    if p["device"] == "cpu":
        assert "no second stream on cpu: not run" in run.stdout
        assert "two streams overlapped" not in run.stdout


def test_dependency_graph_without_dot_prints_the_graph(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    run = run_alone(
        "plot_backend_dependency_graph.py",
        probe=PROBES["plot_backend_dependency_graph.py"],
        PATH=str(empty),
    ).check()
    assert not run.probe["has_png"]
    assert run.probe["figures"] == 0
    if run.probe["has_graphviz"]:
        assert "no picture: dot is not installed" in run.stdout
        assert "ones -> mul" in run.stdout
        assert "mul -> add" in run.stdout


def test_dependency_graph_without_the_graphviz_package_goes_on(tmp_path):
    stub = tmp_path / "graphviz"
    stub.mkdir()
    (stub / "__init__.py").write_text("raise ImportError('graphviz hidden by the test')\n")
    run = run_alone(
        "plot_backend_dependency_graph.py",
        probe=PROBES["plot_backend_dependency_graph.py"],
        PYTHONPATH=str(tmp_path),
    ).check()
    assert not run.probe["has_graphviz"]
    assert "no picture: the graphviz package is not installed" in run.stdout
    assert "edges: ones -> mul, ones_1 -> mul, mul -> add" in prose(run.stdout)
    assert "('add', 'mul')" in run.stdout  # the page went on to its answers


def test_blockers_table_has_a_row_per_blocker():
    run = ran("plot_barriers_and_blockers.py")
    on_cpu(run)
    p = run.probe
    assert (
        p["rows"]
        == p["blockers"]
        == [
            "no blocker",
            "compperf.synchronize()",
            ".item()",
            ".cpu()",
            ".numpy()",
            "print(tensor)",
            "b[b > 0]",
            "b.nonzero()",
            "b[0].tolist()",
            "if b.sum() > 0:",
            "torch.where(b > 0, b, 0)",
        ]
    )
    assert p["not_measured"] == [
        "event.synchronize()",
        "host-to-device copies",
        "stream.synchronize()",
    ]
    # The table runs from its title to the first empty line; the prose after it may
    # name a blocker at the start of a wrapped line.
    table = run.stdout[run.stdout.index("Python thread held per step") :].split("\n\n")[0]
    table = table.splitlines()
    for name in p["rows"]:
        assert sum(line.startswith(name + " ") for line in table) == 1, name
    assert all(runs == p["repeats"] for runs in p["runs"])
    assert all(median > 0 for median in p["medians"])
    # On a CPU nothing is queued: a step without a blocker does not return early
    # (unclear is allowed on a busy machine), and the page says its outcome.
    assert p["early"] != "yes"
    assert not p["returns_early"]
    text = prose(run.stdout)
    claim = "returns in under half a barrier's time"
    assert f"{claim} (no blocker): {p['early']}" in text
    # Only a step that returns early is followed by one verdict per blocker.
    assert text.count(claim) == 1
    # Error bars from the quartiles: none reaches below zero.
    assert p["lowest_bar"] >= 0
    assert "sync debug mode: not run on cpu" in text
    assert "no events on cpu" in text
    assert p["figures"] == 1


def test_cost_model_fits_the_measurements_and_the_pipeline_answers_the_book():
    run = ran("plot_cost_model.py")
    p = run.probe
    assert min(p["t1"], p["t2"], p["t3"], p["c"]) > 0
    # The fitted lines pass within a factor of two of every measured median: t1 and t3
    # are measured apart from the loops, and fast mode on a busy machine is noisy.
    assert p["error_once"] < 1.0, run.stdout
    assert p["error_every"] < 1.0, run.stdout
    assert p["once"] == p["every"] == len(p["counts"])
    # A slower backend: the pipeline costs exactly t1 + N t2 + t3 ...
    pipeline, formula = p["backend_slower"]
    assert pipeline == pytest.approx(formula)
    # ... a slower frontend: about N t1 + t2 + t3, more than the formula promises.
    pipeline, formula = p["frontend_slower"]
    assert pipeline == pytest.approx(1000 * 2.0 + 1.0 + 0.5)
    assert pipeline > formula
    # The pipeline played through: where the condition holds (the backend slower) it
    # takes what the formula promises, where it fails (the frontend slower) longer.
    holds, fails = map(float, re.findall(r"pipeline / formula: ([0-9.]+)", run.stdout))
    assert holds == pytest.approx(1.0, abs=0.005)
    assert fails > 1.0
    # The table has a row for each N with the medians of both loops, the largest N's
    # those the verdict compares; the verdict line prints its outcome (the prose says
    # what each outcome means).
    rows = {line.split()[0]: line for line in run.stdout.splitlines() if line.strip()}
    assert all(str(n) in rows for n in p["counts"])
    largest = p["counts"][-1]
    row = rows[str(largest)]
    assert p["largest_once"] in row
    assert p["largest_every"] in row
    text = prose(run.stdout)
    pair = f"wait once, N={largest} vs wait every step, N={largest}"
    assert f"faster ({pair}): {p['faster']}" in text
    assert "difference per step:" in text
    # Error bars from the quartiles: none reaches below zero.
    assert p["bar_bottoms"] >= 0
    assert p["figures"] == 1


def test_running_ahead_on_cpu_leaves_nothing_queued():
    run = ran("plot_frontend_running_ahead.py")
    on_cpu(run)
    p = run.probe
    assert p["issued"] == p["launches"]
    # Nothing is queued on a CPU: the verdict never says otherwise (unclear is allowed
    # on a busy machine), and its line prints that outcome; the prose says what each
    # outcome means.
    assert p["nothing_queued"] != "no"
    text = prose(run.stdout)
    assert f"nothing queued when the loop ends (cpu): {p['nothing_queued']}" in text
    assert "long calls:" in text
    assert "widest gap:" in text
    assert "lie on each other" not in text
    # On a CPU the memory cell prints nothing: no allocator statistics to read.
    assert "queue holds little memory" not in text
    assert p["kept_bytes"] == p["expected_bytes"]
    assert p["figures"] == 1


def test_profiler_trace_is_a_valid_chrome_trace():
    run = ran("plot_profiler_trace.py")
    p = run.probe
    names = {event.get("name") for event in p["trace"]["traceEvents"]}
    assert "aten::mm" in names
    assert Path(p["trace_path"]).name == "profiler_trace.json"
    assert p["host"] == p["steps"]
    assert p["link"].startswith(
        '<p><a download="profiler_trace.json" href="data:application/json;base64,'
    )
    # The answer to the first exercise: reading a value back adds aten::item.
    assert "aten::item" in p["added"]
    assert p["figures"] == 1
    if p["device"] == "cpu":
        assert p["kernels"] == 0
        # No device events on a CPU: the line says so, and the prose explains why.
        assert "kernels ×0: 0 ns" in prose(run.stdout)
        assert "device computed longer than the host launched" not in run.stdout


# Every language but the source language, as the catalogs that ship with compperf hold them.
TRANSLATED = i18n.available_languages()[1:]
_SCRIPT = {"zh_CN": "CJK", "ru": "CYRILLIC"}


def _in_script(text: str, code: str) -> bool:
    return any(_SCRIPT[code] in unicodedata.name(char, "") for char in text)


@pytest.mark.parametrize("code", TRANSLATED)
@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_message_reads_in_the_language_with_the_same_numbers(name: str, code: str):
    """What the page printed and drew, rendered in another language from the records alone
    (as the zh_CN and ru builds do): translated, and with the numbers the run measured."""
    run, records = _recorded(name)
    assert records, f"{name} printed no message through compperf.tr or compperf.say"
    for record in records:
        english = i18n.render(record, "en")
        translated = i18n.render(record, code, strict=True)
        if record.get("wrap"):  # a conclusion printed with compperf.say: the page shows it
            assert english in run.stdout, english
            assert _in_script(translated, code), f"{code} paragraph not translated: {english}"
        assert numbers(translated, code) == numbers(english), (
            f"{name}: the {code} text has other numbers than the English one:\n"
            f"{english}\n{translated}"
        )
