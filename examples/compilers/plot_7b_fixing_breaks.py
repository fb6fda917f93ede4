"""
Fixing graph breaks
===================

The three graph breaks of the previous lesson each have a fix that keeps the
work in one graph. You check that every fix returns the same values as one
graph, then measure what one break costs on this machine.

To run this example yourself, install PyTorch and matplotlib (``pip install
torch matplotlib``), and compperf as :ref:`run-yourself` explains.
``torch.compile`` on a CPU also needs a C++ compiler (``g++`` or
``clang++``), and on an NVIDIA GPU a C compiler (``gcc`` or ``clang``) for
Triton's first kernel; without one the page says so and measures with a
backend that generates no code.
"""

# %%
# Why it matters
# --------------
# :doc:`/auto_examples/compilers/plot_7_graph_breaks` found three usual causes
# of a graph break (a ``print``, an ``.item()`` and a call into C code) with
# ``torch._dynamo.explain``. A break leaves the result right, so the only
# reason to fix it is speed: this page fixes all three, then times one break
# against its fix with Inductor. The first line says which device and
# software produced the outputs.

import json
import warnings

import matplotlib.pyplot as plt
import torch

import compperf

BUDGET = 1.5  # seconds of interleaved rounds for the three versions
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET = 0.2
# sphinx_gallery_end_ignore

# Importing Inductor, torch.compile's default compiler, runs a deprecated
# torch.jit decorator inside torch 2.13. The warning is not about this page's
# code, so it is silenced once, here.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", r"`torch\.jit\.", DeprecationWarning)
    import torch._inductor.compile_fx

device = compperf.try_gpu()
print(compperf.environment(device))
# Full float32 matrix products, in eager mode and compiled code alike; TF32
# and Inductor's warning about it: see page 2 of this chapter.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")

# %%
# The three breaks
# ----------------
# The functions of the previous lesson, unchanged: each computes a ``tanh``,
# runs one line that Dynamo cannot put in a graph, then scales the result.


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

# %%
# The fixes
# ---------
# Each fix keeps the work in tensors or moves the Python out of the compiled
# function:
#
# * drop the ``print`` (or print outside the compiled function);
# * keep the maximum as a zero-dimensional tensor instead of calling
#   ``.item()``: the division stays in the graph;
# * read the settings once, before calling the compiled function, and pass the
#   number in.
#
# ``torch._dynamo.explain`` counts each fix's graphs and breaks, and each fix
# prints that count. The cell goes on only if every check passes:
# ``torch.testing.assert_close`` raises if a fix returns other values than
# its original, and ``torch.compile(fn, fullgraph=True)`` raises at a break
# that is left. The check of the ``print`` fix calls the original, which
# prints ``tanh done`` once.


def fixed_print(x):
    return torch.tanh(x) * 2 + 1


def fixed_item(x):
    y = torch.tanh(x)
    return y / y.abs().max() * 2 + 1


def fixed_json(x, scale):
    return torch.tanh(x) * scale * 2 + 1


# Read once, outside the compiled function.
scale = json.loads(json.dumps(SETTINGS))["scale"]
fixes = {
    "print": (fixed_print, (x,)),
    ".item()": (fixed_item, (x,)),
    "json.dumps": (fixed_json, (x, scale)),
}
fixed_graphs = {}
for name, (fn, args) in fixes.items():
    torch.testing.assert_close(fn(*args), causes[name](x))
    report = torch._dynamo.explain(fn)(*args)
    torch.compiler.reset()  # fullgraph=True below raises if any break is left
    torch.compile(fn, fullgraph=True, backend="eager")(*args)
    fixed_graphs[name] = g = report.graph_count
    b = report.graph_break_count
    print(compperf.tr("fixed {f}: graphs: {g}, breaks: {b}", f=name, g=g, b=b))

# %%
# What one break costs
# --------------------
# Now the real compiler: ``torch.compile`` with its default backend, Inductor,
# on the ``.item()`` function and on its fix, timed against eager mode on the
# same 1000 numbers. The first call of each compiled version compiles it; the
# table times the calls after that. A first call that finds these graphs in
# Inductor's caches on disk (on a machine that ran this page before) is a
# warm compile, shorter than a cold one on a fresh machine. Everything in this
# cell runs on one thread: one thread is less disturbed by other programs
# running on the machine (whether a second one would speed up work this small
# is not measured here; the parallelism chapter measures threads). The thread
# count is set before compiling because it is part of what a compiled graph
# assumes: changing it later would make Dynamo compile again
# (:doc:`/auto_examples/compilers/plot_8_guards_recompilation` shows these
# assumptions, the guards). If this machine cannot compile (Inductor needs a
# C++ compiler on a CPU, and Triton a C compiler on a GPU), the cell says so
# and uses the ``aot_eager`` backend, which captures the same graphs without
# generating code, so the break is still there to measure.

threads_before = torch.get_num_threads()
torch.set_num_threads(1)
backend = "inductor"
compile_seconds = {}
versions = {}
for name, fn in (
    (compperf.tr("with a break (.item())"), with_item),
    (compperf.tr("fixed, one graph"), fixed_item),
):
    torch.compiler.reset()
    timer = compperf.Timer()
    try:
        compiled = torch.compile(fn, backend=backend)
        torch.testing.assert_close(compiled(x), fn(x))
    except (
        torch._dynamo.exc.BackendCompilerFailed
    ) as error:  # for example, when no C or C++ compiler is installed
        reason = f"{type(error).__name__}: {str(error).splitlines()[0]}"
        print(compperf.tr("Inductor cannot compile here: {e}", e=reason))
        backend = "aot_eager"
        timer = compperf.Timer()
        compiled = torch.compile(fn, backend=backend)
        torch.testing.assert_close(compiled(x), fn(x))
    compperf.synchronize(device)
    compile_seconds[name] = timer.stop()
    versions[name] = compiled
print(compperf.tr("backend: {b}", b=backend))
for name, seconds in compile_seconds.items():
    print(compperf.tr("first call, {v}: {t:time}", v=name, t=seconds))

eager_label = compperf.tr("eager")
comparison = compperf.interleave(
    {
        name: lambda run=run: run(x)
        for name, run in {eager_label: with_item, **versions}.items()
    },
    device=device,
    budget=BUDGET,
    num_threads=1,
)
torch.set_num_threads(threads_before)
timings = list(comparison.measurements.values())
print(compperf.compare(timings))
print(comparison.disturbance)

# %%
# The three versions ran in interleaved rounds (``compperf.interleave``): each
# round times each of them for a few short blocks, so that a stall of the
# machine slows one round rather than one version. The cell reads the rounds
# with ``Comparison.faster``, which answers from the 95 % interval of the
# ratio of two versions' times, against the threshold 1/1.05: "yes" when the
# whole interval lies below it (faster by more than 5 %), "no" when it lies
# at or above it, "unclear" when it reaches across.
#
# The first line is the difference of the medians, the version with the break
# minus its fix. It is what the break costs per call only where the first
# verdict, the fix against the version with the break, says yes; where it
# says no, the fix is not faster here, and where it says unclear, this run
# cannot tell the two apart. The second verdict compares the fix with eager
# mode in the same way: yes, the fixed compiled version is faster than eager
# mode; no, it is not; unclear, the two cannot be told apart here.

broken_label, fixed_label = versions
broken, fixed = (comparison.measurements[v].median for v in versions)
print(compperf.tr("break minus fix, medians: {t:time}", t=broken - fixed))
break_costs = comparison.faster(fixed_label, broken_label)
print(break_costs)
against_eager = comparison.faster(fixed_label, eager_label)
print(against_eager)

# %%
# The figure shows the three versions' times: each bar is the median of the
# timed blocks, its error bar runs from the first to the third quartile.

fig, ax = plt.subplots(figsize=(7, 2.6), layout="constrained")
ax.barh(
    list(comparison.measurements),
    [m.median * 1e6 for m in timings],
    xerr=[
        [(m.median - m.quartiles[0]) * 1e6 for m in timings],
        [(m.quartiles[1] - m.median) * 1e6 for m in timings],
    ],
    capsize=4,
)
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time per call (µs), median and quartiles"))
ax.set_title(compperf.tr("The three versions on {device}", device=device))
plt.show()

# %%
# Where the time goes: the version with a break runs a graph up to the
# maximum, copies one number out of a tensor, goes through Python, checks the
# guards of a second graph and runs it. The fix runs one graph, which Inductor
# can fuse into fewer loops over the data. On a GPU the ``.item()`` also
# waits for the device to finish (a synchronization, see the chapter on
# asynchronous computation), which usually makes such a break cost more there.
#
# Summary
# -------
# * Fixes keep the work in tensors or move the Python outside the compiled
#   function; ``torch.testing.assert_close`` shows that a fix computes the
#   same values, ``fullgraph=True`` that it leaves one graph.
# * Interleaved rounds time the break against its fix, and the verdicts say
#   whether the difference is larger than the noise of this machine. The
#   measured cost of the break on this machine is printed above.
#
# Exercises
# ---------
# 1. Call the compiled ``with_item`` with ``2 * x`` and ``3 * x``. The break
#    turns the maximum into a Python number that the second graph uses: does
#    a new value make Dynamo compile again? And ``fixed_item``? Count with
#    ``torch._dynamo.utils.counters``.
# 2. A fix that keeps the ``print``: move it into a helper decorated with
#    ``torch.compiler.disable``, which tells Dynamo not to trace it. Does the
#    break go away? Explain the new function.


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. For with_item, yes: the first new value makes Dynamo compile the second
#    graph again, with the number as an input this time (automatic dynamic).
#    The fix keeps the maximum in a tensor, and its one graph serves every
#    value.
from torch._dynamo.utils import counters

for fn in (with_item, fixed_item):
    torch.compiler.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="eager")
    for factor in (1, 2, 3):
        compiled(factor * x)
    n = counters["stats"]["unique_graphs"]
    print(compperf.tr("{f}, graphs for 3 factors: {n}", f=fn.__name__, n=n))


# 2. No: Dynamo does not trace the disabled helper, and it runs it in Python
#    between two graphs, as it ran the print itself.
@torch.compiler.disable
def log(message):
    print(message)


def with_disabled_print(x):
    y = torch.tanh(x)
    log("tanh done")
    return y * 2 + 1


report = torch._dynamo.explain(with_disabled_print)(x)
g, b = report.graph_count, report.graph_break_count
name = "torch.compiler.disable"
print(compperf.tr("{f}: graphs: {g}, breaks: {b}", f=name, g=g, b=b))
print(report.break_reasons[0].reason.splitlines()[0])
