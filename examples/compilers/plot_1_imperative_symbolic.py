"""
Imperative and symbolic programs
================================

You run the same small function three ways: line by line in Python, as source
text that Python compiles before it runs, and as a graph that PyTorch captures.
You see what a compiler can do once it holds the whole graph: fold constants.
"""

# %%
# The machine
# -----------
# Every number on this page comes from the machine that built it. The first
# line below names the device, the CPU and the PyTorch version.

import io
import operator
import os

import graphviz
import matplotlib.pyplot as plt
import torch
import torch.fx

import compperf

FAST = os.environ.get("COMPPERF_FAST") == "1"  # set by the tests only
MIN_RUN_TIME = 0.02 if FAST else 0.2  # seconds of timed calls per measurement

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Imperative: Python runs each line as it reaches it
# --------------------------------------------------
# ``fancy_func`` adds four numbers in three steps. In imperative mode Python
# executes ``add(a, b)`` first, keeps the result in ``e``, then moves on. Look
# at the output: the answer, and nothing that Python could have planned ahead.


def add(a, b):
    return a + b


def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g


print("imperative result:", fancy_func(1, 2, 3, 4))

# %%
# Symbolic: write the whole program first, then compile and run it
# -----------------------------------------------------------------
# A symbolic program is described in full before anything runs. Here the
# description is plain source text. :func:`compile` turns the whole text into
# bytecode in one go, and :func:`exec` runs it. The output shows the program
# you built and the same answer as before.


def build_program():
    """Return the source text of a program that defines and calls fancy_func."""
    return """
def add(a, b):
    return a + b

def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g

result = fancy_func(1, 2, 3, 4)
"""


source = build_program()
print(source)
bytecode = compile(source, "<fancy_func program>", "exec")
namespace = {}
exec(bytecode, namespace)  # noqa: S102 -- the point of this cell: run a program built as text
print("symbolic result:", namespace["result"])

# %%
# PyTorch captures the same function as a graph
# ---------------------------------------------
# You rarely write programs as strings. A tracer records what a function does
# instead. ``torch.fx.symbolic_trace`` calls ``fancy_func`` with placeholder
# values and writes down every operation as a node of a graph. Below you see
# the graph's nodes and the Python code that FX generates from them. The three
# calls to ``add`` are gone: the tracer looked through them and kept the three
# additions.

traced = torch.fx.symbolic_trace(fancy_func)
print(traced.graph)
print(traced.code)

# %%
# What a compiler does with fixed inputs: constant folding
# --------------------------------------------------------
# When some inputs are known in advance, a compiler may compute everything that
# depends only on them once, at compile time. ``concrete_args`` tells the tracer
# which inputs are fixed. With ``a=1`` and ``b=2`` fixed, look for ``3 + add``
# in the code below: ``e = a + b`` has become the constant 3. With all four
# inputs fixed, the whole function folds to one value. The graph still checks
# its assumptions: each fixed input gets an assertion that fails if you call it
# with another value.

half_fixed = torch.fx.symbolic_trace(
    fancy_func, concrete_args={"a": 1, "b": 2}
)
all_fixed = torch.fx.symbolic_trace(
    fancy_func, concrete_args={"a": 1, "b": 2, "c": 3, "d": 4}
)
print(half_fixed.code)
print(all_fixed.code)

results = {
    "traced": traced(1, 2, 3, 4),
    "a, b fixed": half_fixed(1, 2, 3, 4),
    "all fixed": all_fixed(1, 2, 3, 4),
}
for name, value in results.items():
    assert value == fancy_func(1, 2, 3, 4), f"{name} gives {value}"
print("all graphs compute the imperative result:", results)

# %%
# The graphs as pictures
# ----------------------
# Boxes are the function's inputs, ellipses are operations, grey notes are
# constants, and edges show which value feeds which operation. Compare the
# three pictures: the left one has three additions, the middle one two, the
# right one none, only the checks on the inputs and the value that is returned.

_CONSTANT_STYLE = {"shape": "note", "style": "filled", "fillcolor": "#eeeeee"}


def _label(node):
    if node.op == "placeholder":
        return node.name.removesuffix("_1"), "box"
    if node.op == "output":
        return "return", "doubleoctagon"
    names = {operator.add: "+", operator.eq: "==", torch._assert: "assert"}
    return names.get(node.target, str(node.target)), "ellipse"


def to_digraph(graph_module, title):
    """Draw an FX graph: one graphviz node per FX node, constants as notes."""
    dot = graphviz.Digraph(
        graph_attr={"label": title, "labelloc": "t", "fontsize": "20"}
    )
    for node in graph_module.graph.nodes:
        label, shape = _label(node)
        dot.node(node.name, label, shape=shape)
        for position, argument in enumerate(
            node.args
        ):  # output's args: (returned value,)
            if isinstance(argument, torch.fx.Node):
                dot.edge(argument.name, node.name)
            elif isinstance(
                argument, (int, float)
            ):  # a folded or literal constant
                constant = f"{node.name}_constant_{position}"
                dot.node(constant, str(argument), **_CONSTANT_STYLE)
                dot.edge(constant, node.name)
    return dot


graphs = {
    "traced": traced,
    "a=1, b=2 fixed": half_fixed,
    "all inputs fixed": all_fixed,
}
try:
    pictures = [
        plt.imread(
            io.BytesIO(to_digraph(graph_module, title).pipe(format="png"))
        )
        for title, graph_module in graphs.items()
    ]
except graphviz.ExecutableNotFound as error:
    print(f"graphviz cannot draw here ({error}); the graphs as text:")
    for title, graph_module in graphs.items():
        print(title, graph_module.graph, sep="\n")
else:
    widths = [picture.shape[1] for picture in pictures]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4), width_ratios=widths)
    for ax, picture in zip(axes, pictures, strict=True):
        ax.imshow(picture)
        ax.set_axis_off()
    fig.tight_layout()
    plt.show()

# %%
# A graph is not faster by itself
# -------------------------------
# Tracing changes who runs the program, not how much work it does: FX turns the
# graph back into Python code, so the traced function still runs three
# additions through the interpreter. The table times both on small tensors.
# The ``vs first`` column shows how close the traced version comes to the
# imperative one on this machine; the speed comes later, when a compiler such
# as ``torch.compile`` rewrites the graph.

a, b, c, d = (torch.randn(1000, device=device) for _ in range(4))
timings = [
    compperf.measure(
        fancy_func,
        a,
        b,
        c,
        d,
        device=device,
        description="imperative",
        min_run_time=MIN_RUN_TIME,
    ),
    compperf.measure(
        traced,
        a,
        b,
        c,
        d,
        device=device,
        description="FX GraphModule",
        min_run_time=MIN_RUN_TIME,
    ),
]
print(
    compperf.compare(
        timings, title="fancy_func on four tensors of 1000 floats"
    )
)
