"""
Timing a small CNN, compiled
============================

You time LeNet, a small convolutional network, and the chapter's multilayer
perceptron in their four versions at a small and a large batch, and see
whether the versions that were faster for one model are faster for the other.
The previous page converted both models and measured their one-off costs and
saved sizes.

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains. ``torch.compile`` on a
CPU also needs a C++ compiler (``g++`` or ``clang++``), and on an NVIDIA GPU
a C compiler (``gcc`` or ``clang``) for Triton's first kernel; without one
the page says so and compares the other versions.
"""

# %%
# The machine and the models
# --------------------------
# The first line says which device and software produced every number below.
# The models are the previous page's, with their gradients switched off:
# each of them in eager mode, TorchScript (its deprecation warning printed
# once), ``torch.export`` with a dynamic batch dimension, and
# ``torch.compile`` with ``dynamic=True``, whose first calls compile it before
# any timing starts. The line per model lists the versions it gets.

import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib import ticker
from torch import nn

import compperf
from compperf.i18n import parts, table

BUDGET = 1.0  # Seconds of interleaved rounds per model and batch size.
BATCH_SIZES = [1, 256]
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET = 0.1
    BATCH_SIZES = [1, 32]
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))
# Full float32 matrix products, in eager mode and compiled code alike; TF32
# and Inductor's warning about it: see page 2 of this chapter. cuDNN's
# convolutions follow their own switch, torch.backends.cudnn.allow_tf32,
# which PyTorch leaves on: on an Ampere or newer GPU they use TF32 in both.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")


def get_mlp():
    return nn.Sequential(
        nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
        nn.Linear(128, 2),
    )  # fmt: skip


def get_lenet():
    return nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(),
        nn.AvgPool2d(2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(),
        nn.AvgPool2d(2, stride=2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(),
        nn.Linear(120, 84), nn.Sigmoid(),
        nn.Linear(84, 10),
    )  # fmt: skip


torch.manual_seed(0)
models = {
    compperf.tr("MLP"): (get_mlp(), (512,)),
    compperf.tr("LeNet"): (get_lenet(), (1, 28, 28)),
}
variants, inputs = {}, {}
with compperf.shown_warnings(r"`torch\.jit\."):
    for name, (model, _) in models.items():
        model.to(device).requires_grad_(False)
        variants[name] = {
            "eager": model,
            "torch.jit.script": torch.jit.script(model),
        }
for name, (model, shape) in models.items():
    inputs[name] = {
        s: torch.randn(s, *shape, device=device) for s in BATCH_SIZES
    }
    exported = torch.export.export(
        model,
        (inputs[name][BATCH_SIZES[-1]],),
        dynamic_shapes=({0: torch.export.Dim("batch")},),
    )
    variants[name]["torch.export"] = exported.module()
    try:
        with warnings.catch_warnings():
            # Importing Inductor imports a PyTorch module that still uses the
            # deprecated torch.jit.script_method: it warns once per process.
            warnings.filterwarnings(
                "ignore", r"`torch\.jit\.script_method`", DeprecationWarning
            )
            compiled = torch.compile(model, dynamic=True)
            for x in inputs[name].values():
                compiled(x)
    # Compiling fails, for example, where there is no C or C++ compiler.
    except torch._dynamo.exc.BackendCompilerFailed as error:
        e = f"{type(error).__name__}: {str(error).splitlines()[0]}"
        print(compperf.tr("compile failed, {m}: {e}", m=name, e=e))
    else:
        variants[name]["torch.compile"] = compiled
    print(f"{name}: {', '.join(variants[name])}")

# %%
# Time per call
# -------------
# One table per model and batch size, eager mode first: ``vs first`` is each
# version's time relative to eager mode. The versions of one model at one
# batch size run in interleaved rounds (``compperf.interleave``), so that a
# stall of the machine cannot decide a comparison alone. Under each table, a
# line says how quiet the machine was, then one verdict of
# ``Comparison.faster`` per version: is it faster than eager mode? It answers
# from the 95 % interval of the ratio of their times, against the threshold
# 1/1.05: *yes* when the whole interval lies below it, *no* when it lies at or
# above it (the same speed, or slower), and *unclear* when it reaches across,
# so that this run cannot tell them apart. Compare the same row across the two
# models.

# The name of each version in the tables and the chart: the code's own name,
# but for eager mode.
labels = {"eager": compperf.tr("eager")}
comparisons = {}
for name, versions in variants.items():
    for size, x in inputs[name].items():
        comparisons[name, size] = comparison = compperf.interleave(
            {
                labels.get(v, v): lambda r=run, x=x: r(x)
                for v, run in versions.items()
            },
            device=device,
            budget=BUDGET,
        )
        timings = list(comparison.measurements.values())
        title = compperf.tr("{m}, batch size {n}", m=name, n=size)
        print(compperf.compare(timings, title))
        print(comparison.disturbance)
        for v in list(comparison.measurements)[1:]:
            subject = compperf.tr("{m} {v}, batch {n}", m=name, v=v, n=size)
            print(comparison.faster(v, labels["eager"], subject=subject))
        print()

# %%
# The same ratios as a chart: each group of bars is one model at one batch
# size, each bar a version's speed-up over eager mode, with the 95 % interval
# of the ratio as an error bar. Bars start at the dashed line, 1×: a bar that
# rises shows a version faster than eager mode, a bar that drops one slower.

groups = list(comparisons)
names = list(
    dict.fromkeys(v for c in comparisons.values() for v in c.measurements)
)
names.remove(labels["eager"])
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
width = 0.8 / len(names)
for i, version in enumerate(names):
    ratios = [
        comparisons[key].ratio(version, labels["eager"])
        if version in comparisons[key].measurements
        else None
        for key in groups
    ]
    up = np.array([1 / r.estimate if r else np.nan for r in ratios])
    low = np.array([1 / r.high if r else np.nan for r in ratios])
    high = np.array([1 / r.low if r else np.nan for r in ratios])
    # Bars start at 1×: up means faster than eager mode, down means slower.
    x = np.arange(len(groups)) + i * width
    ax.bar(
        x, up - 1, width, bottom=1, yerr=[up - low, high - up], capsize=2,
        label=version,
    )  # fmt: skip
ax.axhline(1, color="gray", linestyle="--")
ax.set_xticks(
    np.arange(len(groups)) + width * (len(names) - 1) / 2,
    [compperf.tr("{model}\nbatch {size}", model=m, size=s) for m, s in groups],
)
# A ratio: 2× faster and 2× slower sit equally far from 1; labels at 1-2-5.
ax.set_yscale("log")
ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
ax.yaxis.set_major_formatter(
    ticker.FormatStrFormatter("%g\N{MULTIPLICATION SIGN}")
)
ax.yaxis.set_minor_formatter(ticker.NullFormatter())
ax.set_ylabel(compperf.tr("speed-up over eager mode"))
ax.set_title(compperf.tr("Compiled versions against eager mode"))
# The versions' names are code: monospace, as the other languages keep them.
fig.legend(
    loc="outside upper center",
    ncols=len(names),
    prop={"family": "monospace", "size": 8},
)
plt.show()

# %%
# What changed
# ------------
# The two models side by side: each cell is a version's time relative to
# eager mode (the median of the per-round ratios), from the perceptron to
# LeNet. A convolutional network runs more kinds of operations per example
# (convolution, pooling, sigmoid), which gives a compiler more element-wise
# steps to fuse; whether that wins on this machine is the verdict printed
# under the tables above.


def ratio(key, version):
    """A version's time relative to eager mode."""
    r = comparisons[key].ratio(version, labels["eager"])
    return f"{r.estimate:.2f}\N{MULTIPLICATION SIGN}"


with parts():
    row = compperf.tr("time / eager time")
    rows = [
        [compperf.tr("batch {n}, {v}", n=size, v=version)]
        + [ratio((m, size), version) for m in models]
        for size in BATCH_SIZES
        for version in names
        if all(version in comparisons[m, size].measurements for m in models)
    ]
print(table([row, *models], rows))

# %%
# Summary
# -------
# * Time every version of your model in interleaved rounds: a version faster
#   than eager mode for one model or batch size need not be for another.
# * A convolutional network gives a compiler more element-wise work to fuse
#   per weight than a perceptron; the verdicts say whether that paid here.
#
# Exercises
# ---------
# 1. Modernize LeNet: ReLU instead of sigmoid, max pooling instead of average
#    pooling. Predict, then measure, how the compiled version's speed-up
#    changes.
# 2. Which comparison above has the widest interval, relative to its ratio?
#    What could make it wide?
#
# Answers
# -------
# **1.** What changes is the element-wise work between the convolutions and
# the matrix products, which eager mode runs as separate passes over memory
# and Inductor fuses. On a CPU, a sigmoid (an exponential per element) costs
# more arithmetic than a ReLU (a comparison), so the modern version may leave
# less to save. On a GPU each such pass is limited by memory bandwidth rather
# than arithmetic, so a ReLU costs about as much as a sigmoid, and the
# saving from fusing them changes little. Max and average pooling both read
# each window once. Which way the speed-up moves is a measurement: build
# ``get_lenet`` with ``nn.ReLU`` and ``nn.MaxPool2d`` and run this page again
# on your machine.
#
# **2.** The line names the widest, from each ratio's interval. An interval is
# wide where the rounds disagree: the machine was disturbed (the line under
# that table says so), or a call is so short or so long that few rounds fit
# the budget.

widths = {
    (m, v, n): c.ratio(v, labels["eager"]).relative_width
    for (m, n), c in comparisons.items()
    for v in names
    if v in c.measurements
}
m, v, n = widest = max(widths, key=widths.get)
w = widths[widest]
compperf.say(
    "widest: {m} {v}, batch {n}, {w:.0%} of its ratio", m=m, v=v, n=n, w=w
)
