"""Run each example of the "Compilers and interpreters" chapter and check what its page claims."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHAPTER = Path(__file__).resolve().parents[2] / "examples" / "compilers"
_MARKER = "@@probe@@"

# Runs an example as __main__ (as `python plot_x.py` would), then evaluates a probe
# expression in the example's namespace and prints its value as JSON on one line.
_HARNESS = f"""
import json, runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
namespace = runpy.run_path(sys.argv[1], run_name="__main__")
namespace["plt"] = plt
print({_MARKER!r} + json.dumps(eval(sys.argv[2], namespace), default=str))
"""


class Run:
    """The result of running one example: its output and the probe's value."""

    def __init__(self, completed: subprocess.CompletedProcess[str]) -> None:
        self.returncode = completed.returncode
        self.stderr = completed.stderr
        lines = completed.stdout.splitlines()
        probes = [line for line in lines if line.startswith(_MARKER)]
        self.probe = json.loads(probes[-1].removeprefix(_MARKER)) if probes else None
        self.stdout = "\n".join(line for line in lines if not line.startswith(_MARKER))

    def check(self) -> Run:
        assert self.returncode == 0, f"example failed:\n{self.stdout}\n{self.stderr}"
        # Every DeprecationWarning is an error in the run (see run_example); none may be
        # printed either, by the example or by a process it starts.
        assert "DeprecationWarning:" not in self.stderr, self.stderr
        return self


def run_example(name: str, probe: str = "None", **env: str) -> Run:
    """Run examples/compilers/<name> in a fresh process with the tests' fast settings.

    PYTHONWARNINGS turns every DeprecationWarning into an error, in the example and in
    the processes it starts, so a deprecation the example does not handle fails it.
    """
    environ = {
        **os.environ,
        "COMPPERF_FAST": "1",
        "MPLBACKEND": "Agg",
        "PYTHONWARNINGS": "error::DeprecationWarning",
        **env,
    }
    completed = subprocess.run(
        [sys.executable, "-c", _HARNESS, str(CHAPTER / name), probe],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
        timeout=600,
    )
    return Run(completed)


def test_every_example_is_tested() -> None:
    tested = {
        "plot_1_imperative_symbolic.py",
        "plot_2_hybridize_mlp.py",
        "plot_3_when_compilation_pays.py",
        "plot_4_serialization.py",
        "plot_5_cnn_exercise.py",
    }
    assert {path.name for path in CHAPTER.glob("plot_*.py")} == tested
    assert (
        (CHAPTER / "GALLERY_HEADER.rst")
        .read_text(encoding="utf-8")
        .startswith("Compilers and interpreters\n")
    )


# --- Imperative and symbolic programs -------------------------------------------------

_FX_PROBE = """{
    name: [[node.op, str(node.target), [str(a) for a in node.args]] for node in gm.graph.nodes]
    for name, gm in graphs.items()
} | {"figures": len(plt.get_fignums()), "results": results}"""


@pytest.fixture(scope="module")
def imperative_symbolic() -> Run:
    return run_example("plot_1_imperative_symbolic.py", _FX_PROBE).check()


def test_all_styles_compute_ten(imperative_symbolic: Run) -> None:
    assert "imperative result: 10" in imperative_symbolic.stdout
    assert "symbolic result: 10" in imperative_symbolic.stdout
    assert imperative_symbolic.probe["results"] == {"traced": 10, "a, b fixed": 10, "all fixed": 10}


def test_traced_graph_has_three_additions(imperative_symbolic: Run) -> None:
    nodes = imperative_symbolic.probe["traced"]
    assert [op for op, _, _ in nodes] == ["placeholder"] * 4 + ["call_function"] * 3 + ["output"]
    assert {target for op, target, _ in nodes if op == "call_function"} == {
        "<built-in function add>"
    }


def test_fixed_inputs_are_folded(imperative_symbolic: Run) -> None:
    half = imperative_symbolic.probe["a=1, b=2 fixed"]
    additions = [args for _, target, args in half if target == "<built-in function add>"]
    assert len(additions) == 2
    assert "3" in additions[1], "a + b should be folded into the constant 3"
    whole = imperative_symbolic.probe["all inputs fixed"]
    assert not [node for node in whole if node[1] == "<built-in function add>"]
    assert whole[-1][0] == "output"
    assert whole[-1][2] == ["10"], "the whole function should fold to the value 10"


def test_graph_is_drawn_or_shown_as_text(imperative_symbolic: Run) -> None:
    if shutil.which("dot"):
        assert imperative_symbolic.probe["figures"] == 1
    else:
        assert "graphviz cannot draw here" in imperative_symbolic.stdout
        assert imperative_symbolic.probe["figures"] == 0


def test_without_graphviz_the_graphs_are_printed_as_text(tmp_path: Path) -> None:
    run = run_example("plot_1_imperative_symbolic.py", "len(plt.get_fignums())", PATH=str(tmp_path))
    run.check()
    assert "graphviz cannot draw here" in run.stdout
    assert "return 10" in run.stdout
    assert run.probe == 0


# --- Hybridizing the MLP ---------------------------------------------------------------

_HYBRID_PROBE = """{
    "versions": list(versions),
    "medians": [m.median for m in timings],
    "iqrs": [m.iqr for m in timings],
    "device": str(device),
    "exported_ops": [str(n.target) for n in exported.graph.nodes if n.op == "call_function"],
}"""


@pytest.fixture(scope="module")
def hybridize() -> Run:
    return run_example("plot_2_hybridize_mlp.py", _HYBRID_PROBE).check()


def test_torchscript_deprecation_is_shown(hybridize: Run) -> None:
    assert "DeprecationWarning caught: `torch.jit.script` is deprecated" in hybridize.stdout


def test_every_version_matches_eager(hybridize: Run) -> None:
    for version in ("TorchScript", "torch.export"):
        assert f"{version} output matches eager mode" in hybridize.stdout
    if shutil.which(os.environ.get("CXX", "g++")):
        assert "torch.compile output matches eager mode" in hybridize.stdout
        assert "torch.compile" in hybridize.probe["versions"]
    assert hybridize.probe["versions"][0] == "eager"


def test_exported_graph_is_three_linear_and_two_relu(hybridize: Run) -> None:
    linear, relu = "aten.linear.default", "aten.relu.default"
    assert hybridize.probe["exported_ops"] == [linear, relu, linear, relu, linear]


def test_timings_are_positive(hybridize: Run) -> None:
    assert all(median > 0 for median in hybridize.probe["medians"])
    assert all(iqr >= 0 for iqr in hybridize.probe["iqrs"])
    assert "torch.compile, first call: " in hybridize.stdout
    assert "pays back after" in hybridize.stdout


def test_reduce_overhead_explained_without_cuda(hybridize: Run) -> None:
    if hybridize.probe["device"].startswith("cuda"):
        assert "reduce-overhead output matches eager mode" in hybridize.stdout
    else:
        assert "mode='reduce-overhead' skipped: CUDA graphs need CUDA" in hybridize.stdout


def test_without_a_cxx_compiler_the_page_degrades(tmp_path: Path) -> None:
    # A fresh TMPDIR means a cold inductor cache, so Inductor must call the compiler.
    run = run_example(
        "plot_2_hybridize_mlp.py",
        "list(versions)",
        CXX=str(tmp_path / "no-such-g++"),
        TMPDIR=str(tmp_path),
    ).check()
    assert "torch.compile failed here, so the page continues without it" in run.stdout
    assert "torch.export output matches eager mode" in run.stdout
    assert run.probe == ["eager", "torch.jit.script", "torch.export"]


# --- When compilation pays ---------------------------------------------------------------

_PAYS_PROBE = """{
    "batch_sizes": BATCH_SIZES,
    "timings": {name: [m.median for m in ms] for name, ms in timings.items()},
    "graphs": int(torch._dynamo.utils.counters["stats"]["unique_graphs"]),
    "crossover": [
        crossover([1, 10, 100], [2.0, 0.5, 0.25]),
        crossover([1, 10, 100], [0.5, 0.5, 0.5]),
        crossover([1, 10, 100], [0.5, 2.0, 3.0]),
        crossover([1, 10, 100], [0.5, 2.0, 0.5]),
    ],
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def pays() -> Run:
    return run_example("plot_3_when_compilation_pays.py", _PAYS_PROBE).check()


def test_sweep_covers_every_batch_size(pays: Run) -> None:
    sizes = pays.probe["batch_sizes"]
    assert len(sizes) >= 3
    for medians in pays.probe["timings"].values():
        assert len(medians) == len(sizes)
        assert all(median > 0 for median in medians)
    assert pays.probe["figures"] == 1


def test_one_dynamic_compilation_serves_several_sizes(pays: Run) -> None:
    if "torch.compile" not in pays.probe["timings"]:
        pytest.skip("torch.compile does not work on this machine")
    assert "torch.compile output matches eager mode at every batch size" in pays.stdout
    assert 1 <= pays.probe["graphs"] < len(pays.probe["batch_sizes"])
    assert f"Dynamo compiled {pays.probe['graphs']} graph(s)" in pays.stdout


def test_crossover_is_found_where_the_ratio_drops_below_one(pays: Run) -> None:
    between, everywhere, never, late = pays.probe["crossover"]
    assert between == pytest.approx(math.sqrt(10))  # ratio 2 -> 0.5: halfway in log space
    assert everywhere == 1
    assert never is None
    assert 10 < late < 100


def test_each_compiled_version_gets_a_verdict(pays: Run) -> None:
    for name in list(pays.probe["timings"])[1:]:
        verdicts = (
            "no crossover in this range",
            "faster than eager mode at every",
            "becomes faster than eager mode from a batch size of about",
        )
        lines = [line for line in pays.stdout.splitlines() if line.startswith(f"  {name} ")]
        assert len(lines) == 1, pays.stdout
        assert any(v in lines[0] for v in verdicts), lines[0]


# --- Serialization -------------------------------------------------------------------

_SERIALIZATION_PROBE = """{
    kind: {key: value for key, value in report.items() if key != "output"}
    | {"same_output": bool(torch.allclose(report["output"], reference.cpu()))}
    for kind, report in reports.items()
} | {"folder_removed": not folder.exists()}"""


@pytest.fixture(scope="module")
def serialization() -> Run:
    return run_example("plot_4_serialization.py", _SERIALIZATION_PROBE).check()


def test_round_trips_give_the_same_output(serialization: Run) -> None:
    assert "every fresh process computed the same output as the original model" in (
        serialization.stdout
    )
    for kind in ("TorchScript", "torch.export", "state_dict"):
        assert serialization.probe[kind]["same_output"], kind
        assert serialization.probe[kind]["load_seconds"] > 0


def test_only_the_state_dict_needs_the_model_code(serialization: Run) -> None:
    for kind in ("TorchScript", "torch.export", "state_dict"):
        assert serialization.probe[kind]["mlp_model_importable_at_start"] is False
    assert serialization.probe["state_dict"]["mlp_model_imported"] is True
    assert serialization.probe["TorchScript"]["mlp_model_imported"] is False
    assert serialization.probe["torch.export"]["mlp_model_imported"] is False


def test_torchscript_loads_on_the_cpu_with_its_deprecation_shown(serialization: Run) -> None:
    assert serialization.probe["TorchScript"]["device"] == "cpu"
    assert serialization.probe["TorchScript"]["deprecations"] == [
        "`torch.jit.load` is deprecated. Please switch to `torch.export`."
    ]
    assert "DeprecationWarning caught: `torch.jit.save` is deprecated" in serialization.stdout


def test_files_are_listed_with_sizes(serialization: Run) -> None:
    sizes = {}
    for line in serialization.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "bytes" and parts[-1].startswith(("mlp", "input")):
            sizes[parts[-1]] = int(parts[0].replace(",", ""))
    assert set(sizes) == {"input.pt", "mlp.pt", "mlp.pt2", "mlp_model.py", "mlp_state_dict.pt"}
    assert all(size > 0 for size in sizes.values())
    weights = (512 * 256 + 256 + 256 * 128 + 128 + 128 * 2 + 2) * 4
    for name in ("mlp.pt", "mlp.pt2", "mlp_state_dict.pt"):
        assert sizes[name] >= weights, f"{name} is smaller than the weights it holds"
        assert sizes[name] < 2 * weights, f"the weights are not most of {name}"
    assert serialization.probe["folder_removed"]


# --- The CNN exercise ----------------------------------------------------------------------

_CNN_PROBE = """{
    "variants": {name: list(versions) for name, versions in variants.items()},
    "sizes": sizes,
    "timings": {f"{name} {size}": [m.median for m in ms] for (name, size), ms in timings.items()},
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def cnn() -> Run:
    return run_example("plot_5_cnn_exercise.py", _CNN_PROBE).check()


def test_cnn_versions_agree_with_eager(cnn: Run) -> None:
    assert "all versions agree with eager mode at every batch size:" in cnn.stdout
    for versions in cnn.probe["variants"].values():
        assert versions[:3] == ["eager", "torch.jit.script", "torch.export"]
    assert set(cnn.probe["variants"]) == {"MLP", "LeNet"}


def test_cnn_measurements_and_sizes(cnn: Run) -> None:
    assert len(cnn.probe["timings"]) == 4
    assert all(m > 0 for medians in cnn.probe["timings"].values() for m in medians)
    for row in cnn.probe["sizes"].values():
        assert row["weights"] > 0
        assert row["TorchScript"] >= row["weights"]
        assert row["state_dict"] >= row["weights"]
        assert row["torch.export"] >= row["weights"] + row["example input"]
    assert cnn.probe["sizes"]["LeNet"]["weights"] < cnn.probe["sizes"]["MLP"]["weights"]
    assert cnn.probe["figures"] == 1
