"""Check what each page of the "Compilers and interpreters" chapter claims.

The examples run through the shared harness (``harness.py``): alone, in a fresh process
with the tests' settings. Generic checks (provenance, Summary and Exercises, no visible
test switch, same claims alone and in gallery order) live in ``test_examples.py``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from harness import EXAMPLES, Run, examples, run_alone, shared_run

# Every check here runs the chapter's pages: `nox -s examples`, not `nox -s tests`.
pytestmark = pytest.mark.executes

CHAPTER = EXAMPLES / "compilers"
PAGES = (
    "plot_1_imperative_symbolic.py",
    "plot_2_hybridize_mlp.py",
    "plot_3_when_compilation_pays.py",
    "plot_4_serialization.py",
    "plot_5_cnn_exercise.py",
    "plot_5b_cnn_speed.py",
)
# Page 1's second part: constant folding in the graph that page 1 captures, drawn.
FOLDING_PAGE = "plot_1b_constant_folding.py"
# Page 2's second part, which times the versions that page 2 builds.
COST_PAGE = "plot_2b_cost_per_call.py"
# Page 3's second part: the compilations behind its sweep, and the share of the peak.
BATCH_PAGE = "plot_3b_every_batch_size.py"
# Page 4's second part: each file that page 4 saves, loaded in a fresh process.
LOADING_PAGE = "plot_4b_loading_elsewhere.py"


def _has_cxx() -> bool:
    return shutil.which(os.environ.get("CXX", "g++")) is not None


def test_every_page_of_this_file_is_in_the_chapter() -> None:
    names = [path.name for path in examples("compilers")]
    assert set(PAGES) <= set(names)
    order = [
        *(PAGES[0], FOLDING_PAGE, PAGES[1], COST_PAGE, PAGES[2], BATCH_PAGE),
        *(PAGES[3], LOADING_PAGE, *PAGES[4:]),
    ]
    assert names[: len(order)] == order, "gallery order starts with these pages"
    header = (CHAPTER / "GALLERY_HEADER.rst").read_text(encoding="utf-8")
    assert header.startswith("Compilers and interpreters\n")


@pytest.mark.parametrize("name", [*PAGES, FOLDING_PAGE, COST_PAGE, BATCH_PAGE, LOADING_PAGE])
def test_page_says_what_to_install(name: str) -> None:
    source = (CHAPTER / name).read_text(encoding="utf-8")
    docstring = source.split('"""')[1]
    assert "To run this example yourself" in docstring
    assert "pip install" in docstring


# The pages whose models Inductor compiles (pages 1, 1b, 4, 4b, 6, 6b, 7 and 8 generate no code).
INDUCTOR_PAGES = (
    "plot_2_hybridize_mlp.py",
    COST_PAGE,
    "plot_3_when_compilation_pays.py",
    BATCH_PAGE,
    "plot_5_cnn_exercise.py",
    "plot_5b_cnn_speed.py",
    "plot_7b_fixing_breaks.py",
    "plot_9_modes_training.py",
    "plot_9b_training_step.py",
)


@pytest.mark.parametrize("name", INDUCTOR_PAGES)
def test_float32_matmul_precision_is_set_before_compiling(name: str) -> None:
    # The same precision for eager mode and compiled code, chosen on purpose, before the
    # first compilation; Inductor's TF32 warning (Ampere or newer GPUs) is then expected
    # and hidden exactly, as page 2 explains.
    source = (CHAPTER / name).read_text(encoding="utf-8")
    code = source.split('"""', 2)[2]
    setting = code.index('torch.set_float32_matmul_precision("highest")')
    assert setting < code.index("torch.compile(")
    assert 'warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")' in code
    explanation = (CHAPTER / INDUCTOR_PAGES[0]).read_text(encoding="utf-8")
    assert "TensorFloat32 (TF32)" in explanation
    if name != INDUCTOR_PAGES[0]:
        assert "see page 2 of this chapter" in code


def test_the_hidden_tf32_warning_is_inductors() -> None:
    import inspect
    import warnings

    with warnings.catch_warnings():  # Inductor's import uses torch.jit.script_method.
        warnings.simplefilter("ignore", DeprecationWarning)
        from torch._inductor import compile_fx

    source = inspect.getsource(compile_fx._warn_tf32_disabled)
    message = re.search(r'"(TensorFloat32 tensor cores[^"]*)"', source)[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")
        warnings.warn(message, stacklevel=1)
    assert caught == []


@pytest.mark.parametrize("name", INDUCTOR_PAGES)
def test_page_names_the_compiler_each_device_needs(name: str) -> None:
    docstring = " ".join((CHAPTER / name).read_text(encoding="utf-8").split('"""')[1].split())
    assert "on a CPU also needs a C++ compiler" in docstring
    # Triton builds its launcher with a C compiler on first use (triton/runtime/build.py).
    assert "on an NVIDIA GPU a C compiler (``gcc`` or ``clang``)" in docstring


# --- Imperative and symbolic programs -------------------------------------------------

_FX_PROBE = """{
    "traced": [[node.op, str(node.target), [str(a) for a in node.args]] for node in traced.graph.nodes],
    "figures": len(plt.get_fignums()),
    "timed": [m.description for m in timings],
    "verdict": verdict.outcome,
    "rounds": {name: len(seconds) for name, seconds in comparison.rounds.items()},
    "ratios": len(ratios),
    "larger": [larger.names, size, ratio.numerator, ratio.denominator],
}"""


@pytest.fixture(scope="module")
def imperative_symbolic() -> Run:
    return shared_run(CHAPTER / PAGES[0], _FX_PROBE).check()


def test_imperative_and_symbolic_compute_ten(imperative_symbolic: Run) -> None:
    assert "imperative result: 10" in imperative_symbolic.stdout
    assert "symbolic result: 10" in imperative_symbolic.stdout


def test_traced_graph_has_three_additions(imperative_symbolic: Run) -> None:
    nodes = imperative_symbolic.probe["traced"]
    assert [op for op, _, _ in nodes] == ["placeholder"] * 4 + ["call_function"] * 3 + ["output"]
    assert {target for op, target, _ in nodes if op == "call_function"} == {
        "<built-in function add>"
    }


def test_branch_answer_shows_the_trace_error(imperative_symbolic: Run) -> None:
    assert "TraceError: symbolically traced variables cannot be used as inputs to control" in (
        imperative_symbolic.stdout
    )


def test_timing_shows_the_pytorch_timer_then_compperf(imperative_symbolic: Run) -> None:
    stdout = imperative_symbolic.stdout
    header = "Timer: median "
    assert header in stdout
    # torch.utils.benchmark's result comes first (its median and IQR, labelled), then
    # compperf's table with its "vs first" column.
    assert stdout.index(header) < stdout.index("vs first")
    # Each row is named by the call it timed: code, the same in every language.
    assert imperative_symbolic.probe["timed"] == ["fancy_func(a, b, c, d)", "traced(a, b, c, d)"]


def test_traced_verdict_follows_the_rounds(imperative_symbolic: Run) -> None:
    # print(verdict): its claim, subject and outcome, the outcomes explained in the prose.
    outcome = imperative_symbolic.probe["verdict"]
    assert outcome in {"yes", "no", "unclear"}
    prose = " ".join(imperative_symbolic.stdout.split())
    line = "faster (traced(a, b, c, d) vs fancy_func(a, b, c, d)): "
    assert line + outcome in prose
    assert prose.count(line) == 1


def test_every_round_is_drawn(imperative_symbolic: Run) -> None:
    rounds = imperative_symbolic.probe["rounds"]
    assert list(rounds) == imperative_symbolic.probe["timed"]
    assert len(set(rounds.values())) == 1, "every round times both versions"
    assert imperative_symbolic.probe["ratios"] == next(iter(rounds.values()))
    assert imperative_symbolic.probe["figures"] == 1


def test_larger_tensors_answer(imperative_symbolic: Run) -> None:
    names, size, numerator, denominator = imperative_symbolic.probe["larger"]
    assert names == imperative_symbolic.probe["timed"]
    assert size == 1_000_000
    assert [numerator, denominator] == ["traced(a, b, c, d)", "fancy_func(a, b, c, d)"]
    prose = " ".join(imperative_symbolic.stdout.split())
    line = r"traced / imperative, 1000000 floats: \d+\.\d\d× \(\d+% interval"
    assert re.search(line, prose), prose


# --- Constant folding in a captured graph -----------------------------------------------

_FOLDING_PROBE = """{
    name: [[node.op, str(node.target), [str(a) for a in node.args]] for node in gm.graph.nodes]
    for name, gm in graphs.items()
} | {
    "figures": len(plt.get_fignums()),
    "results": results,
    "cd_fixed": cd_fixed(1, 2, 3, 4),
    "cd_fixed_code": cd_fixed.code,
}"""


@pytest.fixture(scope="module")
def constant_folding() -> Run:
    return shared_run(CHAPTER / FOLDING_PAGE, _FOLDING_PROBE).check()


def test_every_graph_computes_ten(constant_folding: Run) -> None:
    assert constant_folding.probe["results"] == [10, 10, 10]
    assert "every graph computes: [10, 10, 10]" in constant_folding.stdout


def test_fixed_inputs_are_folded(constant_folding: Run) -> None:
    traced = constant_folding.probe["traced"]
    assert [target for _, target, _ in traced].count("<built-in function add>") == 3
    half = constant_folding.probe["a=1, b=2 fixed"]
    additions = [args for _, target, args in half if target == "<built-in function add>"]
    assert len(additions) == 2
    assert "3" in additions[1], "a + b should be folded into the constant 3"
    whole = constant_folding.probe["all inputs fixed"]
    assert not [node for node in whole if node[1] == "<built-in function add>"]
    assert whole[-1][0] == "output"
    assert whole[-1][2] == ["10"], "the whole function should fold to the value 10"


def test_answers_run(constant_folding: Run) -> None:
    assert constant_folding.probe["cd_fixed"] == 10
    assert "+ 7" in constant_folding.probe["cd_fixed_code"], "c + d should fold into 7"
    # The folded graph's check on a fails for another value of a.
    assert "AssertionError: a has been specialized to have value 1" in constant_folding.stdout


def test_graph_is_drawn_or_shown_as_text(constant_folding: Run) -> None:
    if shutil.which("dot"):
        assert constant_folding.probe["figures"] == 1
    else:
        assert "graphviz cannot draw here (no dot program)." in (constant_folding.stdout)
        assert constant_folding.probe["figures"] == 0


def test_without_dot_the_graphs_are_printed_as_text(tmp_path: Path) -> None:
    run = run_alone(CHAPTER / FOLDING_PAGE, "len(plt.get_fignums())", PATH=str(tmp_path)).check()
    assert "graphviz cannot draw here (no dot program)." in run.stdout
    assert "return 10" in run.stdout
    assert run.probe == 0


def test_without_the_graphviz_package_the_page_goes_on(tmp_path: Path) -> None:
    # A module named graphviz that fails to import stands in for a missing package.
    (tmp_path / "graphviz.py").write_text("raise ImportError('no graphviz here')\n")
    run = run_alone(
        CHAPTER / FOLDING_PAGE, "len(plt.get_fignums())", PYTHONPATH=str(tmp_path)
    ).check()
    assert run.stdout.startswith("Measured on ")
    assert "graphviz cannot draw here (no graphviz package)." in run.stdout
    assert "return 10" in run.stdout
    assert run.probe == 0


# --- Hybridizing the MLP ---------------------------------------------------------------

_HYBRID_PROBE = """{
    "costs": costs,
    "bars": [len(ax.patches) for ax in plt.gcf().axes],
    "device": str(device),
    "exported_ops": [str(n.target) for n in exported.graph.nodes if n.op == "call_function"],
    "launches": launches(generated) if compiled is not None else None,
    "graphs": explanation.graph_count,
    "breaks": explanation.graph_break_count,
}"""


@pytest.fixture(scope="module")
def hybridize() -> Run:
    return shared_run(CHAPTER / PAGES[1], _HYBRID_PROBE).check()


_COST_PROBE = """{
    "versions": list(versions),
    "medians": [m.median for m in timings],
    "iqrs": [m.iqr for m in timings],
    "errors": errors,
    "payback": {
        name: comparison.pays_back(name, eager, cost).outcome for name, cost in one_off.items()
    },
    "device": str(device),
}"""


@pytest.fixture(scope="module")
def cost_per_call() -> Run:
    return shared_run(CHAPTER / COST_PAGE, _COST_PROBE).check()


def test_torchscript_deprecation_is_shown(hybridize: Run, cost_per_call: Run) -> None:
    for run in (hybridize, cost_per_call):
        assert "DeprecationWarning caught: `torch.jit.script` is deprecated" in run.stdout
        # PyTorch's own import-time warning is hidden on purpose, alone as in gallery order.
        assert "script_method" not in run.stdout


def test_every_version_matches_eager() -> None:
    # Each version's output is checked with assert_close, which raises (the run fails)
    # when it differs: the pages go on only with matching outputs.
    for name, outputs in (
        (PAGES[1], ("scripted(x)", "compiled_output", "exported_module(x)")),
        (COST_PAGE, ("scripted(x)", "compiled_output", "output.clone()", "exported_module(x)")),
    ):
        source = (CHAPTER / name).read_text(encoding="utf-8")
        for output in outputs:
            assert f"torch.testing.assert_close({output}, reference)" in source, name


def test_compile_costs_are_drawn(hybridize: Run) -> None:
    costs = hybridize.probe["costs"]
    expected = ["torch.jit.script", "torch.compile", "torch.export"]
    assert list(costs) == (expected if _has_cxx() else expected[::2])
    assert all(seconds > 0 for seconds in costs.values())
    assert hybridize.probe["bars"] == [len(costs)], "one bar per version, on one plot"


def test_every_version_is_timed(cost_per_call: Run) -> None:
    if _has_cxx():
        assert "torch.compile" in cost_per_call.probe["versions"]
    assert cost_per_call.probe["versions"][:2] == ["eager", "torch.jit.script"]


def test_process_setup_is_timed_apart_from_the_model(hybridize: Run, cost_per_call: Run) -> None:
    if not _has_cxx():
        pytest.skip("torch.compile does not work on this machine")
    stdout = hybridize.stdout
    assert stdout.index("one-line function compiled: ") < stdout.index("torch.compile, first call:")
    # Whether that first call found the graph in Inductor's caches (a warm start) or not.
    # One graph: compperf.inductor_cache() says hit or miss, exactly one of them.
    for run in (hybridize, cost_per_call):
        hit = "cache hit: Inductor loaded compiled code from its caches" in run.stdout
        miss = "cache miss: Inductor generated the code of its graphs anew" in run.stdout
        assert hit != miss
    # The second part pays the process set-up on a one-line function too, before the model.
    source = (CHAPTER / COST_PAGE).read_text(encoding="utf-8")
    assert source.index("torch.compile(lambda t: t + 1)") < source.index(
        "once(lambda: compiled(x))"
    )


def test_inductor_code_is_listed(hybridize: Run) -> None:
    if not _has_cxx():
        pytest.skip("torch.compile does not work on this machine")
    launches = hybridize.probe["launches"]
    if hybridize.probe["device"] == "cpu":
        # addmm adds the bias; Inductor writes a C++ kernel for each ReLU.
        assert launches == [
            "extern_kernels.addmm",
            "cpp_fused_relu_0",
            "extern_kernels.addmm",
            "cpp_fused_relu_1",
            "extern_kernels.addmm",
        ]
        assert " -> ".join(launches) in " ".join(hybridize.stdout.split())
    else:
        assert any(name.startswith("triton_") for name in launches)


def test_exported_graph_is_three_linear_and_two_relu(hybridize: Run) -> None:
    linear, relu = "aten.linear.default", "aten.relu.default"
    assert hybridize.probe["exported_ops"] == [linear, relu, linear, relu, linear]


def test_timings_use_the_pytorch_timer_then_compperf(cost_per_call: Run) -> None:
    assert all(median > 0 for median in cost_per_call.probe["medians"])
    assert all(iqr >= 0 for iqr in cost_per_call.probe["iqrs"])
    stdout = cost_per_call.stdout
    assert stdout.index("Timer: median ") < stdout.index("vs first")


def test_error_bars_are_quartiles_and_never_below_zero(cost_per_call: Run) -> None:
    lower, upper = cost_per_call.probe["errors"]
    assert all(e >= 0 for e in lower + upper)
    for median, below in zip(cost_per_call.probe["medians"], lower, strict=True):
        assert median * 1e6 - below >= 0, "a whisker reaches below zero"


def test_each_payback_line_follows_its_verdict(cost_per_call: Run) -> None:
    # print(verdict): one line per version, its outcome the one compperf decided.
    prose = " ".join(cost_per_call.stdout.split())
    assert set(cost_per_call.probe["payback"]) >= {"torch.jit.script", "torch.export"}
    for name, outcome in cost_per_call.probe["payback"].items():
        line = f"pays back ({name} vs eager): "
        assert prose.count(line) == 1, name
        assert line + outcome in prose, (name, outcome)
        # yes: the number of calls it takes; no, unclear: the ratio's interval.
        assert (", measured " in prose.split(line)[1].split("threshold")[0]) == (
            outcome == "yes"
        ), (name, outcome)


def test_reduce_overhead_explained_without_cuda(cost_per_call: Run) -> None:
    if cost_per_call.probe["device"].startswith("cuda"):
        for call in (1, 2, 3):
            assert f"CUDA graph call {call}:" in cost_per_call.stdout
        assert "reduce-overhead" in cost_per_call.probe["versions"]
    else:
        assert f"mode='reduce-overhead' skipped on {cost_per_call.probe['device']}" in (
            cost_per_call.stdout
        )
        assert "CUDA graph call" not in cost_per_call.stdout


def test_graph_break_answer(hybridize: Run) -> None:
    assert (hybridize.probe["graphs"], hybridize.probe["breaks"]) == (2, 1)
    assert "Dynamo graphs: 2, graph breaks: 1" in hybridize.stdout


def test_without_a_cxx_compiler_the_page_degrades(tmp_path: Path) -> None:
    # A fresh TMPDIR means a cold inductor cache, so Inductor must call the compiler.
    run = run_alone(
        CHAPTER / PAGES[1],
        "list(costs)",
        CXX=str(tmp_path / "no-such-g++"),
        TMPDIR=str(tmp_path),
    ).check()
    # Inductor's error (a BackendCompilerFailed), then its first line.
    assert "torch.compile failed: InductorError" in run.stdout
    assert "No working C++ compiler" in run.stdout
    assert run.probe == ["torch.jit.script", "torch.export"]


def test_without_a_cxx_compiler_the_timing_page_degrades(tmp_path: Path) -> None:
    run = run_alone(
        CHAPTER / COST_PAGE,
        "list(versions)",
        CXX=str(tmp_path / "no-such-g++"),
        TMPDIR=str(tmp_path),
    ).check()
    assert "torch.compile failed: InductorError" in run.stdout
    assert "mode='reduce-overhead' skipped on " in run.stdout
    assert run.probe == ["eager", "torch.jit.script", "torch.export"]


# --- When compilation pays ---------------------------------------------------------------

_PAYS_PROBE = """{
    "batch_sizes": BATCH_SIZES,
    "timings": {name: [m.median for m in ms] for name, ms in timings.items()},
    "verdicts": {
        name: [comparisons[size].faster(name, "eager").outcome for size in BATCH_SIZES]
        for name in list(versions)[1:]
    },
    "crossings": {
        name: [point.outcome, point.low, point.high, point.value]
        for name, point in crossings.items()
    },
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def pays() -> Run:
    return shared_run(CHAPTER / PAGES[2], _PAYS_PROBE).check()


def test_sweep_covers_every_batch_size(pays: Run) -> None:
    sizes = pays.probe["batch_sizes"]
    assert len(sizes) >= 3
    for medians in pays.probe["timings"].values():
        assert len(medians) == len(sizes)
        assert all(median > 0 for median in medians)
    assert pays.probe["figures"] == 1


def test_crossover_comes_from_the_verdicts_per_size(pays: Run) -> None:
    sizes = pays.probe["batch_sizes"]
    for name, outcomes in pays.probe["verdicts"].items():
        outcome, low, high, _ = pays.probe["crossings"][name]
        tail = len(outcomes)
        while tail and outcomes[tail - 1] == "yes":
            tail -= 1
        if outcome == "yes":  # a bracket of two neighbouring measured sizes
            assert sizes.index(high) == sizes.index(low) + 1 == tail
            assert outcomes[tail - 1] == "no"
        elif outcome == "no":
            assert tail == 0 or outcomes[-1] == "no"
        else:
            assert "unclear" in outcomes


def test_each_compiled_version_gets_a_verdict(pays: Run) -> None:
    # print(verdict): one line per batch size, then the crossover's, as compperf decided.
    prose = " ".join(pays.stdout.split())
    sizes = pays.probe["batch_sizes"]
    for name, (outcome, low, high, value) in pays.probe["crossings"].items():
        for size, said in zip(sizes, pays.probe["verdicts"][name], strict=True):
            assert f"faster ({name} vs eager, batch {size}): {said}" in prose, (name, size)
        line = f"crossover ({name} vs eager): {outcome}"
        assert prose.count(line) == 1, (name, outcome)
        if outcome == "yes":  # the bracket of two measured sizes is its interval
            assert f"{line}, measured {value:.3g} (interval {low:.3g} to {high:.3g};" in prose


# --- One compilation for every batch size ------------------------------------------------

_BATCH_PROBE = """{
    "batch_sizes": BATCH_SIZES,
    "versions": list(versions),
    "graphs": graphs if compiled is not None else None,
    "new_graphs": new_graphs,
    "shares": sorted([name, size] for name, size in shares),
    "graph_counts": graph_counts,
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def batch_sizes() -> Run:
    return shared_run(CHAPTER / BATCH_PAGE, _BATCH_PROBE).check()


def test_each_version_reports_its_share_of_the_measured_peak(batch_sizes: Run) -> None:
    text = " ".join(batch_sizes.stdout.split())  # long lines are folded
    sizes = batch_sizes.probe["batch_sizes"]
    ends = (sizes[0], sizes[-1])
    assert batch_sizes.probe["shares"] == sorted(
        [name, size] for name in batch_sizes.probe["versions"] for size in ends
    )
    for name in batch_sizes.probe["versions"]:
        for size in ends:
            sentence = re.search(rf"{re.escape(name)}, batch size {size}: (.*?\))", text)
            assert sentence, (name, size, text)
            # Either a share of the peak, or why none can be read from this run.
            said = sentence.group(1)
            assert ("% of the measured peak of" in said) != ("unclear here" in said), said
    assert batch_sizes.probe["figures"] == 1


def test_one_dynamic_compilation_serves_several_sizes(batch_sizes: Run) -> None:
    if "torch.compile" not in batch_sizes.probe["versions"]:
        pytest.skip("torch.compile does not work on this machine")
    # Each first call's output is checked against eager mode's (assert_close raises).
    source = (CHAPTER / BATCH_PAGE).read_text(encoding="utf-8")
    assert "torch.testing.assert_close(output, net(x))" in source
    # Batch size 1 is specialized; the next size compiles the dynamic graph, which
    # every later size shares.
    sizes = batch_sizes.probe["batch_sizes"]
    new_graphs = {int(size): count for size, count in batch_sizes.probe["new_graphs"].items()}
    assert new_graphs == {size: int(size in sizes[:2]) for size in sizes}
    assert batch_sizes.probe["graphs"] == 2
    assert "Dynamo graphs: 2\n" in batch_sizes.stdout
    for size in sizes:
        assert f"batch {size}: " in batch_sizes.stdout


def test_graph_counts_answer(batch_sizes: Run) -> None:
    sizes = len(batch_sizes.probe["batch_sizes"])
    assert batch_sizes.probe["graph_counts"] == {
        "dynamic=True": 2,
        "dynamic=None": 2,
        "dynamic=False": sizes,
    }


# --- Saving a model three ways -------------------------------------------------------

_SERIALIZATION_PROBE = """{
    "folder_removed": not folder.exists(),
    "saved_devices": devices(exported),
    "moved": devices(on_meta),
    "sizes": sizes,
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def serialization() -> Run:
    return shared_run(CHAPTER / PAGES[3], _SERIALIZATION_PROBE).check()


def test_torchscript_deprecation_is_shown_on_saving(serialization: Run) -> None:
    assert "DeprecationWarning caught: `torch.jit.save` is deprecated" in serialization.stdout


def test_the_pt2_is_saved_for_the_cpu(serialization: Run) -> None:
    assert serialization.probe["saved_devices"] == ["cpu"]
    moved = r"^weights: \[.+\] before the move, \['cpu'\] after$"
    assert re.search(moved, serialization.stdout, re.MULTILINE)
    assert serialization.probe["moved"] == ["meta"]


def test_static_and_dynamic_batch_answer(serialization: Run) -> None:
    assert "AssertionError: Guard failed: x.size()[0] == 4" in serialization.stdout
    assert "dynamic batch: 8 inputs, 8 outputs" in serialization.stdout


def test_files_are_listed_with_sizes(serialization: Run) -> None:
    sizes = serialization.probe["sizes"]
    assert set(sizes) == {"mlp.pt", "mlp.pt2", "mlp_model.py", "mlp_state_dict.pt"}
    for name in sizes:  # one labelled line each, its size in a unit
        assert re.search(
            rf"^{re.escape(name)}: [\d.]+ (B|KiB|MiB)$", serialization.stdout, re.MULTILINE
        )
    assert all(size > 0 for size in sizes.values())
    weights = (512 * 256 + 256 + 256 * 128 + 128 + 128 * 2 + 2) * 4
    for name in ("mlp.pt", "mlp.pt2", "mlp_state_dict.pt"):
        assert sizes[name] >= weights, f"{name} is smaller than the weights it holds"
        assert sizes[name] < 2 * weights, f"the weights are not most of {name}"
    assert serialization.probe["folder_removed"]
    assert serialization.probe["figures"] == 1


# --- Loading a saved model elsewhere ----------------------------------------------------

_LOADING_PROBE = """{
    kind: {key: value for key, value in report.items() if key != "output"}
    | {"same_output": bool(torch.allclose(report["output"], reference.cpu()))}
    for kind, report in reports.items()
} | {
    "folder_removed": not folder.exists(),
    "saved_devices": sorted({str(t.device) for t in exported.state_dict.values()}),
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def loading() -> Run:
    return shared_run(CHAPTER / LOADING_PAGE, _LOADING_PROBE).check()


def test_round_trips_give_the_same_output(loading: Run) -> None:
    # Each fresh process's output is checked with assert_close (it raises if not).
    source = (CHAPTER / LOADING_PAGE).read_text(encoding="utf-8")
    assert 'torch.testing.assert_close(report["output"], reference.cpu())' in source
    for kind in ("TorchScript", "torch.export", "state_dict"):
        assert loading.probe[kind]["same_output"], kind
        assert 0 < loading.probe[kind]["load_seconds"] < loading.probe[kind]["process_seconds"]
    assert loading.probe["folder_removed"]
    assert loading.probe["figures"] == 1


def test_only_the_state_dict_needs_the_model_code(loading: Run) -> None:
    for kind in ("TorchScript", "torch.export", "state_dict"):
        assert loading.probe[kind]["importable_at_start"] is False
    assert loading.probe["state_dict"]["imported"] is True
    assert loading.probe["TorchScript"]["imported"] is False
    assert loading.probe["torch.export"]["imported"] is False


def test_without_the_models_folder_the_state_dict_does_not_load(loading: Run) -> None:
    assert "ModuleNotFoundError: No module named 'mlp_model'" in loading.stdout


def test_torchscript_loads_on_the_cpu_with_its_deprecation_shown(loading: Run) -> None:
    assert loading.probe["TorchScript"]["device"] == "cpu"
    assert loading.probe["TorchScript"]["deprecations"] == [
        "`torch.jit.load` is deprecated. Please switch to `torch.export`."
    ]
    assert "TorchScript: DeprecationWarning: `torch.jit.load` is deprecated" in (loading.stdout)


def test_the_pt2_loads_on_the_device_it_was_saved_from(loading: Run) -> None:
    assert loading.probe["saved_devices"] == ["cpu"]
    assert loading.probe["torch.export"]["device"] == "cpu"


def test_importing_torch_alone_is_timed(loading: Run) -> None:
    line = r"^a process that only imports torch: [\d.]+ (ms|s|min)$"
    assert re.search(line, loading.stdout, re.MULTILINE)


@pytest.mark.parametrize("name", [PAGES[3], LOADING_PAGE])
def test_no_rest_list_table_left(name: str) -> None:
    assert "list-table" not in (CHAPTER / name).read_text(encoding="utf-8")


# --- Hybridizing another model: the CNN ---------------------------------------------------

_CNN_PROBE = """{
    "variants": {name: list(versions) for name, versions in variants.items()},
    "sizes": sizes,
    "one_off": {f"{name}, {step}": t for (name, step), t in one_off.items()},
    "figures": len(plt.get_fignums()),
    "positions": positions.numel(),
}"""


@pytest.fixture(scope="module")
def cnn() -> Run:
    return shared_run(CHAPTER / "plot_5_cnn_exercise.py", _CNN_PROBE).check()


def test_cnn_versions_agree_with_eager(cnn: Run) -> None:
    for name, versions in cnn.probe["variants"].items():
        assert versions[:3] == ["eager", "torch.jit.script", "torch.export"]
        # Printed only once assert_close has passed for every version.
        assert f"{name}: {', '.join(versions)}" in cnn.stdout
    assert set(cnn.probe["variants"]) == {"MLP", "LeNet"}
    assert "script_method" not in cnn.stdout
    # One block of conversions, one of saving: each deprecation is printed once.
    assert cnn.stdout.count("`torch.jit.script` is deprecated") == 1
    assert cnn.stdout.count("`torch.jit.save` is deprecated") == 1


def test_cnn_process_setup_comes_first(cnn: Run) -> None:
    stdout = cnn.stdout
    assert stdout.index("first export, a one-layer model: ") < stdout.index(
        "one-off cost (first call or conversion)"
    )


def test_cnn_one_off_costs_and_sizes(cnn: Run) -> None:
    costs = cnn.probe["one_off"]
    assert {"MLP, torch.jit.script", "LeNet, torch.export"} <= set(costs)
    assert all(t > 0 for t in costs.values())
    for row in cnn.probe["sizes"].values():
        assert row["weights"] > 0
        assert row["TorchScript"] >= row["weights"]
        assert row["state_dict"] >= row["weights"]
        assert row["torch.export"] >= row["weights"] + row["example input"]
    assert cnn.probe["sizes"]["LeNet"]["weights"] < cnn.probe["sizes"]["MLP"]["weights"]
    assert cnn.probe["figures"] == 1


def test_weight_reuse_answer(cnn: Run) -> None:
    assert cnn.probe["positions"] == 28 * 28
    assert "uses per weight, LeNet's first convolution: 784" in cnn.stdout


# --- Timing the CNN --------------------------------------------------------------------

_CNN_SPEED_PROBE = """{
    "variants": {name: list(versions) for name, versions in variants.items()},
    "timings": {
        f"{name} {size}": [m.median for m in c.measurements.values()]
        for (name, size), c in comparisons.items()
    },
    "figures": len(plt.get_fignums()),
    "faster": {
        f"{name} {size} {version}": c.faster(version, "eager").outcome
        for (name, size), c in comparisons.items()
        for version in list(c.measurements)[1:]
    },
    "widest": list(widest),
}"""


@pytest.fixture(scope="module")
def cnn_speed() -> Run:
    return shared_run(CHAPTER / "plot_5b_cnn_speed.py", _CNN_SPEED_PROBE).check()


def test_cnn_speed_times_every_version(cnn_speed: Run) -> None:
    assert set(cnn_speed.probe["variants"]) == {"MLP", "LeNet"}
    for name, versions in cnn_speed.probe["variants"].items():
        assert versions[:3] == ["eager", "torch.jit.script", "torch.export"]
        assert f"{name}: {', '.join(versions)}" in cnn_speed.stdout
    assert "script_method" not in cnn_speed.stdout
    assert len(cnn_speed.probe["timings"]) == 4
    assert all(m > 0 for medians in cnn_speed.probe["timings"].values() for m in medians)
    assert cnn_speed.probe["figures"] == 1


def test_cnn_verdicts_and_ratios_follow_the_rounds(cnn_speed: Run) -> None:
    prose = " ".join(cnn_speed.stdout.split())  # verdict lines are folded at 70 columns
    for key, outcome in cnn_speed.probe["faster"].items():
        model, size, version = key.split(" ", 2)
        assert f"faster ({model} {version}, batch {size}): {outcome}" in prose, key
        rows = [
            line
            for line in cnn_speed.stdout.splitlines()
            if line.startswith(f"batch {size}, {version} ")
        ]
        assert len(rows) == 1, key
        cells = re.findall(r"\d+\.\d+×", rows[0])
        assert len(cells) == 2, rows[0]


def test_widest_interval_answer_names_a_comparison(cnn_speed: Run) -> None:
    model, version, size = cnn_speed.probe["widest"]
    prose = " ".join(cnn_speed.stdout.split())  # a paragraph, folded at 70 columns
    assert f"widest: {model} {version}, batch {size}, " in prose
