"""
Imperative and symbolic programs
================================

You run the same small function three ways: line by line in Python, as source
text that Python compiles before it runs, and as a graph that PyTorch captures.
You see what a compiler can do once it holds the whole graph: fold constants.

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
import torch.utils.benchmark

import compperf

try:  # Optional: it draws the graphs, and without it the page prints them as text.
    import graphviz
except ImportError:
    graphviz = None

MIN_RUN_TIME = 0.2  # Seconds of timed calls per measurement.
BUDGET = 1.0  # Seconds for the interleaved comparison.
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    MIN_RUN_TIME, BUDGET = 0.02, 0.2
# sphinx_gallery_end_ignore

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


print(compperf.tr("imperative result: {r}", r=fancy_func(1, 2, 3, 4)))

# %%
# Symbolic: write the whole program first, then compile and run it
# -----------------------------------------------------------------
# A symbolic program is described in full before anything runs. Here the
# description is plain source text. ``compile`` turns the whole text into
# bytecode in one go, and ``exec`` runs it. The output shows the program
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
print(compperf.tr("symbolic result: {r}", r=namespace["result"]))

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
print(compperf.tr("every graph computes: {r}", r=[*results.values()]))

# %%
# The graphs as pictures
# ----------------------
# Boxes are the function's inputs, ellipses are operations, grey notes are
# constants, and edges show which value feeds which operation. Compare the
# three pictures: the first one has three additions, the second one two, the
# third one none, only the checks on the inputs and the value that is returned.
# Drawing needs the ``graphviz`` package and its ``dot`` program; where one is
# missing, the cell says so and prints the graphs as text instead.

_CONSTANT_STYLE = {"shape": "note", "style": "filled", "fillcolor": "#eeeeee"}


def _label(node):
    if node.op == "placeholder":
        return node.name.removesuffix("_1"), "box"
    if node.op == "output":
        return "return", "doubleoctagon"
    names = {operator.add: "+", operator.eq: "==", torch._assert: "assert"}
    return names.get(node.target, str(node.target)), "ellipse"


def to_digraph(graph_module):
    """Draw an FX graph: one graphviz node per FX node, constants as notes."""
    dot = graphviz.Digraph()
    for node in graph_module.graph.nodes:
        label, shape = _label(node)
        dot.node(node.name, label, shape=shape)
        # The output node's only argument is the value it returns.
        for position, argument in enumerate(node.args):
            if isinstance(argument, torch.fx.Node):
                dot.edge(argument.name, node.name)
            elif isinstance(argument, (int, float)):
                # A constant: a literal in the code, or a value folded by the tracer.
                constant = f"{node.name}_constant_{position}"
                dot.node(constant, str(argument), **_CONSTANT_STYLE)
                dot.edge(constant, node.name)
    return dot


# Each graph under its title, which the figure shows above its picture.
graphs = {
    compperf.tr("traced"): traced,
    compperf.tr("a=1, b=2 fixed"): half_fixed,
    compperf.tr("all inputs fixed"): all_fixed,
}


def draw(graphs):
    """PNG images of the graphs, or None with a note when graphviz cannot draw."""
    if graphviz is None:
        print(compperf.tr("graphviz cannot draw here (no graphviz package)."))
        return None
    try:
        return [
            plt.imread(io.BytesIO(to_digraph(gm).pipe(format="png")))
            for gm in graphs.values()
        ]
    except graphviz.ExecutableNotFound:
        print(compperf.tr("graphviz cannot draw here (no dot program)."))
        return None


pictures = draw(graphs)
if pictures is None:
    print(compperf.tr("The graphs as text:"))
    for title, graph_module in graphs.items():
        print(title, graph_module.graph, sep="\n")
else:
    widths = [picture.shape[1] for picture in pictures]
    # Two graphs side by side, the widest one below them.
    fig, axes = plt.subplot_mosaic(
        [[0, 1], [2, 2]], figsize=(7, 5.5), width_ratios=widths[:2]
    )
    for i, (picture, title) in enumerate(zip(pictures, graphs, strict=True)):
        axes[i].imshow(picture)
        axes[i].set_title(title)
        axes[i].set_axis_off()
    fig.tight_layout()
    plt.show()

# %%
# A graph is not faster by itself
# -------------------------------
# Tracing changes who runs the program, not how much work it does: FX turns the
# graph back into Python code, so the traced function still runs three
# additions through the interpreter, and on a GPU it still launches three
# kernels. You time both on small tensors.
#
# PyTorch's own tool for this is ``torch.utils.benchmark.Timer``: it runs the
# statement in blocks long enough to hide the clock's overhead, synchronizes
# the current accelerator (a GPU) before each clock read, and reports the
# median time per call and the spread around it (the IQR). Here it times the
# imperative version.

a, b, c, d = (torch.randn(1000, device=device) for _ in range(4))
timer = torch.utils.benchmark.Timer(
    stmt="fancy_func(a, b, c, d)",
    globals={"fancy_func": fancy_func, "a": a, "b": b, "c": c, "d": d},
    num_threads=torch.get_num_threads(),
)
measured = timer.blocked_autorange(min_run_time=MIN_RUN_TIME)
median, iqr = measured.median, measured.iqr
print(compperf.tr("Timer: median {m:time}, IQR {i:time}", m=median, i=iqr))

# %%
# To compare the two versions, ``compperf.interleave`` runs them in rounds,
# one after the other in each round, synchronizing the device you name (CPU,
# CUDA or Apple MPS) at every clock read: a stall of the machine then slows
# one round, not one version. ``compperf.compare`` lays the two results side
# by side, each row named by the call it timed: ``fancy_func(a, b, c, d)`` is
# the imperative version, ``traced(a, b, c, d)`` the FX GraphModule. The
# ``vs first`` column shows how close the traced version comes to the
# imperative one on this machine. The imperative row and the Timer line above
# time the same call; where they differ, trust the rounds, which ran
# alternately with the traced version under the same conditions. The line
# under the table says whether the machine was quiet or disturbed meanwhile.

imperative, graph = "fancy_func(a, b, c, d)", "traced(a, b, c, d)"
comparison = compperf.interleave(
    {
        imperative: lambda: fancy_func(a, b, c, d),
        graph: lambda: traced(a, b, c, d),
    },
    device=device,
    budget=BUDGET,
)
timings = list(comparison.measurements.values())
task = compperf.tr("fancy_func on four tensors of {n} floats", n=a.numel())
print(compperf.compare(timings, title=task))
print(comparison.disturbance)

# %%
# ``Comparison.faster`` turns the rounds into a verdict on the claim "faster",
# and its line below gives the measured time ratio (traced over imperative)
# with its 95 % interval. The outcome is *yes* when the whole interval lies
# below 1/1.05: the traced version is faster than the imperative one by more
# than 5 % on this machine. It is *no* when the interval lies at or above that
# threshold: the traced version is not faster, as expected of a graph that
# runs the same three additions. It is *unclear* when the interval reaches
# across the threshold, or when the machine was disturbed while the rounds
# ran (the line then says so): this run cannot tell, and a quieter machine or
# a longer budget may.

verdict = comparison.faster(graph, imperative)
print(verdict)

# %%
# Summary
# -------
# * An imperative program runs line by line; a symbolic one is described in
#   full first, then compiled and run.
# * ``torch.fx.symbolic_trace`` records a Python function as a graph of
#   operations and turns it back into Python code.
# * Knowing inputs in advance lets a compiler fold the work that depends only
#   on them into constants, guarded by checks on those inputs.
# * A graph alone does not make a program faster: the speed comes from what a
#   compiler does with it.
#
# Exercises
# ---------
# 1. Fix only ``c`` and ``d`` with ``concrete_args``. Which addition becomes a
#    constant, and which value does it take?
# 2. Add ``if a.sum() > 0:`` to a function and trace it with
#    ``torch.fx.symbolic_trace``. What happens, and why can a tracer with
#    placeholder values not follow that branch?
# 3. When is a symbolic program faster than the imperative one? Think of what
#    the interpreter does for each operation, and of what a compiler can do
#    when it sees many of them at once.
# 4. Take a model that interests you from an earlier chapter and run it
#    through ``torch.compile``. Does it get faster? The last page of this
#    chapter does it for a small CNN.
#
# Answers
# -------
# **1.** With ``c=3`` and ``d=4`` fixed, ``f = c + d`` folds into the constant
# 7; ``a + b`` stays an addition.

cd_fixed = torch.fx.symbolic_trace(fancy_func, concrete_args={"c": 3, "d": 4})
print(cd_fixed.code)
assert cd_fixed(1, 2, 3, 4) == 10

# %%
# **2.** The tracer calls the function with placeholders that have no values,
# so ``if`` cannot ask whether the sum is positive: tracing stops with an
# error. ``torch.compile`` handles the same function differently: Dynamo ends
# the graph before the branch (a graph break), lets Python decide, and goes on
# with a new graph.


def branchy(a):
    if a.sum() > 0:
        return a * 2
    return a - 1


try:
    torch.fx.symbolic_trace(branchy)
except torch.fx.proxy.TraceError as error:
    print(f"TraceError: {str(error).splitlines()[0]}")

# %%
# **3.** When the fixed cost of running each operation matters: many small
# operations, where the interpreter and one kernel launch per operation take
# longer than the arithmetic, and chains of element-wise operations that a
# compiler fuses into one pass over memory. When one large operation, such as
# a big matrix product, dominates, both forms call the same library and take
# about as long. The page "When compilation pays" measures this.
#
# **4.** The page "Hybridizing another model: a small CNN" at the end of this
# chapter runs LeNet through TorchScript, ``torch.compile`` and
# ``torch.export``.
