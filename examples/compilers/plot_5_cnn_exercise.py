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
# inference at two batch sizes. Look at the parameter counts: LeNet has far
# fewer weights, but each of them is used many times per image.


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
    "MLP": (get_mlp().to(device).requires_grad_(False), (512,)),
    "LeNet": (get_lenet().to(device).requires_grad_(False), (1, 28, 28)),
}
for name, (model, shape) in models.items():
    parameters = sum(p.numel() for p in model.parameters())
    print(
        compperf.tr_plural(
            "{model}: {n:,} parameter, input of shape (batch, {shape})",
            "{model}: {n:,} parameters, input of shape (batch, {shape})",
            parameters,
            model=name,
            shape=", ".join(map(str, shape)),
        )
    )

# %%
# Compile each model three ways
# -----------------------------
# As before: ``torch.jit.script`` (legacy; the cell prints its deprecation
# warning), ``torch.compile`` with ``dynamic=True`` so that one graph can serve
# several batch sizes, and ``torch.export`` with the batch dimension declared
# dynamic, so that one exported program accepts every batch size. The first
# call of the compiled model at each batch size is timed on its own: that is
# where compilation happens. The table below lists these one-off costs.
#
# What a process pays once is kept out of them: exporting a one-layer model
# first warms up ``torch.export``, and a one-line function
# compiled first pays for the imports and compile workers of the first
# ``torch.compile``, as in the earlier pages. Inductor also keeps the code it
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
print(
    compperf.tr(
        "exporting a one-layer model first took {seconds:.3f} s",
        seconds=export_setup,
    )
)
try:
    print(
        compperf.tr(
            "compiling a one-line function first took {seconds:.3f} s",
            seconds=prepare_compiler(),
        )
    )
except torch._dynamo.exc.BackendCompilerFailed:
    print(
        compperf.tr(
            "torch.compile does not work here: the page goes on without it."
        )
    )


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
            print(
                compperf.tr(
                    "torch.compile failed for {model}, so the page continues "
                    "without it: {error}",
                    model=name,
                    error=f"{type(error).__name__}: {str(error).splitlines()[0]}",
                )
            )
        else:
            variants[name]["torch.compile"] = compiled

print(
    compperf.tr(
        "{step:<40}{mlp:>10}{lenet:>10}",
        step=compperf.tr("one-off cost (first call or conversion)"),
        mlp="MLP",
        lenet="LeNet",
    )
)
for step in dict.fromkeys(step for _, step in one_off):
    mlp, lenet = (
        compperf.format_time(one_off[name, step])
        if (name, step) in one_off
        else compperf.tr("failed")
        for name in models
    )
    print(
        compperf.tr(
            "{step:<40}{mlp:>10}{lenet:>10}", step=step, mlp=mlp, lenet=lenet
        )
    )
if any("torch.compile" in v for v in variants.values()):
    print(cache)

# %%
# Same outputs everywhere
# -----------------------
# Every version of each model must compute what eager mode computes, at every
# batch size. ``torch.testing.assert_close`` raises if one does not; the line
# below is printed only when all of them agree.

for name, versions in variants.items():
    for size, x in inputs[name].items():
        expected = versions["eager"](x)
        for version, run in versions.items():
            torch.testing.assert_close(
                run(x), expected, msg=f"{name} {version} batch {size}"
            )
print(compperf.tr("all versions agree with eager mode at every batch size:"))
for name, versions in variants.items():
    print(f"  {name}: {', '.join(versions)}")

# %%
# Time per call
# -------------
# One table per model and batch size, with eager mode as the first row: the
# ``vs first`` column is each version's time relative to eager mode. As on the
# earlier pages, the versions of one model at one batch size run in
# interleaved rounds (``compperf.interleave``), so that a stall of the machine
# cannot decide a comparison alone. Compare the same row across the two
# models.

# The name of each version in the tables and the chart.
labels = {
    "eager": compperf.tr("eager"),
    "torch.jit.script": compperf.tr("torch.jit.script"),
    "torch.export": compperf.tr("torch.export"),
    "torch.compile": compperf.tr("torch.compile"),
}
comparisons, timings = {}, {}
for name, versions in variants.items():
    for size, x in inputs[name].items():
        comparisons[name, size] = comparison = compperf.interleave(
            {
                labels[v]: lambda r=run, x=x: r(x)
                for v, run in versions.items()
            },
            device=device,
            budget=BUDGET,
        )
        timings[name, size] = comparison.measurements
        print(
            compperf.compare(
                list(comparison.measurements.values()),
                title=compperf.tr(
                    "{model}, batch size {size}", model=name, size=size
                ),
            )
        )
        print(compperf.tr("machine: {state}", state=comparison.disturbance))
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
ax.set_title(
    compperf.tr(
        "Compiled versions against eager mode on {device}", device=device
    )
)
fig.legend(loc="outside upper center", ncols=len(names), fontsize=8)
plt.show()

# %%
# Saved size
# ----------
# The three formats of the serialization example, written to memory instead of
# files. LeNet has far fewer weights than the perceptron, so look at how much
# of each file is weights and how much is everything else. An exported program
# also stores the example input it was exported with; the last column gives
# its size, and the second table shows how much of each file the weights and
# that input leave unexplained.


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
print(
    compperf.tr(
        "{bytes:<7}{weights:>14}{torchscript:>14}{export:>14}{state_dict:>14}"
        "{example:>14}",
        bytes=compperf.tr("bytes"),
        weights=compperf.tr("weights"),
        torchscript="TorchScript",
        export="torch.export",
        state_dict="state_dict",
        example=compperf.tr("example input"),
    )
)
for name, row in sizes.items():
    print(f"{name:<7}" + "".join(f"{size:>14,}" for size in row.values()))
print()
print(
    compperf.tr(
        "bytes that are neither weights nor, in a .pt2, the example input"
    )
)
print(
    f"{'':<7}"
    + "".join(
        f"{column:>14}"
        for column in ("TorchScript", "torch.export", "state_dict")
    )
)
for name, row in sizes.items():
    rest = (
        row["TorchScript"] - row["weights"],
        row["torch.export"] - row["weights"] - row["example input"],
        row["state_dict"] - row["weights"],
    )
    print(f"{name:<7}" + "".join(f"{size:>14,}" for size in rest))

# %%
# What changed
# ------------
# The cell compares the two models line by line, from the measurements above:
# how the compile cost and each version's speed relative to eager mode differ
# from the perceptron to LeNet. A convolutional network runs more kinds of
# operations per example (convolution, pooling, sigmoid), which gives a compiler
# more element-wise steps to fuse, but also more code to generate; the lines
# say which effect wins on this machine. Each cell gives a version's time
# relative to eager mode (the median of the per-round ratios) and the verdict
# of ``Comparison.faster`` on it: "faster" when the whole 95 % interval of the
# ratio lies below 1/1.05, "not faster" when it lies at or above it (the same
# speed, or slower), and "unclear" when it reaches across: this run cannot
# tell them apart.


def verdict(key, version):
    """A version's time relative to eager mode, and whether it is faster."""
    ratio = comparisons[key].ratio(version, labels["eager"])
    faster = comparisons[key].faster(
        version, labels["eager"], subject=f"{key[0]} {version}, batch {key[1]}"
    )
    if faster.yes:
        return compperf.tr("{ratio:.2f}× faster", ratio=ratio.estimate)
    if faster.no:
        return compperf.tr("{ratio:.2f}× not faster", ratio=ratio.estimate)
    return compperf.tr("{ratio:.2f}× unclear", ratio=ratio.estimate)


first_size = BATCH_SIZES[0]
key = compperf.tr("torch.compile, batch {size}", size=first_size)
if ("MLP", key) in one_off and ("LeNet", key) in one_off:
    print(
        compperf.tr(
            "compiling at batch {size}: MLP {mlp:.2f} s, LeNet {lenet:.2f} s",
            size=first_size,
            mlp=one_off["MLP", key],
            lenet=one_off["LeNet", key],
        )
    )
print(
    compperf.tr(
        "{row:<28}{mlp:>19}{lenet:>19}",
        row=compperf.tr("time / eager time"),
        mlp="MLP",
        lenet="LeNet",
    )
)
for size in BATCH_SIZES:
    mlp = timings["MLP", size]
    lenet = timings["LeNet", size]
    for version in names:
        if version in mlp and version in lenet:
            print(
                compperf.tr(
                    "{row:<28}{mlp:>19}{lenet:>19}",
                    row=compperf.tr(
                        "batch {size}, {version}", size=size, version=version
                    ),
                    mlp=verdict(("MLP", size), version),
                    lenet=verdict(("LeNet", size), version),
                )
            )

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
# each weight once per example.

lenet = models["LeNet"][0]
positions = lenet[0](inputs["LeNet"][BATCH_SIZES[0]][:1]).shape[-2:]
compperf.say(
    compperf.tr_plural(
        "Each weight of LeNet's first convolution is used {n} time per image; "
        "each weight of the perceptron's first layer once per example.",
        "Each weight of LeNet's first convolution is used {n} times per image; "
        "each weight of the perceptron's first layer once per example.",
        positions.numel(),
    )
)

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
