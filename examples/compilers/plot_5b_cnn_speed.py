"""
Timing a small CNN, compiled
============================

You time LeNet and the perceptron in four versions at a small and a large
batch: are the versions faster for one model faster for the other?

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
# The models and versions are the previous page's (a line per model);
# ``torch.compile`` runs once per batch size before any timing.

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
# Full float32, Inductor's TF32 warning hidden: see page 2 of this chapter.
# cuDNN's convolutions keep their own TF32 switch, on.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")
# PyTorch's own import of Inductor uses the deprecated torch.jit.script_method.
warnings.filterwarnings("ignore", ".*script_method", DeprecationWarning)


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
        nn.AvgPool2d(2, stride=2), nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(),
        nn.Linear(120, 84), nn.Sigmoid(), nn.Linear(84, 10),
    )  # fmt: skip


torch.manual_seed(0)
models = {
    compperf.tr("MLP"): (get_mlp(), (512,)),
    compperf.tr("LeNet"): (get_lenet(), (1, 28, 28)),
}
variants, inputs = {}, {}
with compperf.shown_warnings(r"`torch\.jit\."):
    for name, (model, shape) in models.items():
        model.to(device).requires_grad_(False)
        inputs[name] = {
            s: torch.randn(s, *shape, device=device) for s in BATCH_SIZES
        }
        program = torch.export.export(
            model, (inputs[name][BATCH_SIZES[-1]],),
            dynamic_shapes=({0: torch.export.Dim("batch")},),
        )  # fmt: skip
        variants[name] = {
            "eager": model,
            "torch.jit.script": torch.jit.script(model),
            "torch.export": program.module(),
        }
for name, (model, _) in models.items():
    try:
        compiled = torch.compile(model, dynamic=True)
        for x in inputs[name].values():
            compiled(x)
    except torch._dynamo.exc.BackendCompilerFailed as error:  # no compiler
        e = f"{type(error).__name__}: {str(error).splitlines()[0]}"
        print(compperf.tr("compile failed, {m}: {e}", m=name, e=e))
    else:
        variants[name]["torch.compile"] = compiled
    print(f"{name}: {', '.join(variants[name])}")

# %%
# Time per call
# -------------
# A table per model and batch size (``compperf.interleave``), how quiet the
# machine was, then per version ``Comparison.faster``: from the 95 % interval
# of the time ratio to eager mode, *yes* below 1/1.05, *no* at or above it,
# *unclear* across it. Compare the rows of the two models.

labels = {"eager": compperf.tr("eager")}  # the versions' names in tables
eager = labels["eager"]
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
            print(comparison.faster(v, eager, subject=subject))
        print()

# %%
# The ratios as speed-ups, with 95 % intervals: a bar rising from 1× is faster
# than eager mode, one that drops is slower.

groups = list(comparisons)
names = list(
    dict.fromkeys(v for c in comparisons.values() for v in c.measurements)
)
names.remove(eager)
fig, ax = plt.subplots(figsize=(7, 3.1), layout="constrained")
width = 0.8 / len(names)
for i, version in enumerate(names):
    ratios = [
        c.ratio(version, eager) if version in c.measurements else None
        for c in comparisons.values()
    ]
    up = np.array([1 / r.estimate if r else np.nan for r in ratios])
    low = np.array([1 / r.high if r else np.nan for r in ratios])
    high = np.array([1 / r.low if r else np.nan for r in ratios])
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
# A ratio: 2× faster and 2× slower sit equally far from 1; labels at 1-2-5
# where they fit (two decades at most), else at powers of ten.
ax.set_yscale("log")
bottom, top = ax.get_ylim()
subs = (1, 2, 5) if top / bottom <= 100 else (1,)
ax.yaxis.set_major_locator(ticker.LogLocator(subs=subs))
ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g×"))
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
# The two models side by side, each cell a version's time relative to eager
# mode. LeNet gives a compiler more element-wise steps to fuse (pooling,
# sigmoid); whether that wins here, the verdicts above say.


def ratio(key, version):
    """A version's time relative to eager mode."""
    r = comparisons[key].ratio(version, eager)
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
# * A version faster than eager mode in one case need not be in another.
# * A CNN gives a compiler more element-wise work to fuse; did it pay here?
#
# Exercises
# ---------
# 1. Modernize LeNet (ReLU, max pooling): predict, then measure, the speed-up.
# 2. Which comparison above has the widest interval, relative to its ratio?
#    What could make it wide?
#
# Answers
# -------
# **1.** What changes is the element-wise work that Inductor fuses. On a CPU
# a sigmoid (an exponential) costs more than a ReLU, so the modern version
# may leave less to save; on a GPU each pass is bound by memory bandwidth, so
# little changes. Both poolings read each window once. Measure: build
# ``get_lenet`` with ``nn.ReLU`` and ``nn.MaxPool2d`` and run this page again.
#
# **2.** The line names the widest. An interval is wide where the rounds
# disagree: a disturbed machine (its table says so), or calls so long that
# few rounds fit the budget.

widths = {
    (m, v, n): c.ratio(v, eager).relative_width
    for (m, n), c in comparisons.items()
    for v in names
    if v in c.measurements
}
m, v, n = widest = max(widths, key=widths.get)
w = widths[widest]
compperf.say(
    "widest: {m} {v}, batch {n}, {w:.0%} of its ratio", m=m, v=v, n=n, w=w
)
