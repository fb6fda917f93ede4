"""
Control flow three ways
=======================

One small function with a Python ``if`` on a tensor meets three tools that
capture graphs: ``torch.fx`` tracing, ``torch.compile`` and ``torch.export``.
You see which of them fails, which one splits the function, and how
``torch.cond`` turns the branch into something every tool can keep.

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
# 2. ``torch.compile`` splits the function at the branch
# ------------------------------------------------------
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
# to Dynamo's own counter of unique graphs; each line after it is one graph:
# its number, the input of the call during which Dynamo made it, and its
# operations.

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
    ops = ", ".join(
        node.name
        for node in graph_module.graph.nodes
        if node.op in ("call_function", "call_method")
    )
    print(compperf.tr("graph {i} ({x}): {ops}", i=number, x=call, ops=ops))

# %%
# Look at the operations of each graph. The first one stops at the
# comparison: it returns the boolean that Python then tests. The branch the
# first call took became a graph of its own; the second call reused the
# first graph (same shape, same type), took the other branch and made
# one more. The code of each graph, in the same order, as FX prints it:

for _, graph_module in captured:
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
        quoted = [
            line.strip() for line in message if line.strip().startswith("if ")
        ]
        partial = getattr(error, "partial_fx_graph", "") or ""
        partial_graph = [
            line.split(" = ")[0].split(":")[0].strip()
            for line in partial.splitlines()
            if " = torch.ops." in line
        ]
print(compperf.tr("torch.export: {e}", e=export_error or "-"))
print(compperf.tr("the line export points at: {x}", x=(quoted or ["-"])[0]))
traced = ", ".join(partial_graph) or "-"
print(compperf.tr("traced when it stopped: {ops}", ops=traced))

# %%
# 4. ``torch.cond`` keeps both branches in the graph
# --------------------------------------------------
# ``torch.cond(predicate, true_fn, false_fn, operands)`` is control flow as an
# operator: both branches become subgraphs, and the choice between them happens
# when the graph runs. It asks a little of you: both branches take the same
# operands and return tensors with the same dtype, device and number of
# dimensions (their sizes may differ), and neither branch may return one of
# its inputs or a view of it. Now export succeeds, and the exported program
# gives the eager results for both inputs (``assert_close`` checks it). The
# line below counts the ``cond`` operators in the exported graph and names
# its subgraphs, the two branches; the graph's code follows.


def shift_cond(x):
    return torch.cond(
        x.sum() > 0,
        lambda x: torch.relu(x) * 2,
        lambda x: x - 1,
        (x,),
    )


class ShiftCond(torch.nn.Module):
    def forward(self, x):
        return shift_cond(x)


exported = torch.export.export(ShiftCond(), (positive,))
exported_module = exported.module()
for x in (positive, negative):
    torch.testing.assert_close(exported_module(x), shift(x))
subgraphs = [name for name, _ in exported.graph_module.named_children()]
cond_nodes = [
    node.name
    for node in exported.graph.nodes
    if node.op == "call_function"
    and node.target is torch.ops.higher_order.cond
]
names = ", ".join(subgraphs)
print(compperf.tr("cond: {n}, subgraphs: {s}", n=len(cond_nodes), s=names))
print(exported.graph_module.code.strip())

# %%
# ``torch.compile`` gains too: with ``torch.cond`` Dynamo captures one graph for
# both inputs. ``fullgraph=True`` makes any graph break an error, so the call
# below also proves there is none; the line counts the graphs the backend
# received for the two calls.
#
# ``torch.cond`` removes the graph break, not the synchronization. The
# predicate is a tensor, and the generated code still reads it on the host to
# choose a branch: Inductor's wrapper code calls ``.item()`` on it and
# branches on the result (``torch/_inductor/codegen/wrapper.py``). On a GPU
# every call therefore waits there for the device, like any blocker (see
# :doc:`/auto_examples/asynchronous/plot_barriers_and_blockers`), and Inductor
# disables CUDA graphs for a graph that holds a ``torch.cond``
# (``torch/_inductor/lowering.py``). ``torch.where(condition, a, b)`` avoids
# both, at the cost of computing both branches: it chooses element by element
# on the device.

captured.clear()
torch.compiler.reset()
counters.clear()
compiled_cond = torch.compile(
    shift_cond, backend=recording_backend, fullgraph=True
)
for name, x in inputs.items():
    current_call = name
    torch.testing.assert_close(compiled_cond(x), shift(x))
cond_graph_count = len(captured)
print(compperf.tr("graphs with torch.cond: {n}", n=cond_graph_count))

# %%
# The trade-off on one function
# -----------------------------
# The table sums up what each tool did with ``shift``, as measured above: the
# type of the error it raised on the branch (a dash where it raised none) and
# the number of graphs it made (none where it failed).
# The plain ``if`` is easiest to write and debug; ``torch.compile`` keeps it
# working by giving up the single graph; a program that must run without
# Python needs the branch spelled as an operator.

made = {
    "torch.fx.symbolic_trace": 0 if fx_error else 1,
    "torch.compile": graph_count,
    "torch.export": 0 if export_error else 1,
    "torch.export + torch.cond": 1,
    "torch.compile + torch.cond": cond_graph_count,
}
errors = {
    "torch.fx.symbolic_trace": fx_error,
    "torch.export": export_error,
}
rows = [
    (tool, (errors.get(tool) or "-").split(":")[0], graphs)
    for tool, graphs in made.items()
]
with parts():
    header = [compperf.tr("tool"), compperf.tr("error"), compperf.tr("graphs")]
print(table(header, rows))

# %%
# The figure draws the last column: the graphs each tool made of ``shift``.

fig, ax = plt.subplots(figsize=(7, 2.8), layout="constrained")
ax.barh(range(len(made)), list(made.values()))
ax.set_yticks(range(len(made)), list(made), fontfamily="monospace")
ax.invert_yaxis()
ax.xaxis.get_major_locator().set_params(integer=True)
ax.set_xlabel(compperf.tr("graphs"))
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
# * ``torch.cond`` makes the branch an operator with both sides as subgraphs,
#   so export succeeds and ``torch.compile`` captures a single graph.
#
# Exercises
# ---------
# 1. Call ``compiled_shift`` a third time with another positive input of the
#    same shape. Does Dynamo capture a new graph? Check ``len(captured)``.
# 2. Change the condition to ``if x.shape[0] > 2:``. The branch now depends
#    on a shape, not on values. How many graphs does ``torch.compile`` make,
#    and does ``torch.export`` accept it?
# 3. Let the true branch of ``torch.cond`` return ``x[:2]``. What does export
#    say? Then try ``x[:2].clone()``, and ``x.long()``: which of the three
#    does export accept, and why?


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

# 3. ``x[:2]`` is a view of the input, and a branch must not return one:
#    export stops at the aliasing. ``x[:2].clone()`` exports although
#    the branches return different sizes (the size becomes a symbol).
#    ``x.long()`` fails: the branches must agree on dtype, device and
#    number of dimensions.
import re


def export_cond(true_fn):
    class Cond(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, true_fn, lambda x: x - 1, (x,))

    try:
        torch.export.export(Cond(), (positive,))
        return compperf.tr("exports")
    except RuntimeError as error:  # torch._dynamo.exc errors are RuntimeErrors
        found = re.search(
            r"Encountered aliasing.*|expected same [^\"]*", str(error)
        )
        return f"{type(error).__name__}: {found.group(0) if found else error}"


print(export_cond(lambda x: x[:2]))  # an error about aliasing
print(export_cond(lambda x: x[:2].clone()))  # it exports
print(export_cond(lambda x: x.long()))  # an error: the dtypes differ
