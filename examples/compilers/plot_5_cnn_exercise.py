"""
Hybridizing another model: a small CNN
======================================

You convert LeNet, a small convolutional network, the chapter's three ways,
next to the multilayer perceptron, and see what changes: what each conversion
costs once, and how large the saved model is. The next page times both models.
This page and the next work through the chapter's exercise "hybridize another
model".

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
from torch import nn

import compperf
from compperf.i18n import parts, table

BATCH_SIZES = [1, 256]
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
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
# fully connected layers. Each line gives a model's parameter count and the
# shape of its input, ``N`` standing for the batch size: LeNet has far fewer
# weights, but uses each of them many times per image.


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
for name, (model, shape) in models.items():
    model.to(device).requires_grad_(False)
    n = sum(p.numel() for p in model.parameters())
    s = "(N, " + ", ".join(map(str, shape)) + ")"
    print(compperf.tr("{m}: parameters {n:,}, input {s}", m=name, n=n, s=s))

# %%
# Convert each model three ways
# -----------------------------
# As before: ``torch.jit.script`` (legacy; the cell prints its deprecation
# warning once), ``torch.export`` with the batch dimension declared dynamic,
# so that one exported program accepts every batch size, and
# ``torch.compile`` with ``dynamic=True``, whose first call at each batch size
# is where compilation happens. The table lists these one-off costs (a dash
# where a version failed). What a process pays once is kept out of them: the
# first two lines time a first export of a one-layer model and a first
# compile of a one-line function, as in the earlier pages. Inductor also
# caches the code it generates on disk, so where an earlier page or run
# compiled the same graph, its time here is a warm-cache time; the line under
# the table says, from Inductor's own count of cache hits.


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
with (
    compperf.inductor_cache() as cache,
    compperf.shown_warnings(r"`torch\.jit\."),
):
    for name, (model, shape) in models.items():
        inputs[name] = {
            s: torch.randn(s, *shape, device=device) for s in BATCH_SIZES
        }
        scripted, one_off[name, "torch.jit.script"] = timed(
            torch.jit.script, model
        )
        programs[name], one_off[name, "torch.export"] = timed(
            torch.export.export,
            model,
            (inputs[name][BATCH_SIZES[-1]],),
            dynamic_shapes=({0: torch.export.Dim("batch")},),
        )
        variants[name] = {
            "eager": model,
            "torch.jit.script": scripted,
            "torch.export": programs[name].module(),
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

steps = list(dict.fromkeys(step for _, step in one_off))
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
        for step in steps
    ]
print(table([cost, *models], rows))
if any("torch.compile" in v for v in variants.values()):
    print(cache)

# %%
# The same costs as a chart, on a logarithmic axis: one group of bars per
# conversion or first call, one bar per model. Compare the two bars of each
# group: the perceptron has three kinds of layers, LeNet five.

fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
for i, name in enumerate(models):
    costs = [one_off.get((name, step), np.nan) for step in steps]
    ax.barh(np.arange(len(steps)) + 0.4 * i, costs, 0.4, label=name)
ax.set_yticks(np.arange(len(steps)) + 0.2, steps)
for label in ax.get_yticklabels()[:2]:
    label.set_fontfamily("monospace")
ax.invert_yaxis()
ax.set_xscale("log")
ax.set_xlabel(compperf.tr("seconds, paid once"))
ax.set_title(compperf.tr("What converting each model costs once"))
fig.legend(loc="outside upper center", ncols=len(models))
plt.show()

# %%
# Same outputs everywhere
# -----------------------
# Every version of each model must compute what eager mode computes, at every
# batch size. ``torch.testing.assert_close`` raises if one does not, so each
# model's line, with the versions checked, is printed only when all agree.

for name, versions in variants.items():
    for size, x in inputs[name].items():
        expected = versions["eager"](x)
        for version, run in versions.items():
            torch.testing.assert_close(
                run(x), expected, msg=f"{name} {version} batch {size}"
            )
    print(f"{name}: {', '.join(versions)}")

# %%
# Saved size
# ----------
# The three formats of the serialization example, written to memory instead
# of files. LeNet has far fewer weights than the perceptron: look at how much
# of each file is weights. An exported program also stores the example input
# it was exported with (the last column). The second table gives the bytes
# that are neither weights nor, in a ``.pt2``, the example input: the code and
# metadata each format adds.


def saved_bytes(save, obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    return buffer.getbuffer().nbytes


def tensor_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


sizes = {}
with compperf.shown_warnings(r"`torch\.jit\."):
    for name, (model, _) in models.items():
        args, kwargs = programs[name].example_inputs
        sizes[name] = {
            "weights": tensor_bytes(model.state_dict().values()),
            "TorchScript": saved_bytes(
                torch.jit.save, variants[name]["torch.jit.script"]
            ),
            "torch.export": saved_bytes(torch.export.save, programs[name]),
            "state_dict": saved_bytes(torch.save, model.state_dict()),
            "example input": tensor_bytes([*args, *kwargs.values()]),
        }
with parts():
    header = [compperf.tr("bytes"), compperf.tr("weights"), "TorchScript"]
    header += ["torch.export", "state_dict", compperf.tr("example input")]
print(
    table(
        header,
        [[m, *(f"{v:,}" for v in row.values())] for m, row in sizes.items()],
    )
)
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
    table(header, [[m, *(f"{v:,}" for v in row)] for m, row in rest.items()])
)

# %%
# Summary
# -------
# * The same steps convert any ``nn.Module``: ``torch.compile`` for speed in
#   Python, ``torch.export`` for a whole graph to save, TorchScript only for
#   old code. What each costs once depends on the model.
# * A convolutional network reuses each weight many times per example, so its
#   files stay small; an exported program also carries its example input.
# * Whether compiling pays at run time is the next page's question.
#
# Exercises
# ---------
# 1. How many times is each weight of LeNet's first convolution used for one
#    image, and each weight of the perceptron's first layer for one example?
# 2. Set ``TORCH_LOGS=output_code`` and run the compiled LeNet. Which
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
# **2.** On a CPU the log shows the convolutions handed to a library
# (``extern_kernels.convolution``) and C++ kernels whose names list what each
# one fuses, such as ``cpp_fused_avg_pool2d_sigmoid_1``: the sigmoid after a
# convolution and the average pooling after it in one loop. On a GPU,
# Inductor calls cuDNN for each convolution without its bias, then fuses the
# bias addition with the pointwise operations that follow (the sigmoid, and
# the pooling where it can) into Triton kernels.
