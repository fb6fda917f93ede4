"""The chapter "Asynchronous computation": every example runs, and its key claims hold on a CPU."""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import shutil
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")  # before pyplot: the examples' plt.show() must not open windows
import matplotlib.pyplot as plt

CHAPTER = Path(__file__).resolve().parents[2] / "examples" / "asynchronous"
EXAMPLES = sorted(path.name for path in CHAPTER.glob("plot_*.py"))


def run_example(name: str, tmp_path: Path, **env: str) -> tuple[dict, str, int]:
    """Run one example in fast mode; return its globals, its stdout and its figure count."""
    plt.close("all")
    stdout = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COMPPERF_FAST", "1")
        patch.setenv("COMPPERF_OUTPUT_DIR", str(tmp_path))
        for key, value in env.items():
            patch.setenv(key, value)
        patch.chdir(tmp_path)  # anything written to the working folder stays out of the repo
        with contextlib.redirect_stdout(stdout):
            result = runpy.run_path(str(CHAPTER / name), run_name="__main__")
    figures = len(plt.get_fignums())
    plt.close("all")
    return result, stdout.getvalue(), figures


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory):
    """Each example run once per test session, on demand."""
    cache: dict[str, tuple[dict, str, int]] = {}

    def get(name: str) -> tuple[dict, str, int]:
        if name not in cache:
            cache[name] = run_example(name, tmp_path_factory.mktemp(Path(name).stem))
        return cache[name]

    return get


def prose(out: str) -> str:
    """The printed output with line breaks folded, as the examples wrap their sentences."""
    return " ".join(out.split())


def on_cpu(result: dict) -> None:
    if result["device"].type != "cpu":
        pytest.skip(f"the claims checked here are about the CPU; this run used {result['device']}")


def test_the_chapter_has_its_examples():
    assert (CHAPTER / "GALLERY_HEADER.rst").is_file()
    assert "plot_async_matmul.py" in EXAMPLES  # other pages link to it by name
    assert len(EXAMPLES) == 6, EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_and_says_where(ran, name):
    result, out, _ = ran(name)
    first_line = out.splitlines()[0]
    assert first_line.startswith(f"Measured on {result['device']}"), first_line


def test_async_matmul_naive_and_synchronized_agree_on_cpu(ran):
    result, out, figures = ran("plot_async_matmul.py")
    on_cpu(result)
    rows = result["rows"]
    naive_median, naive_iqr = (
        rows["loop returned (naive)"].median,
        rows["loop returned (naive)"].iqr,
    )
    synced = rows["result ready (synchronized)"]
    synced_median, synced_iqr = synced.median, synced.iqr
    wait_median = rows["then waited for the result"].median
    assert len(result["naive_times"]) == result["repeats"]
    # The work was done when the loop returned: reading the result costs little ...
    assert wait_median < 0.25 * naive_median
    # ... so the two timings agree within the measured spread (or 5 %).
    assert abs(synced_median - naive_median) <= max(naive_iqr + synced_iqr, 0.05 * naive_median)
    assert result["timings_agree"]
    assert "timings agree" in prose(out)
    assert "still queued" not in prose(out)
    assert result["naive"].elapsed > 0
    assert result["synchronized"].elapsed > 0
    assert "synchronized / naive:" in out
    assert figures == 1


def test_dependency_graph_is_the_program(ran):
    result, out, figures = ran("plot_backend_dependency_graph.py")
    names = [node.name for node in result["operations"]]
    assert names == ["ones", "ones_1", "mul", "add"]
    assert [str(node.target) for node in result["operations"]] == [
        "aten.ones.default",
        "aten.ones.default",
        "aten.mul.Tensor",
        "aten.add.Tensor",
    ]
    assert {node.name: depth for node, depth in result["level"].items()} == {
        "ones": 0,
        "ones_1": 0,
        "mul": 1,
        "add": 2,
    }
    assert result["independent_pairs"] == [("ones", "ones_1")]
    # The recorded graph computes what the program computes: 1 * 1 + 2.
    assert result["graph_module"]().tolist() == [[3.0, 3.0]]
    if shutil.which("dot"):
        assert result["png"] is not None
        assert figures == 1
    else:
        assert figures == 0
        assert "is not installed" in prose(out)


def test_dependency_graph_without_dot_prints_the_graph(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    result, out, figures = run_example(
        "plot_backend_dependency_graph.py", tmp_path, PATH=str(empty)
    )
    assert result["png"] is None
    assert figures == 0
    assert "`dot` program is not installed" in prose(out)
    assert "ones -> mul" in out
    assert "mul -> add" in out


def test_blockers_table_has_a_row_per_blocker(ran):
    result, out, figures = ran("plot_barriers_and_blockers.py")
    on_cpu(result)
    measured = [m.description for m in result["results"]]
    assert measured == list(result["blockers"])
    assert measured == [
        "no blocker",
        "compperf.synchronize()",
        ".item()",
        ".cpu()",
        ".numpy()",
        "print(tensor)",
    ]
    assert set(result["not_measured"]) == {"stream.synchronize()", "event.synchronize()"}
    table = out[out.index("Python thread held per step") :].splitlines()
    for name in measured:
        assert sum(line.startswith(name + " ") for line in table) == 1, name
    assert all(m.runs == result["repeats"] and m.median > 0 for m in result["results"])
    # On a CPU nothing is queued: a step without a blocker does not return early.
    assert not result["returns_early"]
    assert "takes as long as one with a barrier" in prose(out)
    assert figures == 1


def test_cost_model_fits_the_measurements(ran):
    result, out, figures = ran("plot_cost_model.py")
    assert result["t1"] > 0
    assert result["t3"] > 0
    assert result["t2"] > 0
    assert result["c"] > 0
    # The fitted lines pass within 50 % of every measured median (fast mode is noisy).
    assert result["error_once"] < 0.5, out
    assert result["error_every"] < 0.5, out
    assert len(result["once"]) == len(result["every"]) == len(result["counts"])
    assert figures == 1


def test_running_ahead_on_cpu_leaves_nothing_queued(ran):
    result, out, figures = ran("plot_frontend_running_ahead.py")
    on_cpu(result)
    assert len(result["issued"]) == result["launches"]
    assert result["queued_products"] < 1
    assert "nothing was left in a queue" in prose(out)
    assert "PyTorch keeps no allocator statistics" in prose(out)
    assert figures == 1


def test_profiler_trace_is_a_valid_chrome_trace(ran):
    result, out, figures = ran("plot_profiler_trace.py")
    trace_path = result["trace_path"]
    assert trace_path.is_file()
    assert trace_path.parent.name.startswith("plot_profiler_trace")  # COMPPERF_OUTPUT_DIR
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    names = {event.get("name") for event in trace["traceEvents"]}
    assert "aten::mm" in names
    assert len(result["host"]) == result["steps"]
    link = result["Download"](trace_path)._repr_html_()
    assert link.startswith(
        '<p><a download="profiler_trace.json" href="data:application/json;base64,'
    )
    assert figures == 1
    if result["device"].type == "cpu":
        assert result["kernels"] == []
        assert "No device events were recorded on cpu" in prose(out)
