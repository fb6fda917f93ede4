"""
A compiled training step
========================

``torch.compile`` can take a whole training step, not only the forward pass.
You compile a step (forward, loss, backward, optimizer) of a small network,
see the graphs and graph breaks it makes, check its losses against eager mode,
and measure whether, and after how many steps, it pays back its compile time.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. ``torch.compile`` on a CPU also needs a C++
compiler (``g++`` or ``clang++``), and on an NVIDIA GPU a C compiler (``gcc``
or ``clang``) for Triton's first kernel; without one the page says so and
skips the compiled runs.
"""

# %%
# Why it matters
# --------------
# Training adds the backward pass and the optimizer update to every step,
# and the compiler must capture them too. Compiling costs time once; each
# later step saves (or loses) the difference in time per step. What pays
# depends on the device, so the page measures it, on a small perceptron,
# 784-256-256-10, trained with SGD on batches of 64. The first line says
# which device and software produced the numbers below.

import copy
import warnings

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch._dynamo.utils import counters

import compperf

BUDGET = 1.0  # seconds of interleaved rounds per comparison
STEPS = 30  # training steps compared between eager mode and compiled
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET, STEPS = 0.1, 5
# sphinx_gallery_end_ignore

# Importing Inductor, torch.compile's default compiler, runs a deprecated
# torch.jit decorator in torch 2.13: a warning not about this page, silenced.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", r"`torch\.jit\.", DeprecationWarning)
    import torch._inductor.compile_fx

# One CPU thread, as on the page about compile modes. Compiled code assumes
# the thread count (a guard): it is set before anything compiles.
threads_before = torch.get_num_threads()
torch.set_num_threads(1)
device = compperf.try_gpu()
print(compperf.environment(device))
# Full float32 matrix products, in eager mode and compiled code alike; TF32
# and Inductor's warning about it: see page 2 of this chapter.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")

# %%
# One training step, compiled
# ---------------------------
# A training step runs the forward pass, the loss, the backward pass and the
# optimizer. ``train_step`` below does all four, and ``torch.compile`` gets
# the whole function. Dynamo cannot trace ``loss.backward()`` itself, so it
# breaks the graph there (as on the graph-breaks page): the forward pass is
# compiled together with its backward pass (AOTAutograd derives the backward
# graph ahead of time), and the optimizer update becomes a graph of its own.
# The optimizer's code has breaks of its own; the cell lists every reason
# Dynamo counted, with how often it met it.
# Two copies of the same network, with the same starting weights and the same
# batches, train side by side: one in eager mode, one compiled.


def get_net():
    return nn.Sequential(
        nn.Linear(784, 256),
        nn.ReLU(),
        nn.Linear(256, 256),
        nn.ReLU(),
        nn.Linear(256, 10),
    )


def make_step(model, optimizer):
    loss_fn = nn.CrossEntropyLoss()

    def train_step(inputs, targets):
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    return train_step


torch.manual_seed(0)
eager_model = get_net().to(device)
compiled_model = copy.deepcopy(eager_model)
eager_step, compiled_step = (
    make_step(model, torch.optim.SGD(model.parameters(), lr=0.05))
    for model in (eager_model, compiled_model)
)
compiled_step = torch.compile(compiled_step)
all_inputs = torch.randn(STEPS, 64, 784, device=device)
all_targets = torch.randint(0, 10, (STEPS, 64), device=device)
batches = list(zip(all_inputs, all_targets, strict=True))

# %%
# The first compiled steps compile; the cell times the first two separately,
# then runs the remaining steps and compares the losses of the two copies.
# They should agree up to rounding (compiled code may sum in another order):
# ``assert_close`` stops the page if any step's losses differ by more. The
# lines give the times of the first two compiled steps, the graphs Dynamo
# compiled for the step, each graph-break reason with how often Dynamo met
# it, and the last step's loss of both copies.

torch.compiler.reset()
counters.clear()
first_steps = []
eager_losses, compiled_losses = [], []
try:
    for i, (inputs, targets) in enumerate(batches):
        eager_losses.append(eager_step(inputs, targets).item())
        timer = compperf.Timer()
        compiled_losses.append(compiled_step(inputs, targets).item())
        if i < 2:
            first_steps.append(timer.stop())
except torch._dynamo.exc.BackendCompilerFailed as error:
    reason = str(error).splitlines()[0]
    print(compperf.tr("the training step cannot compile here: {e}", e=reason))
    compiled_step = None
else:
    torch.testing.assert_close(
        torch.tensor(compiled_losses),
        torch.tensor(eager_losses),
        rtol=1e-3,
        atol=1e-4,
    )
    for i, t in enumerate(first_steps, start=1):
        print(compperf.tr("compiled step {i}: {t:time}", i=i, t=t))
    n = training_graphs = counters["stats"]["unique_graphs"]
    print(compperf.tr("graphs Dynamo compiled for the step: {n}", n=n))
    for reason, count in counters["graph_break"].items():
        r = reason.splitlines()[0]
        print(compperf.tr("graph break x{n}: {r}", n=count, r=r))
    e, c = eager_losses[-1], compiled_losses[-1]
    print(compperf.tr("last loss: eager {e:.4f}, compiled {c:.4f}", e=e, c=c))

# %%
# Time per step, and when compiling pays
# --------------------------------------
# Both steps keep training their copy while they are timed in interleaved
# rounds, each call a full step on the same batch; the line under the table
# says how quiet the machine was. Compiling costs the extra time of the first
# two compiled steps beyond two ordinary ones; each later step saves (or
# loses) the difference in time per step. ``Comparison.pays_back`` works out,
# from the interval of the ratio of the two steps' times, after how many
# steps the saving covers the compile cost. Its verdict is *yes* when the
# compiled step is faster by more than 5 %, with that number of steps as its
# measured value; *no* when it is not faster, so compiling never pays back;
# *unclear* when this run cannot tell the two steps apart. With *no* and
# *unclear* the interval is that of the ratio, against the threshold 1/1.05.

eager_step_label = compperf.tr("eager step")
compiled_step_label = compperf.tr("compiled step")
if compiled_step is not None:
    inputs, targets = batches[0]
    step_comparison = compperf.interleave(
        {
            eager_step_label: lambda: eager_step(inputs, targets),
            compiled_step_label: lambda: compiled_step(inputs, targets),
        },
        device=device,
        budget=BUDGET,
    )
    step_timings = list(step_comparison.measurements.values())
    print(compperf.compare(step_timings))
    print(step_comparison.disturbance)
    compiled_per_step = step_timings[1].median
    compile_cost = max(0.0, sum(first_steps) - 2 * compiled_per_step)
    payback = step_comparison.pays_back(
        compiled_step_label, eager_step_label, compile_cost
    )
    print(compperf.tr("compile cost: {t:time}", t=compile_cost))
    print(payback)

# %%
# The figure puts the first two compiled steps beside the median step of each
# copy, on a logarithmic axis: the first steps include the compilation, the
# medians (with bars from the first to the third quartile) are the steady
# state.

fig, ax = plt.subplots(figsize=(7, 2.6), layout="constrained")
for i, m in enumerate(step_timings if compiled_step is not None else []):
    t, (low, high) = m.median * 1e3, (q * 1e3 for q in m.quartiles)
    ax.errorbar(t, i, xerr=[[t - low], [high - t]], fmt="o", color="C0")
for i, t in enumerate(first_steps, start=1):
    ax.plot(t * 1e3, 1 + i, "s", color="C1")
labels = [eager_step_label, compiled_step_label]
labels += [compperf.tr("compiled step {i}", i=i) for i in (1, 2)]
ax.set_yticks(range(len(labels)), labels)
ax.set_ylim(len(labels) - 0.5, -0.5)
ax.set_xscale("log")
ax.set_xlabel(compperf.tr("time per step (ms)"))
ax.set_title(compperf.tr("The first compiled steps and the steady state"))
plt.show()

# %%
# Summary
# -------
# * A whole training step compiles, with a graph break at ``backward()``: the
#   forward pass compiles with its backward pass, and the optimizer update
#   becomes a graph of its own.
# * The compiled copy trains like the eager one, up to rounding.
# * The first steps pay the compile time, and the measured time per step says
#   whether, and when, that pays back.
#
# Exercises
# ---------
# 1. Replace SGD by ``torch.optim.Adam``. How many graphs does Dynamo compile
#    for the step now, and how long does the first step take?
# 2. Compile only the model (``torch.compile(model)``) and keep the optimizer in
#    eager mode. Compare compile time and time per step with the whole step
#    compiled.


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. Adam keeps two running averages per weight, so its update is more
#    work to trace and compile. The last number printed is the count of
#    graphs on this device; on CUDA, Dynamo also sets Adam's
#    ``capturable=True`` (its step counters stay on the GPU), which changes
#    the optimizer's code path, so the count may differ there.
torch.compiler.reset()
counters.clear()
model = get_net().to(device)
step = torch.compile(make_step(model, torch.optim.Adam(model.parameters())))
timer = compperf.Timer()
step(*batches[0])
t = timer.stop()
for inputs, targets in batches[1:3]:
    step(inputs, targets)
n = counters["stats"]["unique_graphs"]
print(compperf.tr("Adam: first step {t:time}, graphs {n}", t=t, n=n))

# 2. The model alone: forward and backward compiled, optimizer eager.
model = get_net().to(device)
step = make_step(
    torch.compile(model), torch.optim.SGD(model.parameters(), lr=0.05)
)
timer = compperf.Timer()
step(*batches[0])
t = timer.stop()
print(compperf.tr("first step, model compiled (compiles): {t:time}", t=t))
print(compperf.measure(step, *batches[0], device=device))
torch.set_num_threads(threads_before)  # The page is done: give it back.
