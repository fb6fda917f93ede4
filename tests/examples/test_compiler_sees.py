"""Check what the "what the compiler sees" pages of the compilers chapter claim (pages 6-9)."""

from __future__ import annotations

import re

import pytest
from harness import Run, run_alone, shared_run

# Every check here runs the chapter's pages: `nox -s examples`, not `nox -s tests`.
pytestmark = pytest.mark.executes


def _prose(run: Run) -> str:
    """What a run printed, with line breaks and runs of spaces as single spaces.

    Conclusions are printed as paragraphs wrapped to 70 columns (``compperf.say``), so a
    sentence can break anywhere.
    """
    return " ".join(run.stdout.split())


# --- Control flow three ways ------------------------------------------------------------

_CONTROL_FLOW_PROBE = """{
    "fx_error": fx_error,
    "export_error": export_error,
    "graph_count": graph_count,
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def control_flow() -> Run:
    return shared_run("plot_6_control_flow.py", _CONTROL_FLOW_PROBE).check()


def test_fx_tracing_fails_on_the_branch(control_flow: Run) -> None:
    assert control_flow.probe["fx_error"].startswith("TraceError: ")
    assert "control flow" in control_flow.probe["fx_error"]
    # compperf folds a long line at 80 columns: compare words, not line breaks.
    said = " ".join(control_flow.stdout.split())
    assert f"torch.fx.symbolic_trace: {' '.join(control_flow.probe['fx_error'].split())}" in said


def test_compile_splits_at_the_branch_into_the_stated_graphs(control_flow: Run) -> None:
    assert control_flow.probe["graph_count"] == 3
    assert "graphs: 3, unique: 3" in control_flow.stdout
    # Each graph: "graph N (input):", then its FX code, in the order Dynamo made them.
    parts = re.split(r"^graph (\d) \((\w+)\):$", control_flow.stdout, flags=re.MULTILINE)
    graphs = list(zip(parts[1::3], parts[2::3], parts[3::3], strict=True))
    assert [(n, call) for n, call, _ in graphs] == [
        ("1", "positive"),
        ("2", "positive"),
        ("3", "negative"),
    ]
    first, positive_branch, negative_branch = (code for _, _, code in graphs)
    assert all("def forward(self, L_x_ : torch.Tensor):" in code for _, _, code in graphs)
    # The first graph stops at the comparison and returns it.
    assert "gt = sum_1 > 0" in first
    assert "return (gt,)" in first
    assert "torch.relu(l_x_)" in positive_branch
    assert "relu * 2" in positive_branch
    assert "sub = l_x_ - 1" in negative_branch.split("torch.export")[0]


def test_export_refuses_and_points_at_the_line(control_flow: Run) -> None:
    probe = control_flow.probe
    assert probe["export_error"].startswith("GuardOnDataDependentSymNode: ")
    said = " ".join(control_flow.stdout.split())  # lines folded at 80 columns
    assert f"torch.export: {' '.join(probe['export_error'].split())}" in said
    assert "the line export points at: if x.sum() > 0:" in control_flow.stdout
    traced = re.search(r"^traced when it stopped: (.*)$", control_flow.stdout, re.MULTILINE)
    assert traced, control_flow.stdout
    assert traced.group(1).split(", ")[-1] == "item"  # it stops where it needs the value


def test_summary_table_follows_the_measurements(control_flow: Run) -> None:
    rows = {
        tool.strip(): cells.split()
        for tool, cells in re.findall(
            r"^(torch\.[\w.]+) +(\S+ +\d+)$", control_flow.stdout, re.MULTILINE
        )
    }
    assert rows == {
        "torch.fx.symbolic_trace": ["TraceError", "0"],
        "torch.compile": ["-", "3"],
        "torch.export": ["GuardOnDataDependentSymNode", "0"],
    }
    # torch.cond is the next lesson's (plot_6b_branch_in_graph): not run here.
    assert "torch.cond" not in control_flow.stdout
    assert control_flow.probe["figures"] == 1


# --- Both branches in the graph ---------------------------------------------------------

_BRANCH_PROBE = """{
    "cond_nodes": cond_nodes,
    "subgraphs": subgraphs,
    "cond_graph_count": cond_graph_count,
    "made": made,
    "if_error": if_error,
    "where_graphs": where_graphs,
    "where_ops": where_ops,
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def branch_in_graph() -> Run:
    return shared_run("plot_6b_branch_in_graph.py", _BRANCH_PROBE).check()


def test_export_keeps_both_branches_as_subgraphs(branch_in_graph: Run) -> None:
    probe = branch_in_graph.probe
    assert len(probe["cond_nodes"]) == 1
    assert probe["subgraphs"] == ["true_graph_0", "false_graph_0"]
    assert "cond: 1, subgraphs: true_graph_0, false_graph_0" in branch_in_graph.stdout
    # The exported code follows: one cond call on both subgraphs.
    assert "torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0" in (branch_in_graph.stdout)


def test_compile_captures_one_graph_with_cond(branch_in_graph: Run) -> None:
    assert branch_in_graph.probe["cond_graph_count"] == 1
    assert "graphs with torch.cond: 1" in branch_in_graph.stdout


def test_side_by_side_table_follows_the_measurements(branch_in_graph: Run) -> None:
    probe = branch_in_graph.probe
    assert probe["made"] == {"if": [3, 0], "torch.cond": [1, 1]}  # JSON: lists
    assert probe["if_error"] == "GuardOnDataDependentSymNode"
    assert f"torch.export with if: {probe['if_error']}" in branch_in_graph.stdout
    rows = re.findall(r"^(if|torch\.cond) +(\d+) +(\d+)$", branch_in_graph.stdout, re.MULTILINE)
    assert {s: [int(c), int(e)] for s, c, e in rows} == probe["made"]
    assert probe["figures"] == 1


def test_answers_check_the_branch_rules_and_where(branch_in_graph: Run) -> None:
    out = branch_in_graph.stdout
    assert "Encountered aliasing" in out  # x[:2] is a view of the input
    assert "\nexports\n" in out  # x[:2].clone() exports
    assert "expected same dtype" in out  # x.long() changes the dtype
    assert branch_in_graph.probe["where_graphs"] == 1
    assert "graphs with torch.where: 1" in out
    # torch.where runs both sides for every input: both branches' operations are there.
    ops = branch_in_graph.probe["where_ops"]
    assert {"relu.default", "sub.Tensor", "where.self"} <= set(ops)
    assert f"exported, runs every time: {', '.join(ops)}" in " ".join(out.split())


# --- Graph breaks -----------------------------------------------------------------------

_BREAKS_PROBE = """{
    "explanations": explanations,
    "fullgraph_errors": fullgraph_errors,
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def graph_breaks() -> Run:
    return shared_run("plot_7_graph_breaks.py", _BREAKS_PROBE).check()


def test_explain_finds_one_break_per_cause(graph_breaks: Run) -> None:
    explanations = graph_breaks.probe["explanations"]
    assert set(explanations) == {"print", ".item()", "json.dumps"}
    for name, found in explanations.items():
        assert (found["graphs"], found["breaks"]) == (2, 1), name
        # The counts, then each reason on a line of its own, as Dynamo words it.
        assert f"{name}: graphs: 2, breaks: 1\n{found['reasons'][0]}\n" in graph_breaks.stdout
    assert "item()" in explanations[".item()"]["reasons"][0]
    assert "builtin operator" in explanations["print"]["reasons"][0]


def test_figure_draws_the_graphs_explain_found(graph_breaks: Run) -> None:
    explanations = graph_breaks.probe["explanations"]
    # The prose says where each function breaks: after the tanh, and for .item() after
    # the abs and the max that it converts.
    assert explanations["print"]["ops"] == [["tanh"], ["mul", "add"]]
    assert explanations[".item()"]["ops"] == [["tanh", "abs", "max"], ["truediv", "mul", "add"]]
    assert explanations["json.dumps"]["ops"][0] == ["tanh"]
    assert graph_breaks.probe["figures"] == 1


def test_fullgraph_turns_breaks_into_errors(graph_breaks: Run) -> None:
    errors = graph_breaks.probe["fullgraph_errors"]
    assert errors["print"].startswith("Unsupported: ")
    assert errors["json.dumps"].startswith("Unsupported: ")
    # fullgraph=True captures .item() as a symbol instead (capture_scalar_outputs).
    assert errors[".item()"] == "-"
    for name, error in errors.items():
        assert f"fullgraph=True, {name}: {' '.join(error.split())}" in _prose(graph_breaks)


def test_breaks_page_answers(graph_breaks: Run) -> None:
    assert "graphs with capture_scalar_outputs=True: 1" in graph_breaks.stdout
    # The log's two lines: its reason, then the line of the page it points at.
    assert graph_breaks.stdout.splitlines()[-1].endswith(": scale = y.abs().max().item()")
    assert graph_breaks.stdout.splitlines()[-1].startswith("plot_7_graph_breaks.py:")
    assert "graph-break log, reason: " in graph_breaks.stdout
    # Fixing and timing are the next lesson's (plot_7b_fixing_breaks): nothing of it here.
    assert "fixed print" not in graph_breaks.stdout
    assert "break minus fix" not in graph_breaks.stdout


# --- Fixing graph breaks ----------------------------------------------------------------

_FIXES_PROBE = """{
    "fixed_graphs": fixed_graphs,
    "backend": backend,
    "timings": [[m.description, m.median, m.iqr] for m in timings],
    "break_costs": break_costs.outcome,
    "against_eager": against_eager.outcome,
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def fixing_breaks() -> Run:
    return shared_run("plot_7b_fixing_breaks.py", _FIXES_PROBE).check()


def test_fixes_leave_one_graph(fixing_breaks: Run) -> None:
    assert fixing_breaks.probe["fixed_graphs"] == {"print": 1, ".item()": 1, "json.dumps": 1}
    for name in ("print", ".item()", "json.dumps"):
        assert f"fixed {name}: graphs: 1, breaks: 0" in fixing_breaks.stdout


def test_break_cost_verdict_follows_the_rounds(fixing_breaks: Run) -> None:
    probe = fixing_breaks.probe
    assert probe["backend"] in {"inductor", "aot_eager"}
    assert f"backend: {probe['backend']}" in fixing_breaks.stdout
    assert [label for label, _, _ in probe["timings"]] == [
        "eager",
        "with a break (.item())",
        "fixed, one graph",
    ]
    prose = _prose(fixing_breaks)
    assert "break minus fix, medians: " in prose
    # Each verdict prints its own line, with the outcome compperf chose.
    for subject, outcome in (
        ("fixed, one graph vs with a break (.item())", probe["break_costs"]),
        ("fixed, one graph vs eager", probe["against_eager"]),
    ):
        assert f"faster ({subject}): {outcome}" in prose, (subject, outcome)
    assert probe["figures"] == 1


def test_fixing_page_answers(fixing_breaks: Run) -> None:
    # The break's Python number recompiles once (automatic dynamic); the fix never does.
    assert "with_item, graphs for 3 factors: 3" in fixing_breaks.stdout
    assert "fixed_item, graphs for 3 factors: 1" in fixing_breaks.stdout
    # torch.compiler.disable keeps the print, and the break.
    assert fixing_breaks.stdout.splitlines()[-2:] == [
        "torch.compiler.disable: graphs: 2, breaks: 1",
        "Skip calling `torch.compiler.disable()`d function",
    ]


# --- Guards and recompilation -----------------------------------------------------------

_GUARDS_PROBE = """{
    "first_guards": first_guards,
    "recompiled": recompiled,
    "recompile_messages": recompile_messages,
}"""


@pytest.fixture(scope="module")
def guards() -> Run:
    return shared_run("plot_8_guards_recompilation.py", _GUARDS_PROBE).check()


def test_guards_cover_the_tensor_and_the_constant(guards: Run) -> None:
    kinds = [line.split(":")[0] for line in guards.probe["first_guards"]]
    assert kinds == ["TENSOR_MATCH", "EQUALS_MATCH"]
    assert "size=[4]" in guards.probe["first_guards"][0]
    assert guards.probe["first_guards"][1] == "EQUALS_MATCH: L['scale'] == 2.0"


def test_thread_count_answer_recompiles_under_one_thread() -> None:
    # Answer 2 switches to another thread count than the current one, so it prints two
    # graphs even where the process starts with one thread.
    run = run_alone("plot_8_guards_recompilation.py", "len(graphs)", OMP_NUM_THREADS="1")
    last = run.check().stdout.splitlines()[-1]
    assert last == "graphs, one thread count and then another: 2"


def test_recompiles_on_shape_dtype_and_constant(guards: Run) -> None:
    assert guards.probe["recompiled"] == {
        "x4, 2.0": 0,  # the same input again
        "x8, 2.0": 1,  # a new shape
        "x16, 2.0": 0,  # automatic dynamic shapes after the first change
        "x16.double(), 2.0": 1,  # a new dtype
        "x16, 3.0": 1,  # a new constant
        "x16, 4.0": 0,
    }
    rows = re.findall(r"^compiled\((.*)\) +(\d+)$", guards.stdout, re.MULTILINE)
    assert {call: int(n) for call, n in rows} == guards.probe["recompiled"]
    messages = guards.probe["recompile_messages"]
    assert len(messages) == 3
    assert "size mismatch at index 0. expected 4, actual 8" in messages[0]
    assert "dtype mismatch. expected Float, actual Double" in messages[1]
    assert "scale == 2.0" in messages[2]
    # The log is on the page (standard output), not only on standard error.
    assert "Recompiling function scaled in plot_8_guards_recompilation.py" in guards.stdout
    assert "calls: 7, graphs: 4\nrecompiles in the log: 3, unique graphs: 4" in guards.stdout
    assert "requires_grad mismatch" in guards.stdout  # answer 1
    assert guards.stderr.strip() == "", guards.stderr  # the logs went to the page


# --- Dynamic shapes and the recompile limit ---------------------------------------------

_DYNAMIC_PROBE = """{
    "choices": choices,
    "mark_dynamic_error": mark_dynamic_error,
    "dynamic_true_shapes": dynamic_true_shapes,
    "batch_sum_shapes": batch_sum_shapes,
    "graphs_after": graphs_after,
    "limit_warnings": limit_warnings,
    "stance_error": stance_error,
}"""


@pytest.fixture(scope="module")
def dynamic() -> Run:
    return shared_run("plot_8b_dynamic_shapes.py", _DYNAMIC_PROBE).check()


def test_dynamic_choices_count_graphs(dynamic: Run) -> None:
    assert dynamic.probe["choices"] == {
        "dynamic=False": 5,
        "dynamic=None": 2,  # the default: automatic dynamic shapes
        "dynamic=True": 1,
        "mark_dynamic(x, 0)": 1,
    }
    assert "dynamic=None: graphs: 2" in dynamic.stdout
    assert "fewest graphs: dynamic=True, mark_dynamic(x, 0)" in dynamic.stdout
    assert dynamic.probe["mark_dynamic_error"].startswith("ConstraintViolationError: ")
    assert dynamic.probe["dynamic_true_shapes"] == ["(4,)"]
    assert re.fullmatch(r"\(s\d+, s\d+\)", dynamic.probe["batch_sum_shapes"][0])


def test_recompile_limit_stops_compiling(dynamic: Run) -> None:
    assert "default recompile_limit: 8" in dynamic.stdout
    assert dynamic.probe["graphs_after"] == {"1": 1, "2": 2, "3": 3, "4": 4, "5": 4, "6": 4}
    assert dynamic.probe["limit_warnings"] == ["torch._dynamo hit config.recompile_limit (4)"]
    assert "no graph, ran in eager mode: steps 5, 6" in _prose(dynamic)
    assert dynamic.probe["stance_error"].startswith("RuntimeError: Detected recompile")
    assert "filename" not in dynamic.probe["stance_error"]  # no path of the build machine
    assert f"fail_on_recompile: {dynamic.probe['stance_error']}" in _prose(dynamic)
    assert dynamic.stdout.splitlines()[-2:] == [
        "maybe_mark_dynamic, graph input shape: (4,)",
        "graphs for steps 1 to 6 as a tensor: 1",
    ]


# --- Compile modes ----------------------------------------------------------------------

_MODES_PROBE = """{
    "device": str(device),
    "compile_seconds": compile_seconds,
    "cudagraph_skips": cudagraph_skips,
    "modes_faster": {
        mode: comparison.faster(names[mode], "eager").outcome
        for mode, comparison in comparisons.items()
    },
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def modes() -> Run:
    return shared_run("plot_9_modes_training.py", _MODES_PROBE).check()


def test_every_mode_compiles_and_reduce_overhead_falls_back_on_cpu(modes: Run) -> None:
    probe = modes.probe
    assert set(probe["compile_seconds"]) == {"default", "reduce-overhead", "max-autotune"}
    assert all(seconds > 0 for seconds in probe["compile_seconds"].values())
    # Each first call says whether Inductor found its graph in the caches on disk.
    first_calls = re.findall(r"^\S+ *first call .*$", modes.stdout, re.MULTILINE)
    assert len(first_calls) == 3
    labels = (", cache hit", ", cache miss", ", cache hit and miss")
    assert all(line.endswith(labels) for line in first_calls)
    if probe["device"] == "cpu":
        assert probe["cudagraph_skips"]["default"] == 0
        assert probe["cudagraph_skips"]["reduce-overhead"] >= 1
        skips = probe["cudagraph_skips"]["reduce-overhead"]
        assert f"reduce-overhead: CUDA graphs skipped: {skips}" in modes.stdout


def test_each_mode_verdict_follows_its_rounds(modes: Run) -> None:
    prose = _prose(modes)
    for mode, outcome in modes.probe["modes_faster"].items():
        # A mode's variant is named as code (`default`): it reads the same in every language.
        assert f"faster (`{mode}` vs eager): {outcome}" in prose, (mode, outcome)


def test_the_modes_page_trains_nothing(modes: Run) -> None:
    # The training step is the next lesson's (plot_9b_training_step): nothing of it here.
    assert "graphs Dynamo compiled for the step" not in modes.stdout
    assert "pays back" not in modes.stdout
    assert modes.probe["figures"] == 1


# --- A compiled training step -----------------------------------------------------------

_TRAINING_PROBE = """{
    "training_graphs": training_graphs,
    "eager_losses": eager_losses,
    "compiled_losses": compiled_losses,
    "step_timings": [[m.description, m.median, m.iqr] for m in step_timings],
    "compile_cost": compile_cost,
    "payback": [payback.outcome, payback.value],
    "figures": len(plt.get_fignums()),
}"""


@pytest.fixture(scope="module")
def training() -> Run:
    return shared_run("plot_9b_training_step.py", _TRAINING_PROBE).check()


def test_training_step_compiles_into_three_graphs_and_matches_eager(training: Run) -> None:
    probe = training.probe
    # forward + backward, a break at backward(), the optimizer update: three graphs
    assert probe["training_graphs"] == 3
    assert "graphs Dynamo compiled for the step: 3" in training.stdout
    assert re.search(
        r"^graph break x1: Unsupported Tensor\.backward\(\) call", training.stdout, re.MULTILINE
    )
    for eager, compiled in zip(probe["eager_losses"], probe["compiled_losses"], strict=True):
        assert compiled == pytest.approx(eager, rel=1e-3, abs=1e-4)


def test_payback_verdict_follows_the_rounds(training: Run) -> None:
    outcome, calls = training.probe["payback"]
    prose = _prose(training)
    assert "compile cost: " in prose
    # The verdict prints its own line; with "yes" its measured value is the steps.
    verdict = f"pays back (compiled step vs eager step): {outcome}"
    assert verdict in prose
    if outcome == "yes":
        assert f"{verdict}, measured {calls:.3g} " in prose
    assert training.probe["figures"] == 1
