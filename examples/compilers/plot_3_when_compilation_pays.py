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

import warnings

import matplotlib.pyplot as plt
import torch
from matplotlib import ticker
from torch import nn

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
# Full float32 products, and Inductor's TF32 warning: see page 2 of this chapter.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")
# Inductor's import uses the deprecated torch.jit.script_method.
warnings.filterwarnings("ignore", r"`torch\.jit\.script_method`")

# %%
# Three versions of one model
# ---------------------------
# The perceptron of the previous example, without gradients; TorchScript's
# deprecation warning shown. ``dynamic=True`` gives ``torch.compile`` one
# graph for the sizes below, whose batch dimension is a symbol (the next
# example counts the graphs); its first call compiles.

torch.manual_seed(0)
net = nn.Sequential(
    nn.Linear(512, 256),
    nn.ReLU(),
    nn.Linear(256, 128),
    nn.ReLU(),
    nn.Linear(128, 2),
)
net = net.to(device).requires_grad_(False)
inputs = {size: torch.randn(size, 512, device=device) for size in BATCH_SIZES}
with compperf.shown_warnings(r"`torch\.jit\."):
    scripted = torch.jit.script(net)
try:
    compiled = torch.compile(net, dynamic=True)
    compiled(inputs[BATCH_SIZES[0]])
except torch._dynamo.exc.BackendCompilerFailed as error:  # No C/C++ compiler.
    print(compperf.tr("torch.compile failed: {e}", e=type(error).__name__))
    print(str(error).splitlines()[0])
    compiled = None

# %%
# Time per call against batch size
# --------------------------------
# At each batch size the versions run in interleaved rounds
# (``compperf.interleave``) after a warm-up call each, which compiles a size
# that still needs a graph. Each cell: median ± IQR over the timed blocks.

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
    [size, *(f"{m.median * 1e6:.1f} ± {m.iqr * 1e6:.1f}" for m in ms)]
    for size, *ms in zip(BATCH_SIZES, *timings.values(), strict=True)
]
with compperf.i18n.parts():
    header = [compperf.tr("batch"), *versions]
title = compperf.tr("time per call (µs), median ± IQR")
print(compperf.i18n.table(header, rows, title=title))

# %%
# Where the lines cross
# ---------------------
# ``Comparison.faster`` says *yes* at a size when the whole confidence
# interval of a compiled version's time over eager mode's lies below 1/1.05,
# *no* when it lies at or above it, *unclear* when it reaches across or the
# machine was disturbed. ``compperf.crossover`` reads these verdicts from the
# largest size down: *yes* when the version turns faster between two
# neighbouring measured sizes (its interval) and stays faster, *no* when it
# is faster at every size or not at the largest, *unclear* where an
# *unclear* verdict stands at the crossover.

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
# The picture
# -----------
# Top: time per call, with error bars from the quartiles of the timed
# blocks. Bottom: each compiled version's speed-up over eager mode, with the
# 95 % interval of the ratio; a shaded span marks a crossover's bracket. At
# small batch sizes a call is mostly fixed cost (the Python around each
# layer, a compiled model's guards, on a GPU each kernel launch), so the
# leanest host path wins; at large ones the matrix products dominate, and
# every version hands them to the same library. The next example measures
# how much of the machine each version then uses.

fig, (left, right) = plt.subplots(
    2, 1, figsize=(7, 5), sharex=True, layout="constrained"
)
for name, measurements in timings.items():
    medians = [m.median * 1e6 for m in measurements]
    q1, q3 = zip(*(m.quartiles for m in measurements), strict=True)
    low = [m - q * 1e6 for m, q in zip(medians, q1, strict=True)]
    high = [q * 1e6 - m for m, q in zip(medians, q3, strict=True)]
    line = left.errorbar(BATCH_SIZES, medians, [low, high], label=name)[0]
    if name == eager:  # Eager mode is the dashed line at 1.
        continue
    ratios = [comparisons[size].ratio(name, eager) for size in BATCH_SIZES]
    speedups = [1 / r.estimate for r in ratios]
    below = [s - 1 / r.high for s, r in zip(speedups, ratios, strict=True)]
    above = [1 / r.low - s for s, r in zip(speedups, ratios, strict=True)]
    color = line.get_color()
    right.errorbar(BATCH_SIZES, speedups, [below, above], color=color)
    point = crossings[name]
    if point.yes:
        right.axvspan(point.low, point.high, color=color, alpha=0.1)
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
    ylabel=compperf.tr("speed-up (×)"),
    title=compperf.tr("speed-up over eager mode"),
)
right.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
right.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g×"))
right.yaxis.set_minor_formatter(ticker.NullFormatter())
legend = fig.legend(
    *left.get_legend_handles_labels(), loc="outside upper center", ncols=3
)
for text in legend.get_texts()[1:]:  # the compiled versions' names are code
    text.set_fontfamily("monospace")
plt.show()

# %%
# Summary
# -------
# * Whether compiling pays depends on the batch size and the device.
# * Conclude from interleaved rounds and the interval of a ratio, which may
#   answer "unclear", not from two medians.
# * A crossover lies between two measured sizes; more sizes narrow it.
#
# Exercises
# ---------
# 1. Run the sweep with ``torch.set_num_threads(1)``. Does the crossover move?
# 2. How would you place a crossover, or the size where the verdicts turn,
#    more precisely than this sweep does?
#
# Answers
# -------
# **1.** With one thread the matrix products take longer while the fixed cost
# of a call stays the same, so each version's time grows most at large batch
# sizes. Run the sweep again after ``torch.set_num_threads(1)`` to see where
# the lines cross on your machine.
#
# **2.** Add batch sizes between the two ends of the bracket to
# ``BATCH_SIZES`` and run the sweep again: a crossover's interval is always
# two neighbouring measured sizes, so it narrows to the new neighbours.
# Where the verdicts near it are *unclear*, a larger ``BUDGET`` gives each
# size more rounds and a narrower interval of the ratio; on a busy machine
# some may stay *unclear*.
