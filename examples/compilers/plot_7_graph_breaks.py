"""
Graph breaks
============

``torch.compile`` never refuses a Python function: where it cannot follow the
code, it ends the graph, lets Python run that part, and starts a new graph.
You find these graph breaks, see their usual causes, fix them, and measure what
one break costs on this machine.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. ``torch.compile`` on a CPU also needs a C++
compiler (``g++`` or ``clang++``), and on an NVIDIA GPU a C compiler (``gcc``
or ``clang``) for Triton's first kernel; without one the page says so and
measures with a backend that generates no code.
"""

# %%
# Why it matters
# --------------
# A graph break is silent: the compiled function still returns the right
# result, only more slowly. Each break ends a graph, so the compiler sees
# smaller pieces and fuses less, and every call goes back to Python and
# through another set of guards. A model that you think is one graph can be a
# dozen. The first line says which device and software produced the outputs.

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
# Three usual causes
# ------------------
# Each function below computes a ``tanh``, then runs one line that Dynamo
# cannot put in a graph, then scales the result:
#
# * ``print``: output is a side effect that must happen in order, in Python;
# * ``.item()``: turns a tensor into a Python number, which the rest of the
#   function then uses as a constant;
# * unsupported Python: ``json.dumps`` is Python code, but it hands the work
#   to the C encoder of the ``_json`` extension module, and Dynamo breaks the
#   graph where it reaches that C function, which it cannot look inside.
#
# In eager mode all three return the same values: each line below names the
# cause and the first three values its function returns.


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
for name, fn in causes.items():
    print(name, fn(x)[:3])

# %%
# Find them with ``torch._dynamo.explain``
# ----------------------------------------
# ``torch._dynamo.explain(fn)(*args)`` runs ``fn`` once under Dynamo and
# reports every graph and every break, with the reason Dynamo gives. It resets
# Dynamo before and after it runs: every graph compiled so far in the process
# is forgotten (on CUDA, with the CUDA graphs recorded for them), and the next
# call of a compiled function compiles again. Run it before you compile and
# time, not in between; ``run_and_get_code`` (page 2) resets Dynamo before
# its call too.
# Each cause prints a line with its count of graphs and of breaks, then the
# first line of each reason, as Dynamo gives it. The ``print`` also shows its output once, while
# Dynamo runs it.

explanations = {}
for name, fn in causes.items():
    report = torch._dynamo.explain(fn)(x)
    reasons = [r.reason.splitlines()[0] for r in report.break_reasons]
    # A break before the first tensor operation leaves no graph behind, so
    # graph_count - 1 can miss it; the reasons list counts every break.
    g, b = report.graph_count, len(reasons)
    explanations[name] = {"graphs": g, "breaks": b, "reasons": reasons}
    print(compperf.tr("{f}: graphs: {g}, breaks: {b}", f=name, g=g, b=b))
    print(*reasons, sep="\n")  # as Dynamo words them

# %%
# ``fullgraph=True`` turns a break into an error
# ----------------------------------------------
# When you need one graph, say so: ``torch.compile(fn, fullgraph=True)``
# raises at the first break instead of splitting, and the error says why and
# where. ``backend="eager"`` skips code generation, since only Dynamo's
# capture matters here. Look at the ``.item()`` line: with ``fullgraph=True``
# Dynamo turns on ``capture_scalar_outputs``, which keeps the number inside the
# graph as a symbol, so that break disappears instead of becoming an error.
# Each line shows the error's type and first line, or a dash where the
# function compiled as one graph.

fullgraph_errors = {}
for name, fn in causes.items():
    torch.compiler.reset()
    try:
        torch.compile(fn, fullgraph=True, backend="eager")(x)
    except torch._dynamo.exc.Unsupported as error:
        found = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    else:
        found = "-"
    fullgraph_errors[name] = found
    print(compperf.tr("fullgraph=True, {f}: {e}", f=name, e=found))

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
# The same checks as above run on each fix and print its count of graphs and
# of breaks. The cell goes on only if every check passes:
# ``torch.testing.assert_close`` raises if a fix returns other values than
# its original, and ``fullgraph=True`` raises at a break that is left.


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
# warm compile, shorter than a cold one on a fresh machine. Everything in this cell runs on one
# thread: one thread is less disturbed by other programs running on the machine
# (whether a second one would speed up work this small is not measured here;
# the parallelism chapter measures threads). The thread count is
# set before compiling because it is part of what a compiled graph assumes:
# changing it later would make Dynamo compile again (the next example shows
# these assumptions, the guards). If this machine cannot compile (Inductor
# needs a C++ compiler on a CPU, and Triton a C compiler on a GPU), the cell
# says so and uses the
# ``aot_eager`` backend, which captures the same graphs without generating
# code, so the break is still there to measure.

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
# * A graph break splits a compiled function into several graphs with Python
#   in between; results stay right, so breaks go unnoticed.
# * ``torch._dynamo.explain`` counts graphs and breaks and gives each reason;
#   ``fullgraph=True`` turns the first break into an error.
# * Usual causes: ``print`` and other side effects, ``.item()`` and other
#   conversions to Python values, and calls Dynamo cannot trace, such as C
#   functions from the standard library.
# * Fixes keep the work in tensors or move the Python outside the compiled
#   function. The measured cost of the break on this machine is printed above.
#
# Exercises
# ---------
# 1. Set ``torch._dynamo.config.capture_scalar_outputs = True`` and explain
#    ``with_item`` again. How many graphs are there now?
# 2. Call the compiled ``with_item`` with ``2 * x``. The break turns the maximum
#    into a Python number that the second graph uses: does the new value make
#    Dynamo compile again? Count with ``torch._dynamo.utils.counters``.
# 3. Switch on the graph-break log with
#    ``torch._logging.set_logs(graph_breaks=True)`` (the API behind
#    ``TORCH_LOGS="graph_breaks"``) and call a freshly compiled ``with_item``.
#    Which line of your code does the log point at?


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. The .item() becomes part of the graph: one graph, no break (as
#    with fullgraph=True above).
with torch._dynamo.config.patch(capture_scalar_outputs=True):
    graphs = torch._dynamo.explain(with_item)(x).graph_count
print(compperf.tr("graphs with capture_scalar_outputs=True: {n}", n=graphs))

# 2. Yes: the first new value makes Dynamo compile the second graph again,
#    with the number as an input this time (automatic dynamic).
from torch._dynamo.utils import counters

torch.compiler.reset()
counters.clear()
compiled = torch.compile(with_item, backend="eager")
for factor in (1, 2, 3):
    compiled(factor * x)
graphs = counters["stats"]["unique_graphs"]
print(compperf.tr("graphs for three factors: {n}", n=graphs))

# 3. The log names the reason and points at `scale = y.abs().max().item()`.
#    It goes to standard error, one long record per break; the cell keeps it
#    and prints the two lines that answer: the reason, then the file, line
#    number and code the log points at.
import contextlib
import io
import linecache
import os

log = io.StringIO()
torch.compiler.reset()
# torch's log handler writes into log
with contextlib.redirect_stderr(log):
    torch._logging.set_logs(graph_breaks=True)
    torch.compile(with_item, backend="eager")(x)
torch._logging.set_logs()  # off again, writing to the real standard error
record = [
    line.partition("[__graph_breaks] ")[2]
    for line in log.getvalue().splitlines()
]
where = next(
    line for line in record if line.startswith("Graph break in user code at")
)
file, line_number = where.rsplit(" ", 1)[1].rsplit(":", 1)
reason = next(line for line in record[record.index(where) + 2 :] if line)
code = linecache.getline(file, int(line_number)).strip()
print(compperf.tr("graph-break log, reason: {r}", r=reason))
print(f"{os.path.basename(file)}:{line_number}: {code}")
