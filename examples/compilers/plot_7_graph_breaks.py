"""
Graph breaks
============

``torch.compile`` never refuses a Python function: where it cannot follow the
code, it ends the graph, lets Python run that part, and starts a new graph.
You find these graph breaks, see their usual causes and count the graphs that
each one leaves.

To run this example yourself, install PyTorch and matplotlib (``pip install
torch matplotlib``), and compperf as :ref:`run-yourself` explains. Nothing else
is needed: the graphs on this page are captured but never turned into machine
code.
"""

# %%
# Why it matters
# --------------
# A graph break is silent: the compiled function still returns the right
# result, only more slowly. Each break ends a graph, so the compiler sees
# smaller pieces and fuses less, and every call goes back to Python and
# through another set of guards. A model that you think is one graph can be a
# dozen. This page finds the breaks; the next lesson,
# :doc:`/auto_examples/compilers/plot_7b_fixing_breaks`, fixes them and
# measures what one costs. The first line says which device and software
# produced the outputs.

import json

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Patch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Three usual causes
# ------------------
# Each function below computes a ``tanh``, then runs one line that Dynamo
# cannot put in a graph, then scales the result:
#
# * ``print``: output is a side effect that must happen in order, in Python;
# * ``.item()``: turns a tensor into a Python number, which the rest of the
#   function then uses as a constant;
# * unsupported Python: ``json.dumps`` is Python code, but it hands the work
#   to the C encoder of the ``_json`` extension module, and Dynamo breaks the
#   graph where it reaches that C function, which it cannot look inside.
#
# In eager mode all three return the same values: each line below names the
# cause and the first three values its function returns.


def with_print(x):
    y = torch.tanh(x)
    print("tanh done")
    return y * 2 + 1


def with_item(x):
    y = torch.tanh(x)
    scale = y.abs().max().item()
    return y / scale * 2 + 1


SETTINGS = {"scale": 1.0}


def with_json(x):
    y = torch.tanh(x)
    settings = json.loads(
        json.dumps(SETTINGS)
    )  # a copy, as a config loader might do
    return y * settings["scale"] * 2 + 1


x = torch.randn(1000, device=device)
causes = {"print": with_print, ".item()": with_item, "json.dumps": with_json}
for name, fn in causes.items():
    print(name, fn(x)[:3])

# %%
# Find them with ``torch._dynamo.explain``
# ----------------------------------------
# ``torch._dynamo.explain(fn)(*args)`` runs ``fn`` once under Dynamo and
# reports every graph and every break, with the reason Dynamo gives. It resets
# Dynamo before and after it runs: every graph compiled so far in the process
# is forgotten (on CUDA, with the CUDA graphs recorded for them), and the next
# call of a compiled function compiles again. Run it before you compile and
# time, not in between; ``run_and_get_code`` (page 2) resets Dynamo before
# its call too.
# Each cause prints a line with its count of graphs and of breaks, then the
# first line of each reason, as Dynamo gives it. The ``print`` also shows its
# output once, while Dynamo runs it.


def operations(graph):
    """The names of the operations of an FX graph, in order."""
    return [
        getattr(node.target, "__name__", str(node.target))
        for node in graph.graph.nodes
        if node.op in ("call_function", "call_method", "call_module")
    ]


explanations = {}
for name, fn in causes.items():
    report = torch._dynamo.explain(fn)(x)
    reasons = [r.reason.splitlines()[0] for r in report.break_reasons]
    # A break before the first tensor operation leaves no graph behind, so
    # graph_count - 1 can miss it; the reasons list counts every break.
    g, b = report.graph_count, len(reasons)
    ops = [operations(graph) for graph in report.graphs]
    explanations[name] = {"graphs": g, "breaks": b, "reasons": reasons}
    explanations[name]["ops"] = ops
    print(compperf.tr("{f}: graphs: {g}, breaks: {b}", f=name, g=g, b=b))
    print(*reasons, sep="\n")  # as Dynamo words them

# %%
# The figure draws each function as Dynamo split it: one box per operation,
# in the order the function runs them, coloured by the graph that holds it,
# and a hatched box where the graph breaks and Python runs the line. The
# ``.item()`` function keeps ``abs`` and ``max`` in its first graph: Dynamo
# stops only at the conversion to a Python number.

fig, ax = plt.subplots(figsize=(7, 2.8), layout="constrained")
graph_style = [{"facecolor": f"C{2 * n}", "alpha": 0.5} for n in range(2)]
break_style = {"facecolor": "none", "edgecolor": "C1", "hatch": "//"}
box_text = {"ha": "center", "va": "center", "fontsize": 8}
box_text |= {"fontfamily": "monospace", "backgroundcolor": "white"}
for row, (name, found) in enumerate(explanations.items()):
    boxes = []
    for number, ops in enumerate(found["ops"]):
        if number:  # between two graphs, the line that Python runs
            boxes.append((name, break_style))
        boxes += [(op, graph_style[number]) for op in ops]
    for column, (text, style) in enumerate(boxes):
        ax.barh(row, 0.9, left=column, **style)
        ax.text(column + 0.45, row, text, **box_text)
ax.set_yticks(range(len(causes)), list(causes), fontfamily="monospace")
ax.invert_yaxis()
ax.set_xticks([])
ax.set_xlabel(compperf.tr("the function's operations, in the order they run"))
ax.set_title(compperf.tr("Where Dynamo breaks each function"))
labels = [compperf.tr("graph 1"), compperf.tr("graph 2")]
handles = [
    Patch(**s, label=t) for s, t in zip(graph_style, labels, strict=True)
]
handles.append(Patch(**break_style, label=compperf.tr("graph break")))
fig.legend(handles=handles, loc="outside upper center", ncols=3)
plt.show()

# %%
# ``fullgraph=True`` turns a break into an error
# ----------------------------------------------
# When you need one graph, say so: ``torch.compile(fn, fullgraph=True)``
# raises at the first break instead of splitting, and the error says why and
# where. ``backend="eager"`` skips code generation, since only Dynamo's
# capture matters here. Look at the ``.item()`` line: with ``fullgraph=True``
# Dynamo turns on ``capture_scalar_outputs``, which keeps the number inside the
# graph as a symbol, so that break disappears instead of becoming an error.
# Each line shows the error's type and first line, or a dash where the
# function compiled as one graph.

fullgraph_errors = {}
for name, fn in causes.items():
    torch.compiler.reset()
    try:
        torch.compile(fn, fullgraph=True, backend="eager")(x)
    except torch._dynamo.exc.Unsupported as error:
        found = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    else:
        found = "-"
    fullgraph_errors[name] = found
    print(compperf.tr("fullgraph=True, {f}: {e}", f=name, e=found))

# %%
# Summary
# -------
# * A graph break splits a compiled function into several graphs with Python
#   in between; results stay right, so breaks go unnoticed.
# * ``torch._dynamo.explain`` counts graphs and breaks and gives each reason;
#   ``fullgraph=True`` turns the first break into an error.
# * Usual causes: ``print`` and other side effects, ``.item()`` and other
#   conversions to Python values, and calls Dynamo cannot trace, such as C
#   functions from the standard library.
# * How to fix each of them, and what one break costs on this machine:
#   :doc:`/auto_examples/compilers/plot_7b_fixing_breaks`.
#
# Exercises
# ---------
# 1. Set ``torch._dynamo.config.capture_scalar_outputs = True`` and explain
#    ``with_item`` again. How many graphs are there now?
# 2. Switch on the graph-break log with
#    ``torch._logging.set_logs(graph_breaks=True)`` (the API behind
#    ``TORCH_LOGS="graph_breaks"``) and call a freshly compiled ``with_item``.
#    Which line of your code does the log point at?


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. The .item() becomes part of the graph: one graph, no break (as
#    with fullgraph=True above).
with torch._dynamo.config.patch(capture_scalar_outputs=True):
    graphs = torch._dynamo.explain(with_item)(x).graph_count
print(compperf.tr("graphs with capture_scalar_outputs=True: {n}", n=graphs))

# 2. The log names the reason and points at `scale = y.abs().max().item()`.
#    It goes to standard error, one long record per break; the cell keeps it
#    and prints the two lines that answer: the reason, then the file, line
#    number and code the log points at.
import contextlib
import io
import linecache
import os

log = io.StringIO()
torch.compiler.reset()
# torch's log handler writes into log
with contextlib.redirect_stderr(log):
    torch._logging.set_logs(graph_breaks=True)
    torch.compile(with_item, backend="eager")(x)
torch._logging.set_logs()  # off again, writing to the real standard error
record = [
    line.partition("[__graph_breaks] ")[2]
    for line in log.getvalue().splitlines()
]
where = next(
    line for line in record if line.startswith("Graph break in user code at")
)
file, line_number = where.rsplit(" ", 1)[1].rsplit(":", 1)
reason = next(line for line in record[record.index(where) + 2 :] if line)
code = linecache.getline(file, int(line_number)).strip()
print(compperf.tr("graph-break log, reason: {r}", r=reason))
print(f"{os.path.basename(file)}:{line_number}: {code}")
