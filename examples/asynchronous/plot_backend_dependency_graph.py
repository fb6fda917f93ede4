"""
The frontend, the backend and the dependency graph
==================================================

You record the operations that the program ``z = x * y + 2`` hands to PyTorch's
backend and find out which of them depend on each other, draw them, and see
that eager PyTorch does not use that graph: a CUDA stream runs kernels in the
order they were queued.

To run this example yourself, install PyTorch, then ``pip install matplotlib
graphviz``, and compperf as :ref:`run-yourself` explains. The picture also
needs Graphviz's ``dot`` program (``apt-get install graphviz`` or ``brew
install graphviz``); without it the page prints the graph as text.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the outputs on this page.
import io

import matplotlib.image
import matplotlib.pyplot as plt
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.profiler import ProfilerActivity, profile

import compperf

try:
    import graphviz
except ImportError:  # It is optional: only the picture needs it.
    graphviz = None

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The program
# -----------
# Your Python code is the frontend: it decides what to compute. The backend
# (PyTorch's C++ operators and, on a GPU, the device) does the computing.
# ``make_fx`` runs the program below once and records every operator call
# that reaches the backend, as an FX graph; the code printed below is
# generated from that graph.


def program():
    x = torch.ones((1, 2), device=device)
    y = torch.ones((1, 2), device=device)
    z = x * y + 2
    return z


graph_module = make_fx(program)()
print(graph_module.code.strip())

# %%
# Who depends on whom
# -------------------
# Two operations are independent when neither one needs the other's result,
# directly or through others: a scheduler that knew the graph could run them
# in either order, or at the same time. The level of an operation is the
# length of the longest chain of operations it waits for. The table gives
# each operation's operator, the operations it needs and its level; the line
# after it lists the independent pairs ("-" where there are none).


def dependencies(graph_module):
    """The operations of an FX graph, their inputs, levels and independent pairs."""
    operations = [
        node for node in graph_module.graph.nodes if node.op == "call_function"
    ]
    inputs = {
        node: [arg for arg in node.all_input_nodes if arg in operations]
        for node in operations
    }
    ancestors, level = {}, {}
    # FX keeps the nodes in an order where inputs come first.
    for node in operations:
        ancestors[node] = set().union(
            *(ancestors[arg] | {arg} for arg in inputs[node])
        )
        level[node] = max((level[arg] + 1 for arg in inputs[node]), default=0)
    independent_pairs = [
        (first.name, second.name)
        for i, first in enumerate(operations)
        for second in operations[i + 1 :]
        if first not in ancestors[second] and second not in ancestors[first]
    ]
    return operations, inputs, level, independent_pairs


header = compperf.tr("operation  operator             needs            level")


def print_dependencies(graph_module):
    operations, inputs, level, independent_pairs = dependencies(graph_module)
    print(header)
    for node in operations:
        needs = ", ".join(arg.name for arg in inputs[node]) or "-"
        print(f"{node.name:<10} {node.target!s:<20} {needs:<16} {level[node]}")
    pairs = independent_pairs or "-"
    print(compperf.tr("independent pairs: {pairs}", pairs=pairs))


operations, inputs, level, independent_pairs = dependencies(graph_module)
print_dependencies(graph_module)

# %%
# The picture
# -----------
# Graphviz draws the same graph, one row per level, with the independent
# operations side by side on the top row. An arrow points from an operation to
# the one that uses its result. Without the ``graphviz`` package or the
# ``dot`` program this cell says which is missing and prints the graph as
# text instead: its edges, or its source in Graphviz's DOT language.
independent = {name for pair in independent_pairs for name in pair}
edges = [(arg.name, node.name) for node in operations for arg in inputs[node]]
png = None
if graphviz is None:
    print(compperf.tr("no picture: the graphviz package is not installed"))
    listed = ", ".join(f"{a} -> {b}" for a, b in edges)
    print(compperf.tr("edges: {edges}", edges=listed))
else:
    drawing = graphviz.Digraph(graph_attr={"rankdir": "TB", "dpi": "150"})
    drawing.attr(
        "node", shape="box", style="rounded,filled", fontname="Helvetica"
    )
    for node in operations:
        colour = "#cfe8ff" if node.name in independent else "#eeeeee"
        drawing.node(
            node.name, f"{node.name}\n{node.target}", fillcolor=colour
        )
    for start, end in edges:
        drawing.edge(start, end)
    drawing.node("z", "z", shape="plaintext", style="")
    drawing.edge(operations[-1].name, "z")
    try:
        png = drawing.pipe(format="png")
    except graphviz.ExecutableNotFound:
        print(compperf.tr("no picture: dot is not installed; the DOT source:"))
        print(drawing.source)

if png is not None:
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    height, width = image.shape[:2]
    fig, ax = plt.subplots(figsize=(width / 150, height / 150 + 0.7))
    ax.imshow(image)
    ax.set_axis_off()
    ax.set_title(compperf.tr("z = x * y + 2 as the backend sees it"))
    returned = compperf.tr("z is returned to Python")
    ax.text(0.5, 0, returned, transform=ax.transAxes, ha="center", va="top")
    fig.tight_layout()
    plt.show()

# %%
# What eager PyTorch does with the graph: nothing
# -----------------------------------------------
# In eager mode no scheduler looks at this graph. Each Python call hands its
# operator to the backend at once, in program order. On a CPU the operator runs
# before the call returns. On CUDA it launches a kernel on the *current
# stream*, and a stream runs its kernels one after another, in the order they
# were launched: the two independent ``ones`` kernels run one after the other,
# never at the same time. ``torch.profiler`` records the order in which the
# operators reached the backend; the two lines below compare it with the
# program's order.
with profile(activities=[ProfilerActivity.CPU]) as prof:
    z = program()
    compperf.synchronize(device)
names = {"aten::ones", "aten::mul", "aten::add"}
recorded = [event for event in prof.events() if event.name in names]
recorded.sort(key=lambda event: event.time_range.start)
dispatched = [event.name.removeprefix("aten::") for event in recorded]
program_order = [str(node.target).split(".")[1] for node in operations]
print(compperf.tr("dispatched: {ops}", ops=", ".join(dispatched)))
print(compperf.tr("program order: {ops}", ops=", ".join(program_order)))

# %%
# Python waits for the queue only where it needs a value (``z.tolist()``,
# ``print(z)``) or asks for it (``torch.cuda.synchronize()``); until then, on
# a GPU, it runs ahead of the device.
print("z =", z.tolist())

# %%
# Summary
# -------
# * An FX graph recorded with ``make_fx`` shows which operations of a program
#   depend on each other; operations on the same level are independent.
# * Eager PyTorch does not schedule from that graph: each call reaches the
#   backend in program order, and a CUDA stream runs its kernels in the order
#   they were queued. The next lesson,
#   :doc:`plot_backend_who_schedules`, shows who does schedule from a graph.
#
# Exercises
# ---------
# 1. Which operations of ``z = x * y + 2`` are independent, and in which order
#    does a CUDA stream run them?
# 2. Draw the dependencies of ``c = (x + 1) @ (y * 2)``. Which operations are
#    independent, and what are their levels?
#
# Answers
# -------
# 1. The two ``ones`` calls. A stream runs them in the order Python launched
#    them: first ``x``'s, then ``y``'s.
# 2. The code below records the program with ``make_fx`` and reuses the
#    functions above.


def second_program():
    x = torch.ones((2, 2), device=device)
    y = torch.ones((2, 2), device=device)
    return (x + 1) @ (y * 2)


print_dependencies(make_fx(second_program)())
