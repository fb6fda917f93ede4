"""
Both branches in the graph
==========================

``torch.cond`` turns a Python ``if`` on a tensor into an operator whose two
branches are subgraphs. You export the function that ``torch.export``
refused, compile it into one graph, and see what the branch still costs.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. Nothing else is needed: none of the
tools on this page calls a C++ compiler.
"""

# %%
# The machine
# -----------
# :doc:`/auto_examples/compilers/plot_6_control_flow` met a Python ``if`` on
# a tensor's values: ``torch.compile`` split the function at it, and
# ``torch.export`` refused it. This page spells the same branch as an
# operator. The first line says which device and software produced the
# outputs below.

import contextlib
import io

import matplotlib.pyplot as plt
import torch
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

import compperf
from compperf.i18n import parts, table

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The branch as an operator
# -------------------------
# ``shift`` is the function of the previous page: it doubles the positive
# part of ``x`` when the elements sum to more than zero, and subtracts one
# otherwise. ``torch.cond(predicate, true_fn, false_fn, operands)`` says the
# same thing as one operator: both branches become subgraphs, and the choice
# between them happens when the graph runs. It asks a little of you: both
# branches take the same operands and return tensors with the same dtype,
# device and number of dimensions (their sizes may differ), and neither
# branch may return one of its inputs or a view of it. In eager mode
# ``shift_cond`` runs as it reads: the two tensors below are
# ``shift_cond(positive)`` and ``shift_cond(negative)``, the same as
# ``shift`` gives (``torch.testing.assert_close`` raises otherwise).


def shift(x):
    if x.sum() > 0:
        return torch.relu(x) * 2
    return x - 1


def shift_cond(x):
    return torch.cond(
        x.sum() > 0,
        lambda x: torch.relu(x) * 2,
        lambda x: x - 1,
        (x,),
    )


positive = torch.arange(1.0, 5.0, device=device)
negative = -positive
inputs = (positive, negative)
for x in inputs:
    torch.testing.assert_close(shift_cond(x), shift(x))
    print(shift_cond(x))

# %%
# 1. ``torch.export`` keeps both branches
# ---------------------------------------
# Export takes an ``nn.Module``, so ``Wrap`` holds the function. Now export
# succeeds, and the exported program gives the eager results for both
# inputs, although it was traced with ``positive`` only. The line below
# counts the ``cond`` operators in the exported graph and names its
# subgraphs, the two branches; the graph's code follows. Look for the
# ``cond`` call: it takes the predicate, both subgraphs and the operands.


class Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


exported = torch.export.export(Wrap(shift_cond), (positive,))
for x in inputs:
    torch.testing.assert_close(exported.module()(x), shift(x))
subgraphs = [name for name, _ in exported.graph_module.named_children()]
cond_nodes = [
    node.name
    for node in exported.graph.nodes
    if node.target is torch.ops.higher_order.cond
]
names = ", ".join(subgraphs)
print(compperf.tr("cond: {n}, subgraphs: {s}", n=len(cond_nodes), s=names))
print(exported.graph_module.code.strip())

# %%
# 2. ``torch.compile`` captures one graph
# ---------------------------------------
# As on the previous page, the backend only records the graphs Dynamo hands
# it and runs them unchanged. ``compiled_graphs`` compiles a function afresh,
# calls it on both inputs, checks each result against eager mode and counts
# the graphs. ``fullgraph=True`` makes any graph break an error, so the call
# below also proves there is none; the line counts the graphs the backend
# received for the two calls.

captured = []  # every graph the backend receives


def recording_backend(graph_module, example_inputs):
    """A torch.compile backend that keeps each graph and runs it unchanged."""
    captured.append(graph_module)
    return graph_module.forward


def compiled_graphs(fn, **options):
    """How many graphs torch.compile makes of ``fn`` for both inputs."""
    captured.clear()
    torch.compiler.reset()
    compiled = torch.compile(fn, backend=recording_backend, **options)
    for x in inputs:
        torch.testing.assert_close(compiled(x), shift(x))
    return len(captured)


cond_graph_count = compiled_graphs(shift_cond, fullgraph=True)
print(compperf.tr("graphs with torch.cond: {n}", n=cond_graph_count))

# %%
# ``torch.cond`` removes the graph break, not the synchronization. The
# predicate is a tensor, and the generated code still reads it on the host to
# choose a branch: Inductor's wrapper code calls ``.item()`` on it and
# branches on the result (``torch/_inductor/codegen/wrapper.py``). On a GPU
# every call therefore waits there for the device, like any blocker (see
# :doc:`/auto_examples/asynchronous/plot_barriers_and_blockers`), and Inductor
# disables CUDA graphs for a graph that holds a ``torch.cond``
# (``torch/_inductor/lowering.py``).

# %%
# The ``if`` and ``torch.cond`` side by side
# ------------------------------------------
# The cell measures both spellings again with both tools: the graphs
# ``torch.compile`` makes for the two inputs, and whether ``torch.export``
# gives one graph or stops (none). The first line names the error export
# raised on the ``if``; the table gives the counts, one row per spelling.


def export_graphs(fn):
    """1 if torch.export makes a graph of ``fn``, else 0 and the error."""
    # A failed export also prints the graph it had traced to standard error.
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            torch.export.export(Wrap(fn), (positive,))
        except (GuardOnDataDependentSymNode, torch._dynamo.exc.UserError) as e:
            return 0, type(e).__name__
    return 1, None


if_export, if_error = export_graphs(shift)
cond_export, _ = export_graphs(shift_cond)
made = {  # spelling: (graphs from torch.compile, from torch.export)
    "if": (compiled_graphs(shift), if_export),
    "torch.cond": (cond_graph_count, cond_export),
}
print(compperf.tr("torch.export with if: {e}", e=if_error or "-"))
with parts():
    header = [compperf.tr("spelling"), "torch.compile", "torch.export"]
title = compperf.tr("graphs of shift, by tool")
print(table(header, [(s, *n) for s, n in made.items()], title=title))

# %%
# The figure draws the table: for each spelling, the graphs each tool made,
# and the error where a tool made none. One graph from both tools is what
# ``torch.cond`` buys.

fig, ax = plt.subplots(figsize=(7, 2.6), layout="constrained")
tools = ("torch.compile", "torch.export")
for i, tool in enumerate(tools):
    counts = [graphs[i] for graphs in made.values()]
    rows = [k - 0.2 + 0.4 * i for k in range(len(made))]
    ax.barh(rows, counts, 0.4, label=tool)
    for row, count in zip(rows, counts, strict=True):
        if count == 0:  # only export of the if stops: name its error
            ax.text(0.05, row, if_error, va="center", fontfamily="monospace")
ax.set_yticks(range(len(made)), list(made), fontfamily="monospace")
ax.invert_yaxis()
ax.xaxis.get_major_locator().set_params(integer=True)
ax.set_xlabel(compperf.tr("graphs"))
ax.set_title(compperf.tr("Graphs of one function, if or torch.cond"))
fig.legend(loc="outside upper center", ncols=2, prop={"family": "monospace"})
plt.show()

# %%
# Summary
# -------
# * ``torch.cond`` makes a branch on a tensor's values an operator with both
#   sides as subgraphs; the choice happens when the graph runs.
# * ``torch.export`` accepts it, and the exported program takes either branch
#   for any input of the declared kind.
# * ``torch.compile`` captures a single graph, even with ``fullgraph=True``.
# * The predicate is still read on the host: on a GPU the branch waits for
#   the device, and Inductor gives up CUDA graphs for that graph.
#
# Exercises
# ---------
# 1. Let the true branch of ``torch.cond`` return ``x[:2]``. What does export
#    say? Then try ``x[:2].clone()``, and ``x.long()``: which of the three
#    does export accept, and why?
# 2. Write ``shift_where`` with ``torch.where(x.sum() > 0, torch.relu(x) * 2,
#    x - 1)``. How many graphs does ``torch.compile`` make, does export accept
#    it, and which operations does the exported graph run for every input?


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. ``x[:2]`` is a view of the input, and a branch must not return one:
#    export stops at the aliasing. ``x[:2].clone()`` exports although
#    the branches return different sizes (the size becomes a symbol).
#    ``x.long()`` fails: the branches must agree on dtype, device and
#    number of dimensions.
import re


def export_cond(true_fn):
    def branchy(x):
        return torch.cond(x.sum() > 0, true_fn, lambda x: x - 1, (x,))

    try:
        torch.export.export(Wrap(branchy), (positive,))
        return compperf.tr("exports")
    except RuntimeError as error:  # torch._dynamo.exc errors are RuntimeErrors
        found = re.search(
            r"Encountered aliasing.*|expected same [^\"]*", str(error)
        )
        return f"{type(error).__name__}: {found.group(0) if found else error}"


print(export_cond(lambda x: x[:2]))  # an error about aliasing
print(export_cond(lambda x: x[:2].clone()))  # it exports
print(export_cond(lambda x: x.long()))  # an error: the dtypes differ


# 2. One graph and an export, without a branch at all: ``torch.where``
#    computes both sides and picks element by element on the device.
def shift_where(x):
    return torch.where(x.sum() > 0, torch.relu(x) * 2, x - 1)


where_graphs = compiled_graphs(shift_where, fullgraph=True)
print(compperf.tr("graphs with torch.where: {n}", n=where_graphs))
where_ops = [
    node.target.__name__
    for node in torch.export.export(Wrap(shift_where), (positive,)).graph.nodes
    if node.op == "call_function"
]
ops = ", ".join(where_ops)
print(compperf.tr("exported, runs every time: {ops}", ops=ops))
