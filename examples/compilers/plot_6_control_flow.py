"""
Control flow three ways
=======================

One small function with a Python ``if`` on a tensor meets three tools that
capture graphs: ``torch.fx`` tracing, ``torch.compile`` and ``torch.export``.
You see which of them fails, which one splits the function at the branch,
and which one refuses it and points at the line.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. Nothing else is needed: none of the tools on
this page calls a C++ compiler.
"""

# %%
# Why it matters
# --------------
# An imperative program decides what to do next while it runs: Python looks at
# a value and takes one branch. A symbolic program is a graph built before any
# value exists, so a branch on a value has no obvious place in it. Real models
# branch all the time (on a sum, a mask, a norm), and every graph-capturing
# tool answers the question differently. The first line says which device and
# software produced the outputs below.

import contextlib
import io

import matplotlib.pyplot as plt
import torch
import torch.fx
from torch._dynamo.utils import counters
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

import compperf
from compperf.i18n import parts, table

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# A function that looks at its data
# ---------------------------------
# ``shift`` doubles the positive part of ``x`` when the elements sum to more
# than zero, and subtracts one otherwise. Which branch runs depends on the
# values in ``x``, not on its shape or type. In eager mode this is ordinary
# Python, and both inputs below take their own branch: the two tensors printed
# are ``shift(positive)`` (its elements doubled) and ``shift(negative)`` (one
# subtracted from each).


def shift(x):
    if x.sum() > 0:
        return torch.relu(x) * 2
    return x - 1


positive = torch.arange(1.0, 5.0, device=device)
negative = -positive
print(shift(positive))
print(shift(negative))

# %%
# 1. ``torch.fx`` tracing fails
# -----------------------------
# ``torch.fx.symbolic_trace`` runs the function once with placeholder values
# (proxies) that record each operation. A proxy has no value, so ``if`` cannot
# decide, and the tracer stops with an error that names the problem. The line
# below prints that error (a dash where the function traced without one).

fx_error = None
try:
    torch.fx.symbolic_trace(shift)
except torch.fx.proxy.TraceError as error:
    fx_error = f"{type(error).__name__}: {error}"
print(compperf.tr("torch.fx.symbolic_trace: {e}", e=fx_error or "-"))

# %%
# 2. ``torch.compile`` splits at the branch
# -----------------------------------------
# ``torch.compile`` reads Python bytecode with Dynamo and hands each graph it
# captures to a backend. Here the backend is a small function that only
# records the graphs and runs them as they are, so you see what Dynamo made
# without waiting for a compiler. When Dynamo reaches the ``if``, it ends the
# graph (a *graph break*), lets Python evaluate the condition, and captures
# what follows as a new graph. Dynamo keeps statistics in
# ``torch._dynamo.utils.counters``; ``torch.compiler.reset()`` forgets compiled
# code but not those counters, so the cell clears both before it starts.
#
# ``torch.testing.assert_close`` raises if a compiled result differs from
# eager mode, so the cell goes on only when both inputs give the eager
# results. The first line then counts the graphs the backend received, next
# to Dynamo's own counter of unique graphs.
#
# Each graph below starts with its number and the input of the call during
# which Dynamo made it; its code follows, as FX prints it. Look at the
# operations of each graph. The first one stops at the comparison: it
# returns the boolean that Python then tests. The branch the first call took
# became a graph of its own; the second call reused the first graph (same
# shape, same type), took the other branch and made one more.

captured = []  # (name of the input, FX graph module) for every graph


def recording_backend(graph_module, example_inputs):
    """A torch.compile backend that keeps each graph and runs it unchanged."""
    captured.append((current_call, graph_module))
    return graph_module.forward


torch.compiler.reset()
counters.clear()
compiled_shift = torch.compile(shift, backend=recording_backend)
inputs = {"positive": positive, "negative": negative}
for name, x in inputs.items():
    current_call = name  # recording_backend reads it
    torch.testing.assert_close(compiled_shift(x), shift(x))
graph_count = len(captured)
unique = counters["stats"]["unique_graphs"]
print(compperf.tr("graphs: {n}, unique: {u}", n=graph_count, u=unique))
for number, (call, graph_module) in enumerate(captured, start=1):
    print(compperf.tr("graph {i} ({x}):", i=number, x=call))
    print(graph_module.code.strip(), end="\n\n")

# %%
# 3. ``torch.export`` refuses
# ---------------------------
# ``torch.export`` promises one whole graph that runs without Python, for
# any input of the declared kind. A graph break would need Python to run
# between two graphs, so export stops instead, at the line with the ``if``.
# The cell wraps the function in a module (export takes an ``nn.Module``)
# and prints the error's type and its first line, then the line of code it
# points at. The last line lists the operations export had traced when it
# stopped: a last ``item`` is the moment it needed the value of the
# condition, which a graph made in advance cannot know. A dash stands for
# what export did not report.


class Shift(torch.nn.Module):
    def forward(self, x):
        return shift(x)


export_error, quoted, partial_graph = None, [], []
# On failure, export also prints the graph it had traced so far to standard
# error; the cell keeps that text off the page and reads it from the error.
with contextlib.redirect_stderr(io.StringIO()):
    try:
        torch.export.export(Shift(), (positive,))
    except (GuardOnDataDependentSymNode, torch._dynamo.exc.UserError) as error:
        message = str(error).splitlines()
        export_error = f"{type(error).__name__}: {message[0]}"
        # The message goes on to quote the user code that raised it.
        quoted = [x.strip() for x in message if x.strip().startswith("if ")]
        partial = getattr(error, "partial_fx_graph", "") or ""
        partial_graph = [  # the name of each node that calls an operator
            line.split(" = ")[0].split(":")[0].strip()
            for line in partial.splitlines()
            if " = torch.ops." in line
        ]
print(compperf.tr("torch.export: {e}", e=export_error or "-"))
print(compperf.tr("the line export points at: {x}", x=(quoted or ["-"])[0]))
traced = ", ".join(partial_graph) or "-"
print(compperf.tr("traced when it stopped: {ops}", ops=traced))

# %%
# The trade-off on one function
# -----------------------------
# The table sums up what each tool did with ``shift``, as measured above: the
# type of the error it raised on the branch (a dash where it raised none) and
# the number of graphs it made (none where it failed); the figure draws the
# same rows. The plain ``if`` is easiest to write and debug;
# ``torch.compile`` keeps it working by giving up the single graph; a program
# that must run without Python needs the branch spelled as an operator,
# ``torch.cond``, which
# :doc:`/auto_examples/compilers/plot_6b_branch_in_graph` puts in the graph.

rows = [
    ("torch.fx.symbolic_trace", fx_error, 0 if fx_error else 1),
    ("torch.compile", None, graph_count),
    ("torch.export", export_error, 0 if export_error else 1),
]
rows = [(tool, (e or "-").split(":")[0], n) for tool, e, n in rows]
with parts():
    header = [compperf.tr("tool"), compperf.tr("error"), compperf.tr("graphs")]
print(table(header, rows))

fig, ax = plt.subplots(figsize=(7, 2.0), layout="constrained")
ax.barh(range(len(rows)), [graphs for _, _, graphs in rows])
ax.set_yticks(
    range(len(rows)), [t for t, _, _ in rows], fontfamily="monospace"
)
for row, (_, error, graphs) in enumerate(rows):
    if graphs == 0:  # name the error instead of a bar
        ax.text(0.05, row, error, va="center", fontfamily="monospace")
ax.invert_yaxis()
ax.xaxis.get_major_locator().set_params(integer=True)
ax.set_title(compperf.tr("Graphs of one function with an if, by tool"))
plt.show()

# %%
# Summary
# -------
# * A Python ``if`` on a tensor's value is a decision made while the program
#   runs; a graph made beforehand cannot contain it as plain Python.
# * ``torch.fx.symbolic_trace`` fails on such a branch; ``torch.export``
#   refuses it and points at the line.
# * ``torch.compile`` keeps the program working by splitting it: one graph up
#   to the condition, then one graph per branch taken, with Python in between.
# * A branch that must stay in one graph needs another spelling:
#   :doc:`/auto_examples/compilers/plot_6b_branch_in_graph` shows
#   ``torch.cond``.
#
# Exercises
# ---------
# 1. Call ``compiled_shift`` a third time with another positive input of the
#    same shape. Does Dynamo capture a new graph? Check ``len(captured)``.
# 2. Change the condition to ``if x.shape[0] > 2:``. The branch now depends
#    on a shape, not on values. How many graphs does ``torch.compile`` make,
#    and does ``torch.export`` accept it?


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. No new graph: the same shape and type pass every guard, so Dynamo
#    reuses the graphs it has; the count stays the same.
captured.clear()
torch.compiler.reset()
compiled_shift = torch.compile(shift, backend=recording_backend)
for x in (positive, negative, positive + 1):
    compiled_shift(x)
print(compperf.tr("graphs for the three calls: {n}", n=len(captured)))


# 2. A shape is known while tracing: no break, one graph, export works.
def by_shape(x):
    return x * 2 if x.shape[0] > 2 else x - 1


captured.clear()
torch.compiler.reset()
torch.compile(by_shape, backend=recording_backend)(positive)
print(compperf.tr("graphs for by_shape: {n}", n=len(captured)))


class ByShape(torch.nn.Module):
    def forward(self, x):
        return by_shape(x)


print(torch.export.export(ByShape(), (positive,)).graph)
