"""
Imperative and symbolic programs
================================

You run the same small function three ways: line by line in Python, as source
text that Python compiles before it runs, and as a graph that PyTorch captures.
Then you time the graph against the function: is a graph faster by itself?

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine
# -----------
# Every number on this page comes from the machine that built it. The first
# line below names the device, the CPU and the PyTorch version.

import matplotlib.pyplot as plt
import torch
import torch.fx
import torch.utils.benchmark
from matplotlib.ticker import MaxNLocator

import compperf

MIN_RUN_TIME = 0.2  # Seconds of timed calls per measurement.
BUDGET = 1.0  # Seconds for each interleaved comparison.
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
# bytecode in one go, and ``exec`` runs it. The output shows the same answer
# as before.

source = """
def add(a, b):
    return a + b

def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g

result = fancy_func(1, 2, 3, 4)
"""
bytecode = compile(source, "<fancy_func program>", "exec")
namespace = {}
exec(bytecode, namespace)  # noqa: S102 -- run the program built as text
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
# The picture shows each round's time ratio, traced over imperative, as a
# dot; the shaded band is the verdict's interval and the dashed line its
# threshold. A band wholly below the line reads *yes*, wholly above it *no*,
# across it *unclear*; on a disturbed machine the verdict is *unclear*
# wherever the band lies.

pairs = zip(
    comparison.rounds[graph], comparison.rounds[imperative], strict=True
)
ratios = [t / i for t, i in pairs]
fig, ax = plt.subplots(figsize=(7, 2.6), layout="constrained")
ax.plot(range(1, len(ratios) + 1), ratios, "o", color="black")
ax.axhspan(verdict.low, verdict.high, color="tab:green", alpha=0.3)
ax.axhline(verdict.threshold, color="grey", linestyle="--")
ax.set(xlabel=compperf.tr("round"), ylabel=compperf.tr("time ratio"))
ax.set_title(compperf.tr("Traced over imperative, round by round"))
ax.xaxis.set_major_locator(MaxNLocator(integer=True))
plt.show()

# %%
# Summary
# -------
# * An imperative program runs line by line; a symbolic one is described in
#   full first, then compiled and run.
# * ``torch.fx.symbolic_trace`` records a Python function as a graph of
#   operations and turns it back into Python code.
# * A graph alone does not make a program faster: the speed comes from what a
#   compiler does with it; :doc:`/auto_examples/compilers/plot_1b_constant_folding`
#   shows one thing a compiler does.
#
# Exercises
# ---------
# 1. Add ``if a.sum() > 0:`` to a function and trace it with
#    ``torch.fx.symbolic_trace``. What happens, and why can a tracer with
#    placeholder values not follow that branch?
# 2. When is a symbolic program faster than the imperative one? Think of what
#    the interpreter does for each operation, and of what a compiler can do
#    when it sees many of them at once.
# 3. Take a model that interests you from an earlier chapter and run it
#    through ``torch.compile``. Does it get faster?
#
# Answers
# -------
# **1.** The tracer calls the function with placeholders that have no values,
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
# **2.** When the fixed cost of running each operation matters: many small
# operations, where the interpreter and one kernel launch per operation take
# longer than the arithmetic, and chains of element-wise operations that a
# compiler fuses into one pass over memory. When one large operation, such as
# a big matrix product, dominates, both forms call the same library and take
# about as long; :doc:`/auto_examples/compilers/plot_3_when_compilation_pays`
# measures this. The rounds below repeat the comparison on tensors a thousand
# times larger, where each addition takes longer than the Python around it:
# set the ratio in the line below beside the verdict's interval above.

large = [torch.randn(1_000_000, device=device) for _ in range(4)]
larger = compperf.interleave(
    {imperative: lambda: fancy_func(*large), graph: lambda: traced(*large)},
    device=device,
    budget=BUDGET,
)
ratio = larger.ratio(graph, imperative)
size = large[0].numel()
print(compperf.tr("traced / imperative, {n} floats: {r}", n=size, r=ratio))

# %%
# **3.** :doc:`/auto_examples/compilers/plot_5_cnn_exercise` and
# :doc:`/auto_examples/compilers/plot_5b_cnn_speed` run LeNet, a small CNN,
# through TorchScript, ``torch.compile`` and ``torch.export`` and time every
# version against eager mode.
