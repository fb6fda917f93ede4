"""
Hybridizing another model: a small CNN
======================================

You convert LeNet, a small CNN, and the perceptron the chapter's three ways:
what each conversion costs once, and how large the saved model is.

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains. ``torch.compile`` on a
CPU also needs a C++ compiler (``g++`` or ``clang++``), and on an NVIDIA GPU
a C compiler (``gcc`` or ``clang``) for Triton's first kernel; without one
the page says so and compares the other versions.
"""

# %%
# The machine and two models
# --------------------------
# The first line says which device and software produced every number below.
# The 512-256-128-2 perceptron, and LeNet for 28x28 grayscale images: fewer
# weights (``N`` is the batch size), each used many times per image.

import io
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
for name, (model, shape) in models.items():
    model.to(device).requires_grad_(False)
    n = sum(p.numel() for p in model.parameters())
    s = "(N, " + ", ".join(map(str, shape)) + ")"
    print(compperf.tr("{m}: parameters {n:,}, input {s}", m=name, n=n, s=s))

# %%
# Convert each model three ways
# -----------------------------
# As before, with a dynamic batch size, after the process's own first export
# and compile; ``assert_close`` checks every version (a model's line prints
# once all agree). Then the one-off costs (a dash: failed) and the cache.


def timed(fn, *args, **kwargs):
    """Return fn's result and the seconds it took, with the device synchronized."""
    timer = compperf.Timer()
    result = fn(*args, **kwargs)
    compperf.synchronize(device)
    return result, timer.stop()


one_layer = (nn.Linear(2, 2).to(device), (torch.ones(1, 2, device=device),))
_, t = timed(torch.export.export, *one_layer)
print(compperf.tr("first export, a one-layer model: {t:time}", t=t))
try:
    _, t = timed(torch.compile(lambda t: t + 1), torch.zeros(1, device=device))
    print(compperf.tr("first compile, one-line function: {t:time}", t=t))
except torch._dynamo.exc.BackendCompilerFailed:
    print(compperf.tr("torch.compile fails here: the page skips it"))


variants, one_off, inputs, programs = {}, {}, {}, {}
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
            torch.export.export, model, (inputs[name][BATCH_SIZES[-1]],),
            dynamic_shapes=({0: torch.export.Dim("batch")},),
        )  # fmt: skip
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

for name, versions in variants.items():
    for size, x in inputs[name].items():
        for version, run in versions.items():
            msg = f"{name} {version} batch {size}"
            torch.testing.assert_close(run(x), versions["eager"](x), msg=msg)
    print(f"{name}: {', '.join(versions)}")

steps = list(dict.fromkeys(step for _, step in one_off))
with parts():
    cost = compperf.tr("one-off cost (first call or conversion)")
    times = {key: compperf.format_time(t) for key, t in one_off.items()}
    rows = [[s, *(times.get((m, s), "-") for m in models)] for s in steps]
print(table([cost, *models], rows))
if any("torch.compile" in v for v in variants.values()):
    print(cache)

# %%
# The same costs on a log axis: the perceptron has three kinds of layers, LeNet
# five.

fig, ax = plt.subplots(figsize=(7, 2.2), layout="constrained")
for i, name in enumerate(models):
    costs = [one_off.get((name, step), np.nan) for step in steps]
    ax.barh(np.arange(len(steps)) + 0.4 * i, costs, 0.4, label=name)
ax.set_yticks(np.arange(len(steps)) + 0.2, steps)
for label in ax.get_yticklabels()[:2]:
    label.set_fontfamily("monospace")
ax.invert_yaxis()
ax.set_xscale("log")
ax.minorticks_off()  # labels at powers of ten only: they never overlap
ax.set_xlabel(compperf.tr("seconds, paid once"))
ax.set_title(compperf.tr("What converting each model costs once"))
fig.legend(loc="outside upper center", ncols=len(models))
plt.show()

# %%
# Saved size
# ----------
# The serialization page's formats, in memory: how much is weights? A ``.pt2``
# also stores its example input; the second table gives code and metadata.


def saved_bytes(save, obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    return buffer.getbuffer().nbytes


sizes = {}
with compperf.shown_warnings(r"`torch\.jit\."):
    for name, (model, _) in models.items():
        args, kwargs = programs[name].example_inputs
        scripted = variants[name]["torch.jit.script"]
        sizes[name] = {
            "weights": sum(t.nbytes for t in model.state_dict().values()),
            "TorchScript": saved_bytes(torch.jit.save, scripted),
            "torch.export": saved_bytes(torch.export.save, programs[name]),
            "state_dict": saved_bytes(torch.save, model.state_dict()),
            "example input": sum(t.nbytes for t in [*args, *kwargs.values()]),
        }
with parts():
    header = [compperf.tr("bytes"), compperf.tr("weights"), "TorchScript"]
    header += ["torch.export", "state_dict", compperf.tr("example input")]
rows = [[m, *(f"{v:,}" for v in r.values())] for m, r in sizes.items()]
print(table(header, rows), end="\n\n")
rows = [
    [m, r["TorchScript"] - w, r["torch.export"] - w - x, r["state_dict"] - w]
    for m, r in sizes.items()
    for w, x in [(r["weights"], r["example input"])]
]
header = ["", "TorchScript", "torch.export", "state_dict"]
print(table(header, [[m, *(f"{v:,}" for v in vs)] for m, *vs in rows]))

# %%
# Summary
# -------
# * The same steps convert any ``nn.Module``, at a one-off cost of its own.
# * A CNN reuses each weight, so its files stay small.
#
# Exercises
# ---------
# 1. How many times is each weight of LeNet's first convolution used for one
#    image, and each weight of the perceptron's first layer for one example?
# 2. Run the compiled LeNet with ``TORCH_LOGS=output_code``: what is fused?
#
# Answers
# -------
# **1.** A convolution uses each weight at every output position (28 x 28 in
# the first layer, the line below); a linear layer once per example.

lenet = models["LeNet"][0]
positions = lenet[0](inputs["LeNet"][BATCH_SIZES[0]][:1]).shape[-2:]
n = positions.numel()
print(compperf.tr("uses per weight, LeNet's first convolution: {n}", n=n))

# %%
# **2.** On a CPU, the convolutions go to a library
# (``extern_kernels.convolution``), and C++ kernels fuse what follows, such
# as ``cpp_fused_avg_pool2d_sigmoid_1``: sigmoid and pooling in one loop. On a
# GPU, cuDNN runs each convolution without its bias; Triton kernels fuse the
# bias with the sigmoid (and the pooling where it can).
