"""
Hybridizing another model: a small CNN
======================================

You repeat the chapter's measurements on LeNet, a small convolutional network,
next to the multilayer perceptron, and see what changes: compile time, time per
call at a small and a large batch, and the size of the saved model. This page
works through the chapter's exercise "hybridize another model".

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains. ``torch.compile`` on a
CPU also needs a C++ compiler (``g++`` or ``clang++``), and on an NVIDIA GPU
a C compiler (``gcc`` or ``clang``) for Triton's first kernel; without one
the page says so and compares the other versions.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.

import io
import time
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

# %%
# Two models
# ----------
# The perceptron is the chapter's 512-256-128-2 model. LeNet reads 28x28
# grayscale images through two convolution and pooling stages, then three
# fully connected layers. Both have their gradients switched off; you time
# inference at two batch sizes. Each line gives a model's parameter count and
# the shape of its input, ``N`` standing for the batch size. Look at the
# parameter counts: LeNet has far fewer weights, but each of them is used many
# times per image.


def get_mlp():
    return nn.Sequential(
        nn.Linear(512, 256),
        nn.ReLU(),
        nn.Linear(256, 128),
        nn.ReLU(),
        nn.Linear(128, 2),
    )


def get_lenet():
    return nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5, padding=2),
        nn.Sigmoid(),
        nn.AvgPool2d(2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5),
        nn.Sigmoid(),
        nn.AvgPool2d(2, stride=2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120),
        nn.Sigmoid(),
        nn.Linear(120, 84),
        nn.Sigmoid(),
        nn.Linear(84, 10),
    )


torch.manual_seed(0)
models = {
    compperf.tr("MLP"): (get_mlp().to(device).requires_grad_(False), (512,)),
    compperf.tr("LeNet"): (
        get_lenet().to(device).requires_grad_(False),
        (1, 28, 28),
    ),
}
for name, (model, shape) in models.items():
    n = sum(p.numel() for p in model.parameters())
    s = "(N, " + ", ".join(map(str, shape)) + ")"
    print(compperf.tr("{m}: parameters {n:,}, input {s}", m=name, n=n, s=s))

# %%
# Compile each model three ways
# -----------------------------
# As before: ``torch.jit.script`` (legacy; the cell prints its deprecation
# warning), ``torch.compile`` with ``dynamic=True`` so that one graph can serve
# several batch sizes, and ``torch.export`` with the batch dimension declared
# dynamic, so that one exported program accepts every batch size. The first
# call of the compiled model at each batch size is timed on its own: that is
# where compilation happens. The table below lists these one-off costs
# (a dash where a version failed).
#
# What a process pays once is kept out of them: exporting a one-layer model
# first warms up ``torch.export``, and a one-line function
# compiled first pays for the imports and compile workers of the first
# ``torch.compile``, as in the earlier pages; the first two lines give what
# each took. Inductor also keeps the code it
# generates in a cache on disk: where an earlier page or run already compiled
# a model, as the earlier pages of this chapter compile the perceptron, its
# figure here is a warm-cache time, shorter than a cold compile on a fresh
# machine. The line under the table says whether Inductor found the compiled
# graphs in its caches, from its own count of cache hits.


def call_noting_jit_deprecation(fn, *args, **kwargs):
    """Call fn; print the torch.jit deprecation warnings it raises."""
    with compperf.shown_warnings(r"`torch\.jit\."):
        return fn(*args, **kwargs)


def timed(fn, *args, **kwargs):
    """Return fn's result and the seconds it took, with the device synchronized."""
    timer = compperf.Timer()
    result = fn(*args, **kwargs)
    compperf.synchronize(device)
    return result, timer.stop()


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
    compperf.synchronize(device)
    return time.perf_counter() - start


_, export_setup = timed(
    torch.export.export,
    nn.Linear(2, 2).to(device),
    (torch.ones(1, 2, device=device),),
)
print(compperf.tr("first export, a one-layer model: {t:time}", t=export_setup))
try:
    t = prepare_compiler()
    print(compperf.tr("first compile, one-line function: {t:time}", t=t))
except torch._dynamo.exc.BackendCompilerFailed:
    print(compperf.tr("torch.compile fails here: the page skips it"))


variants, one_off, inputs, programs = {}, {}, {}, {}
# Counts whether Inductor's caches on disk held the compiled graphs.
with compperf.inductor_cache() as cache:
    for name, (model, shape) in models.items():
        inputs[name] = {
            size: torch.randn(size, *shape, device=device)
            for size in BATCH_SIZES
        }
        example = inputs[name][BATCH_SIZES[-1]]
        scripted, one_off[name, "torch.jit.script"] = timed(
            call_noting_jit_deprecation, torch.jit.script, model
        )
        exported, one_off[name, "torch.export"] = timed(
            torch.export.export,
            model,
            (example,),
            dynamic_shapes=({0: torch.export.Dim("batch")},),
        )
        programs[name] = exported
        variants[name] = {
            "eager": model,
            "torch.jit.script": scripted,
            "torch.export": exported.module(),
        }
        compiled = torch.compile(model, dynamic=True)
        try:
            for size, x in inputs[name].items():
                step = compperf.tr("torch.compile, batch {size}", size=size)
                _, one_off[name, step] = timed(compiled, x)
        # Compiling fails, for example, where there is no C or C++ compiler.
        except torch._dynamo.exc.BackendCompilerFailed as error:
            e = f"{type(error).__name__}: {str(error).splitlines()[0]}"
            print(compperf.tr("compile failed, {m}: {e}", m=name, e=e))
        else:
            variants[name]["torch.compile"] = compiled

with parts():
    cost = compperf.tr("one-off cost (first call or conversion)")
    rows = [
        [step]
        + [
            compperf.tr("{t:time}", t=one_off[m, step])
            if (m, step) in one_off
            else "-"
            for m in models
        ]
        for step in dict.fromkeys(step for _, step in one_off)
    ]
print(table([cost, *models], rows))
if any("torch.compile" in v for v in variants.values()):
    print(cache)

# %%
# Same outputs everywhere
# -----------------------
# Every version of each model must compute what eager mode computes, at every
# batch size. ``torch.testing.assert_close`` raises if one does not, so the
# lines below, each model with the versions checked, are printed only when
# all of them agree.

for name, versions in variants.items():
    for size, x in inputs[name].items():
        expected = versions["eager"](x)
        for version, run in versions.items():
            torch.testing.assert_close(
                run(x), expected, msg=f"{name} {version} batch {size}"
            )
for name, versions in variants.items():
    print(f"{name}: {', '.join(versions)}")

# %%
# Time per call
# -------------
# One table per model and batch size, with eager mode as the first row: the
# ``vs first`` column is each version's time relative to eager mode. As on the
# earlier pages, the versions of one model at one batch size run in
# interleaved rounds (``compperf.interleave``), so that a stall of the machine
# cannot decide a comparison alone. Compare the same row across the two
# models. Under each table, a line says how quiet the machine was, and one
# verdict of ``Comparison.faster`` per version follows: is it faster than
# eager mode? It answers from the 95 % interval of the ratio of their times,
# against the threshold 1/1.05: *yes* when the whole interval lies below it,
# *no* when it lies at or above it (the same speed, or slower), and
# *unclear* when it reaches across, so that this run cannot tell them apart.

# The name of each version in the tables and the chart: the code's own name,
# but for eager mode.
labels = {"eager": compperf.tr("eager")}
comparisons, timings = {}, {}
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
        timings[name, size] = comparison.measurements
        title = compperf.tr("{m}, batch size {n}", m=name, n=size)
        print(compperf.compare(list(comparison.measurements.values()), title))
        print(comparison.disturbance)
        for v in list(comparison.measurements)[1:]:
            subject = compperf.tr("{m} {v}, batch {n}", m=name, v=v, n=size)
            print(comparison.faster(v, labels["eager"], subject=subject))
        print()

# %%
# The same ratios as a chart: each group of bars is one model at one batch
# size, each bar a version's speed-up over eager mode, with the 95 % interval
# of the ratio as an error bar. Bars start at the dashed line, 1×: a bar that
# rises shows a version faster than eager mode, a bar that drops one that is
# slower.

groups = list(timings)
names = list(
    dict.fromkeys(
        version for ms in timings.values() for version in list(ms)[1:]
    )
)
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
width = 0.8 / len(names)
for i, version in enumerate(names):
    ratios = [
        comparisons[key].ratio(version, labels["eager"])
        if version in timings[key]
        else None
        for key in groups
    ]
    speedups = np.array([1 / r.estimate if r else np.nan for r in ratios])
    errors = np.array(
        [
            [s - 1 / r.high, 1 / r.low - s] if r else [np.nan, np.nan]
            for s, r in zip(speedups, ratios, strict=True)
        ]
    ).T
    # Bars start at 1×: up means faster than eager mode, down means slower.
    ax.bar(
        np.arange(len(groups)) + i * width,
        speedups - 1,
        width,
        bottom=1,
        yerr=errors,
        capsize=2,
        label=version,
    )
ax.axhline(1, color="gray", linestyle="--")
ax.set_xticks(
    np.arange(len(groups)) + width * (len(names) - 1) / 2,
    [
        compperf.tr("{model}\nbatch {size}", model=name, size=size)
        for name, size in groups
    ],
)
# A ratio: 2× faster and 2× slower sit equally far from 1.
ax.set_yscale("log")
# Labels at 0.5×, 1×, 2×, 5× and so on only: the minor ticks stay unlabelled.
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
# Saved size
# ----------
# The three formats of the serialization example, written to memory instead of
# files. LeNet has far fewer weights than the perceptron, so look at how much
# of each file is weights and how much is everything else. An exported program
# also stores the example input it was exported with; the last column gives
# its size, and the second table shows how much of each file the weights and
# that input leave unexplained: the bytes that are neither weights nor, in a
# ``.pt2``, the example input.


def saved_bytes(save, obj):
    buffer = io.BytesIO()
    call_noting_jit_deprecation(save, obj, buffer)
    return buffer.getbuffer().nbytes


def tensor_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


sizes = {}
for name, (model, _) in models.items():
    example_args, example_kwargs = programs[name].example_inputs
    sizes[name] = {
        "weights": tensor_bytes(model.state_dict().values()),
        "TorchScript": saved_bytes(
            torch.jit.save, variants[name]["torch.jit.script"]
        ),
        "torch.export": saved_bytes(torch.export.save, programs[name]),
        "state_dict": saved_bytes(torch.save, model.state_dict()),
        "example input": tensor_bytes(
            [*example_args, *example_kwargs.values()]
        ),
    }
with parts():
    header = [compperf.tr("bytes"), compperf.tr("weights"), "TorchScript"]
    header += ["torch.export", "state_dict", compperf.tr("example input")]
rows = [
    [name, *(f"{v:,}" for v in row.values())] for name, row in sizes.items()
]
print(table(header, rows))
print()
rest = {
    name: (
        row["TorchScript"] - row["weights"],
        row["torch.export"] - row["weights"] - row["example input"],
        row["state_dict"] - row["weights"],
    )
    for name, row in sizes.items()
}
header = ["", "TorchScript", "torch.export", "state_dict"]
print(
    table(
        header,
        [[name, *(f"{v:,}" for v in row)] for name, row in rest.items()],
    )
)

# %%
# What changed
# ------------
# The cell compares the two models line by line, from the measurements above:
# how the compile cost and each version's speed relative to eager mode differ
# from the perceptron to LeNet. A convolutional network runs more kinds of
# operations per example (convolution, pooling, sigmoid), which gives a compiler
# more element-wise steps to fuse, but also more code to generate; the lines
# say which effect wins on this machine. The first line gives the compile
# time of both models at the first batch size. Each cell of the table gives a
# version's time relative to eager mode (the median of the per-round ratios);
# whether that is faster is the verdict printed under the tables above.


def ratio(key, version):
    """A version's time relative to eager mode."""
    r = comparisons[key].ratio(version, labels["eager"])
    return f"{r.estimate:.2f}\N{MULTIPLICATION SIGN}"


first_size = BATCH_SIZES[0]
key = compperf.tr("torch.compile, batch {size}", size=first_size)
if ("MLP", key) in one_off and ("LeNet", key) in one_off:
    m, le = one_off["MLP", key], one_off["LeNet", key]
    print(compperf.tr("compiling, MLP: {m:time}, LeNet: {l:time}", m=m, l=le))
with parts():
    row = compperf.tr("time / eager time")
    rows = [
        [compperf.tr("batch {n}, {v}", n=size, v=version)]
        + [ratio((name, size), version) for name in ("MLP", "LeNet")]
        for size in BATCH_SIZES
        for version in names
        if version in timings["MLP", size]
        and version in timings["LeNet", size]
    ]
print(table([row, *models], rows))

# %%
# Summary
# -------
# * The same steps hybridize any ``nn.Module``: ``torch.compile`` for speed in
#   Python, ``torch.export`` for a whole graph to save, TorchScript only for
#   old code.
# * A convolutional network reuses each weight many times per example, so it
#   does more work per weight than a perceptron, and its files stay small.
# * Whether compiling pays is a property of the model, the batch size and the
#   device: measure it for yours.
#
# Exercises
# ---------
# 1. How many times is each weight of LeNet's first convolution used for one
#    image, and each weight of the perceptron's first layer for one example?
# 2. Modernize LeNet: ReLU instead of sigmoid, max pooling instead of average
#    pooling. Predict, then measure, how the compiled version's speed-up
#    changes.
# 3. Set ``TORCH_LOGS=output_code`` and run the compiled LeNet. Which
#    operations did Inductor fuse into one kernel?
#
# Answers
# -------
# **1.** A convolution slides each weight over every output position: the
# first layer's output has 28 x 28 positions per channel. A linear layer uses
# each weight once per example. The line gives the uses per image of each
# weight of LeNet's first convolution.

lenet = models["LeNet"][0]
positions = lenet[0](inputs["LeNet"][BATCH_SIZES[0]][:1]).shape[-2:]
n = positions.numel()
print(compperf.tr("uses per weight, LeNet's first convolution: {n}", n=n))

# %%
# **2.** What changes is the element-wise work between the convolutions and
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
# **3.** On a CPU the log shows the convolutions handed to a library
# (``extern_kernels.convolution``) and C++ kernels whose names list what each
# one fuses, such as ``cpp_fused_avg_pool2d_sigmoid_1``: the sigmoid after a
# convolution and the average pooling after it in one loop. On a GPU the
# fusions differ: Inductor calls cuDNN for each convolution without its bias,
# then fuses the bias addition with the pointwise operations that follow
# (the sigmoid, and the pooling where it can) into Triton kernels.
