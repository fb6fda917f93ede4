"""
The frontend, the backend and the dependency graph
==================================================

You record the operations that the program ``z = x * y + 2`` hands to PyTorch's
backend, draw them as a graph and find out which of them depend on each other.
That graph is what lets the backend run work while Python moves on.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the outputs on this page.
import io

import graphviz
import matplotlib.image
import matplotlib.pyplot as plt
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The program
# -----------
# Your Python code is the frontend: it decides what to compute. The backend
# (PyTorch's C++ operators and, on a GPU, the device) does the computing. The
# program below creates two tensors and combines them. ``make_fx`` runs it once
# and records every operator call that reaches the backend, as an FX graph. The
# code printed below is generated from that graph, not written by hand.


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
# Each operation depends on the operations that produce its inputs, and on
# theirs in turn. Two operations are independent when neither one needs the
# other's result: the backend may run them in any order, or at the same time.
# The level of an operation is the length of the longest chain of operations
# it waits for; operations on the same level never depend on each other.
operations = [
    node for node in graph_module.graph.nodes if node.op == "call_function"
]
inputs = {
    node: [arg for arg in node.all_input_nodes if arg in operations]
    for node in operations
}

ancestors = {}
level = {}
for node in operations:  # FX keeps nodes in an order where inputs come first
    ancestors[node] = set().union(
        *(ancestors[arg] | {arg} for arg in inputs[node])
    )
    level[node] = max((level[arg] + 1 for arg in inputs[node]), default=0)

print(f"{'operation':<10} {'operator':<20} {'needs':<16} level")
for node in operations:
    needs = ", ".join(arg.name for arg in inputs[node]) or "-"
    print(f"{node.name:<10} {node.target!s:<20} {needs:<16} {level[node]}")

independent_pairs = [
    (first.name, second.name)
    for i, first in enumerate(operations)
    for second in operations[i + 1 :]
    if first not in ancestors[second] and second not in ancestors[first]
]
print("independent pairs:", independent_pairs or "none")

# %%
# The picture
# -----------
# Graphviz draws the same graph, one row per level, with the independent
# operations side by side on the top row. An arrow points from an operation to
# the one that uses its result. Drawing needs the ``dot`` program from the
# Graphviz system package; without it this cell says so, and the table above
# remains the graph's text form.
drawing = graphviz.Digraph(graph_attr={"rankdir": "TB", "dpi": "150"})
drawing.attr("node", shape="box", style="rounded,filled", fontname="Helvetica")
independent = {name for pair in independent_pairs for name in pair}
for node in operations:
    colour = "#cfe8ff" if node.name in independent else "#eeeeee"
    drawing.node(node.name, f"{node.name}\n{node.target}", fillcolor=colour)
    for arg in inputs[node]:
        drawing.edge(arg.name, node.name)
drawing.node("z", "z (returned to Python)", shape="plaintext", style="")
drawing.edge(operations[-1].name, "z")

try:
    png = drawing.pipe(format="png")
except graphviz.ExecutableNotFound:
    png = None
    print(
        "Graphviz's `dot` program is not installed here, so this build has no picture."
    )
    print("Its source, in the DOT language:")
    print(drawing.source)

if png is not None:
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    height, width = image.shape[:2]
    fig, ax = plt.subplots(
        figsize=(width / 150, height / 150 + 0.4)
    )  # the drawing's own size
    ax.imshow(image)
    ax.set_axis_off()
    ax.set_title("z = x * y + 2 as the backend sees it")
    fig.tight_layout()
    plt.show()

# %%
# The two ``ones`` calls are independent: either can run first. The product
# needs both, and the addition needs the product. On a GPU, the frontend queues
# all four kernels and returns ``z`` at once; the device runs them in the order
# of the queue, which respects every arrow in the graph. Python waits only when
# it reads the values of ``z``.
