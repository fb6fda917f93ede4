"""
Constant folding in a captured graph
====================================

With some inputs known in advance, a compiler computes what depends only on
them once. You fold constants in the graph that ``torch.fx`` captures of
``fancy_func``, see the checks that guard them, and draw the graphs.

To run this example yourself, install PyTorch, then ``pip install matplotlib
graphviz``, and compperf as :ref:`run-yourself` explains. The pictures also
need Graphviz's ``dot`` program (``apt-get install graphviz`` or ``brew
install graphviz``); without it, or without the ``graphviz`` package, the page
prints the graphs as text and goes on.
"""

# %%
# The machine
# -----------
# Every number on this page comes from the machine that built it. The first
# line below names the device, the CPU and the PyTorch version.

import io
import operator

import matplotlib.pyplot as plt
import torch
import torch.fx

import compperf

try:  # Optional: it draws the graphs, and without it the page prints them as text.
    import graphviz
except ImportError:
    graphviz = None

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The function and its graph
# --------------------------
# ``fancy_func`` from :doc:`/auto_examples/compilers/plot_1_imperative_symbolic`
# adds four numbers in three steps, and ``torch.fx.symbolic_trace`` records it
# as a graph. The code FX generates from that graph, below, makes the three
# additions: the starting point for what a compiler can fold.


def add(a, b):
    return a + b


def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g


traced = torch.fx.symbolic_trace(fancy_func)
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

results = [gm(1, 2, 3, 4) for gm in (traced, half_fixed, all_fixed)]
assert results == [fancy_func(1, 2, 3, 4)] * 3
print(compperf.tr("every graph computes: {r}", r=results))

# %%
# The graphs as pictures
# ----------------------
# Boxes are the function's inputs, ellipses are operations, grey notes are
# constants, and edges show which value feeds which operation. Compare the
# three pictures: the first one has three additions, the second one two, the
# third one none, only the checks on the inputs and the value that is returned.
# Drawing needs the ``graphviz`` package and its ``dot`` program; where one is
# missing, the cell says so and prints the graphs as text instead.

SYMBOLS = {operator.add: "+", operator.eq: "==", torch._assert: "assert"}
CONSTANT = {"shape": "note", "style": "filled", "fillcolor": "#eeeeee"}


def to_digraph(graph_module):
    """Draw an FX graph with one graphviz node per FX node and per constant."""
    dot = graphviz.Digraph()
    for node in graph_module.graph.nodes:
        if node.op == "placeholder":
            dot.node(node.name, node.name.removesuffix("_1"), shape="box")
        elif node.op == "output":
            dot.node(node.name, "return", shape="doubleoctagon")
        else:
            dot.node(node.name, SYMBOLS.get(node.target, str(node.target)))
        # The output node's only argument is the value it returns.
        for i, argument in enumerate(node.args):
            if isinstance(argument, torch.fx.Node):
                dot.edge(argument.name, node.name)
            elif isinstance(argument, (int, float)):
                constant = f"{node.name}_constant_{i}"
                dot.node(constant, str(argument), **CONSTANT)
                dot.edge(constant, node.name)
    return dot


# Each graph under its title, which the figure shows above its picture.
graphs = {
    compperf.tr("traced"): traced,
    compperf.tr("a=1, b=2 fixed"): half_fixed,
    compperf.tr("all inputs fixed"): all_fixed,
}
pictures = []
if graphviz is None:
    print(compperf.tr("graphviz cannot draw here (no graphviz package)."))
else:
    try:
        for gm in graphs.values():
            pictures.append(plt.imread(io.BytesIO(to_digraph(gm).pipe("png"))))
    except graphviz.ExecutableNotFound:
        print(compperf.tr("graphviz cannot draw here (no dot program)."))
if len(pictures) < len(graphs):
    print(compperf.tr("The graphs as text:"))
    for title, graph_module in graphs.items():
        print(title, graph_module.graph, sep="\n")
else:
    widths = [picture.shape[1] for picture in pictures[:2]]
    # Two graphs side by side, the widest one below them.
    fig, axes = plt.subplot_mosaic(
        "AB;CC", figsize=(7, 5.5), width_ratios=widths
    )
    for key, picture, title in zip("ABC", pictures, graphs, strict=True):
        axes[key].imshow(picture)
        axes[key].set_title(title)
        axes[key].set_axis_off()
    fig.tight_layout()
    plt.show()

# %%
# Summary
# -------
# * Knowing inputs in advance lets a compiler fold the work that depends only
#   on them into constants, guarded by checks on those inputs.
# * ``concrete_args`` tells ``torch.fx.symbolic_trace`` which inputs are fixed;
#   the graph it records asserts each of them.
# * The pictures show what folding removed: operations, and constants in
#   their place.
#
# Exercises
# ---------
# 1. Fix only ``c`` and ``d`` with ``concrete_args``. Which addition becomes a
#    constant, and which value does it take?
# 2. Call the graph with ``a`` and ``b`` fixed as ``half_fixed(5, 2, 3, 4)``.
#    What happens, and what would it return without its checks?
#
# Answers
# -------
# **1.** With ``c=3`` and ``d=4`` fixed, ``f = c + d`` folds into the constant
# 7; ``a + b`` stays an addition.

cd_fixed = torch.fx.symbolic_trace(fancy_func, concrete_args={"c": 3, "d": 4})
print(cd_fixed.code)
assert cd_fixed(1, 2, 3, 4) == 10

# %%
# **2.** The check on ``a`` fails. The graph was folded for ``a=1``: without
# its checks it would return ``3 + c + d`` for any ``a``, a wrong sum.

try:
    half_fixed(5, 2, 3, 4)
except AssertionError as error:
    print(f"AssertionError: {error}")
