"""
When compilation pays
=====================

You time the same multilayer perceptron in eager mode, as TorchScript and with
``torch.compile`` over a range of batch sizes, and find where compiling starts to
win on this machine, if it does.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. ``torch.compile``
on a CPU also needs a C++ compiler (``g++`` or ``clang++``), and on an NVIDIA
GPU a C compiler (``gcc`` or ``clang``) for Triton's first kernel; without
one the page says so and compares the other versions.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.

import time
import warnings

import matplotlib.pyplot as plt
import torch
from matplotlib import ticker
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import compperf

BUDGET = 1.0  # Seconds of interleaved rounds per batch size.
BATCH_SIZES = [1, 8, 64, 512, 4096]
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET = 0.1
    BATCH_SIZES = [1, 16, 256]
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))
# Full float32 matrix products, in eager mode and compiled code alike; TF32
# and Inductor's warning about it: see page 2 of this chapter.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")

# %%
# Three versions of one model
# ---------------------------
# The model is the 512-256-128-2 perceptron of the previous example, with
# gradients switched off. ``torch.compile`` gets ``dynamic=True``: it compiles
# a graph whose batch dimension is a symbol, so that one compilation serves
# many batch sizes instead of one compilation per size. As in the previous
# example, ``compperf.shown_warnings`` prints TorchScript's deprecation
# warning, and a one-line function compiled first pays what the first
# ``torch.compile`` of a process pays (imports, compile workers), so that the
# first calls below measure this model's compilation only.


def get_net():
    return nn.Sequential(
        nn.Linear(512, 256),
        nn.ReLU(),
        nn.Linear(256, 128),
        nn.ReLU(),
        nn.Linear(128, 2),
    )


def synchronize():
    """Wait until the device has finished the work queued so far."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type != "cpu":
        torch.accelerator.synchronize(device)


def prepare_compiler():
    """Compile and run a tiny function; return the seconds it took."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        # Importing Inductor imports a PyTorch module that still uses the
        # deprecated torch.jit.script_method: it warns once per process.
        warnings.filterwarnings(
            "ignore", r"`torch\.jit\.script_method`", DeprecationWarning
        )
        torch.compile(lambda t: t + 1)(torch.zeros(1, device=device))
    synchronize()
    return time.perf_counter() - start


torch.manual_seed(0)
net = get_net().to(device).requires_grad_(False)
with compperf.shown_warnings(r"`torch\.jit\."):
    scripted = torch.jit.script(net)
try:
    setup = prepare_compiler()
    print(compperf.tr("one-line function compiled: {t:time}", t=setup))
    compiled = torch.compile(net, dynamic=True)
except torch._dynamo.exc.BackendCompilerFailed as error:  # No C/C++ compiler.
    print(compperf.tr("torch.compile failed: {e}", e=type(error).__name__))
    print(str(error).splitlines()[0])
    compiled = None

# %%
# Compile once, run at every batch size
# -------------------------------------
# The first call at each batch size runs whatever compilation that size needs.
# One line per batch size shows how long its first call took (a clock read
# before, and one after the device has finished); ``assert_close`` checks
# each output against eager mode's, so the page goes on only where they
# match. The next lines show how many graphs Dynamo compiled in all and how
# long the first calls took together. PyTorch treats sizes 0 and 1 as special cases (it
# specializes them), so batch size 1 gets a graph of its own and the other
# sizes share the dynamic one. Dynamo keeps its statistics for the whole
# process, so the cell counts the graphs as a difference: the count after the
# sweep minus the count before it. The last line says whether Inductor found
# the graphs in its caches on disk (a warm start, as in a rebuild of these
# pages: shorter first calls than a cold compile on a fresh machine), from
# its own count of cache hits.


def graphs_compiled():
    """Graphs Dynamo has compiled in this process (its own statistics)."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


inputs = {size: torch.randn(size, 512, device=device) for size in BATCH_SIZES}
first_calls = {}
if compiled is not None:
    graphs_before = graphs_compiled()
    with compperf.inductor_cache() as cache:
        for size, x in inputs.items():
            start = time.perf_counter()
            output = compiled(x)
            synchronize()
            first_calls[size] = time.perf_counter() - start
            torch.testing.assert_close(output, net(x))
    graphs = graphs_compiled() - graphs_before
    for size, seconds in first_calls.items():
        print(compperf.tr("batch {n}: {t:time}", n=size, t=seconds))
    total = sum(first_calls.values())
    print(compperf.tr("Dynamo graphs: {n}", n=graphs))
    print(compperf.tr("first calls in all: {t:time}", t=total))
    print(cache)

# %%
# Time per call against batch size
# --------------------------------
# At each batch size the versions run in interleaved rounds
# (``compperf.interleave``, as in the previous example): each round times
# every version for a few short blocks, in turn, so that a stall of the
# machine lands in one round instead of deciding a comparison. Each cell of
# the table is a median over all blocks, with its IQR, in microseconds; the
# plot further down tells the same story faster.

eager = compperf.tr("eager")
versions = {eager: net, "torch.jit.script": scripted}
if compiled is not None:
    versions["torch.compile"] = compiled

comparisons = {
    size: compperf.interleave(
        {name: lambda m=model, x=x: m(x) for name, model in versions.items()},
        device=device,
        budget=BUDGET,
    )
    for size, x in inputs.items()
}
timings = {
    name: [comparisons[size].measurements[name] for size in BATCH_SIZES]
    for name in versions
}
rows = [
    [
        size,
        *(
            f"{m.median * 1e6:.1f} ± {m.iqr * 1e6:.1f}"
            for m in c.measurements.values()
        ),
    ]
    for size, c in comparisons.items()
]
with compperf.i18n.parts():
    header = [compperf.tr("batch"), *versions]
title = compperf.tr("time per call (µs), median ± IQR")
print(compperf.i18n.table(header, rows, title=title))

# %%
# Where the lines cross
# ---------------------
# At each batch size, ``Comparison.faster`` asks whether a compiled version
# is faster than eager mode by more than 5 %, and answers from the confidence
# interval of their time ratio (the version's time over eager mode's), which
# its line gives: *yes* when the whole interval lies below 1/1.05, *no* when
# it lies at or above it, *unclear* when it reaches across, or when the
# machine was disturbed during that size's rounds (the line then says so).
#
# ``compperf.crossover`` reads these verdicts from the largest batch size
# down: a crossover lies between the last size where the version is not
# faster and the first size from which it is faster at every larger size.
# Its line, after each version's verdicts, reports that bracket of two
# measured sizes as its interval, not a point between them: nothing was
# measured in between. Its outcome is *yes* when it found one: the version
# becomes faster than eager mode inside the interval and stays faster up to
# the largest size, and the measured value is the first size from which it
# is faster. It is *no* when there is no crossover in the measured range:
# either the version is faster at every size (the measured value is then
# the smallest size), or it is not faster at the largest size (the value is
# then the largest size). It is *unclear* where an *unclear* verdict stands
# at the crossover: this run cannot place it.

crossings = {}
for name in list(versions)[1:]:
    verdicts = [
        comparisons[size].faster(
            name,
            eager,
            subject=compperf.tr("{v} vs eager, batch {n}", v=name, n=size),
        )
        for size in BATCH_SIZES
    ]
    for verdict in verdicts:
        print(verdict)
    crossings[name] = point = compperf.crossover(
        BATCH_SIZES, verdicts, subject=compperf.tr("{v} vs eager", v=name)
    )
    print(point, end="\n\n")

# %%
# How much of the machine that is
# -------------------------------
# At the largest batch size each call does the most arithmetic.
# ``FlopCounterMode`` counts the floating-point operations of one forward
# pass (the three matrix products, ``2 * batch * inputs * outputs`` each; it
# leaves out the bias additions and ReLUs). Divided by a version's median
# time per call they give a rate, which ``Ceilings.peak_share`` sets against
# the peak this device reaches on a matrix product (built up on
# :doc:`/auto_examples/limits/plot_2_ceilings`). Where the time per call is
# mostly fixed cost, as at small batch sizes, the share is small: the
# arithmetic units wait for the next call. One line per version gives its
# rate at the largest batch size and its share of the peak, or says that
# this run cannot read the share when its interval reaches past the peak.
largest = BATCH_SIZES[-1]
with FlopCounterMode(display=False) as flop_counter:
    net(inputs[largest])
flops = flop_counter.get_total_flops()
limits = compperf.ceilings(device)
for name in versions:
    share = limits.peak_share(timings[name][-1], flops)
    print(compperf.tr("{v}, batch size {n}: {s}", v=name, n=largest, s=share))

# %%
# The picture
# -----------
# Top: time per call on log scales, with a band from the 25th to the 75th
# percentile of the timed blocks around each median (quartiles are times, so
# the band stays above zero). Bottom: each compiled version's speed-up over
# eager mode, with the 95 % interval of the ratio as error bars; above the
# dashed line at 1× the version is faster. A shaded span marks a crossover's
# bracket where the cell above found one; without one, the panel's title
# says so.

fig, (left, right) = plt.subplots(
    2, 1, figsize=(7, 7), sharex=True, layout="constrained"
)
for name, measurements in timings.items():
    medians = [m.median * 1e6 for m in measurements]
    spans = [m.quartiles for m in measurements]
    (line,) = left.plot(BATCH_SIZES, medians, marker="o", label=name)
    left.fill_between(
        BATCH_SIZES,
        [q1 * 1e6 for q1, _ in spans],
        [q3 * 1e6 for _, q3 in spans],
        color=line.get_color(),
        alpha=0.2,
    )
    if name == eager:  # Eager mode is the dashed line at 1.
        continue
    ratios = [comparisons[size].ratio(name, eager) for size in BATCH_SIZES]
    speedups = [1 / r.estimate for r in ratios]
    right.errorbar(
        BATCH_SIZES,
        speedups,
        yerr=[
            [s - 1 / r.high for s, r in zip(speedups, ratios, strict=True)],
            [1 / r.low - s for s, r in zip(speedups, ratios, strict=True)],
        ],
        marker="o",
        capsize=3,
        color=line.get_color(),
        label=name,
    )
    point = crossings[name]
    if point.yes:
        right.axvspan(point.low, point.high, color=line.get_color(), alpha=0.1)
        note = compperf.tr("crossover {a}-{b}", a=point.low, b=point.high)
        right.annotate(
            note,
            (point.low, 1),
            textcoords="offset points",
            xytext=(5, 10),
            color=line.get_color(),
            fontsize=8,
        )
left.set(
    xscale="log",
    yscale="log",
    ylabel=compperf.tr("time per call (µs)"),
    title=compperf.tr("MLP forward pass on {device}", device=device),
)
right.axhline(1, color="gray", linestyle="--")
right.set(
    xscale="log",
    yscale="log",
    xlabel=compperf.tr("batch size"),
    ylabel=compperf.tr("speed-up over eager mode"),
)
crossed = any(point.yes for point in crossings.values())
right.set_title(
    compperf.tr("speed-up over eager mode")
    if crossed
    else compperf.tr("no crossover in the measured range")
)
# The ticks read 0.5×, 1× and 2× rather than powers of ten, and only those.
right.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
right.yaxis.set_major_formatter(
    ticker.FormatStrFormatter("%g\N{MULTIPLICATION SIGN}")
)
right.yaxis.set_minor_formatter(ticker.NullFormatter())
legend = fig.legend(
    *left.get_legend_handles_labels(), loc="outside upper center", ncols=3
)
for text in legend.get_texts()[1:]:  # the compiled versions' names are code
    text.set_fontfamily("monospace")
plt.show()

# %%
# Why it looks like this
# ----------------------
# A call has a fixed cost and a cost that grows with the batch, and three
# regimes follow from them. At small batch sizes the fixed part dominates
# (the overhead regime): the Python code around the work (``nn.Sequential``
# calls each layer in turn, a compiled model checks its guards, are the
# inputs still of the kind the graph was compiled for?, and jumps into the
# generated code) and, on a GPU, a few microseconds per kernel launch.
# Whichever version has the leanest host path wins there, and compiling can
# lose. Where element-wise operations move data with little arithmetic (the
# memory-bandwidth regime), fusing them into fewer passes over memory is what
# a compiler gains. At large batch sizes the matrix products dominate (the
# compute regime), and every version hands them to the same library, so there
# is little left to gain. This MLP has few element-wise operations. On a CPU,
# Inductor calls ``addmm``, which adds the bias too, and generates C++ code
# only for the ReLUs. On a GPU, eager mode already runs each ``nn.Linear`` as
# one library call that adds the bias (for batches above 1, cuBLASLt adds it
# in the matrix product's epilogue); Inductor instead calls ``mm`` without the
# bias and fuses the bias with the ReLU into one Triton kernel (the
# ``unfuse_bias_add_to_pointwise`` pass in
# ``torch/_inductor/fx_passes/post_grad.py``). Either way the MLP runs five
# kernels: a default-mode gain on a GPU comes from the leaner host path, not
# from fewer launches. This page measures the default mode only. Launches
# disappear only with ``mode="reduce-overhead"``
# (:doc:`/auto_examples/compilers/plot_2b_cost_per_call` and
# :doc:`/auto_examples/compilers/plot_9_modes_training` use it): it replays a
# CUDA graph instead of launching the kernels one by one. CUDA graphs record
# one graph per distinct input shape, so ``dynamic=True`` does not give one
# CUDA graph for all batch sizes: each new size records its own.
#
# Summary
# -------
# * Whether compiling pays depends on the batch size and the device: measure
#   it over the sizes you use.
# * ``dynamic=True`` lets one graph serve many batch sizes; sizes 0 and 1 get
#   graphs of their own.
# * Dynamo's statistics count for the whole process: count graphs as a
#   difference before and after the work you look at.
# * Two medians alone can mislead on a busy machine: time the versions in
#   interleaved rounds and conclude from the interval of their ratio, which
#   may answer "unclear".
# * A crossover lies between two measured batch sizes; measure more sizes to
#   narrow the bracket.
#
# Exercises
# ---------
# 1. Compile the model without ``dynamic=True`` and with ``dynamic=False``.
#    How many graphs does Dynamo compile for the same batch sizes?
# 2. When is the compiled (symbolic) version faster than eager mode, and why
#    would the crossover move to a smaller batch size on a GPU?
# 3. Run the sweep with ``torch.set_num_threads(1)``. Does the crossover move?
#
# Answers
# -------
# **1.** ``backend="eager"`` runs Dynamo without Inductor: it captures graphs
# and runs them as they are, so counting graphs costs no code generation. By
# default PyTorch compiles the first size as a static graph and, when a second
# size arrives, one dynamic graph for the sizes that follow; ``dynamic=False``
# compiles one graph per size.

graph_counts = {}
for dynamic in (True, None, False):
    torch.compiler.reset()  # Forget earlier graphs; the statistics stay.
    counted = torch.compile(net, dynamic=dynamic, backend="eager")
    before = graphs_compiled()
    for x in inputs.values():
        counted(x)
    graph_counts[f"dynamic={dynamic}"] = graphs_compiled() - before
print()
for setting, count in graph_counts.items():
    print(compperf.tr("{s}: Dynamo graphs: {n}", s=setting, n=count))

# %%
# **2.** When the work per call is small compared with what compiling
# removes: the interpreter's steps and the Python around each layer (the
# overhead regime), and separate passes over memory for chains of element-wise
# operations (the memory-bandwidth regime). On a GPU the host path is a large
# part of a small call, since the GPU waits while the CPU launches each
# kernel, so a leaner host path pays from smaller batch sizes on; fusion does
# not reduce this MLP's kernel count (five either way, see above). On a CPU
# there is no launch to save. This page measured the default mode;
# ``mode="reduce-overhead"`` (the two pages named above) removes the launches
# themselves by replaying a CUDA graph, recorded once for each batch size it
# sees.
#
# **3.** With one thread the matrix products take longer while the fixed cost
# of a call stays the same, so each version's time grows most at large batch
# sizes. Run the sweep again after ``torch.set_num_threads(1)`` to see where
# the lines cross on your machine.
