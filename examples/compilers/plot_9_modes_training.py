"""
Compile modes and a compiled training step
==========================================

``torch.compile`` has modes that trade compile time for speed. You compare
``default``, ``reduce-overhead`` and ``max-autotune`` on a small network, see
what each one turns on and what it does on this machine, then compile a whole
training step (forward, backward, optimizer) and measure when it pays back
its compile time.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. ``torch.compile`` on a CPU also needs a C++
compiler (``g++`` or ``clang++``), and on an NVIDIA GPU a C compiler (``gcc``
or ``clang``) for Triton's first kernel; without one the page says so and
skips the compiled runs.
"""

# %%
# Why it matters
# --------------
# A mode is a bundle of compiler settings. ``reduce-overhead`` records the
# work as a CUDA graph, which removes the cost of launching many small GPU
# kernels, but it does nothing for a CPU. ``max-autotune`` tries several
# implementations of each matrix product and keeps the fastest, which costs
# compile time, and it turns on CUDA graphs too. Training adds the backward
# pass and the optimizer, which the compiler must capture too. What pays depends on the device, so the page
# measures it. The first line says which device and software produced the
# numbers below.

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
# torch.jit decorator inside torch 2.13. The warning is not about this page's
# code, so it is silenced once, here.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", r"`torch\.jit\.", DeprecationWarning)
    import torch._inductor.compile_fx

# One CPU thread: a single thread is less disturbed by other programs on a
# shared machine (whether a second one would speed these small models up is
# not measured here; the parallelism chapter measures threads). The thread
# count is part of what compiled code assumes (a guard, see the
# previous page), so it is set before anything compiles, stays the same in
# the answers, and is given back at the end of the page.
threads_before = torch.get_num_threads()
torch.set_num_threads(1)
device = compperf.try_gpu()
print(compperf.environment(device))
# Full float32 matrix products, in eager mode and compiled code alike; TF32
# and Inductor's warning about it: see page 2 of this chapter.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")

# %%
# What each mode turns on
# -----------------------
# ``torch._inductor.list_mode_options`` lists the settings behind each mode
# name. ``triton.cudagraphs`` is CUDA graphs; ``max_autotune`` benchmarks
# alternative kernels; ``coordinate_descent_tuning`` tunes the block sizes of
# generated GPU kernels. Look at the ``max-autotune`` line: it turns on CUDA
# graphs as well as tuning. ``max-autotune-no-cudagraphs`` tunes without them,
# so that you can tell the two effects apart on a GPU. Each line is a mode's
# name and the settings it changes (``{}``: none).

for mode in (
    "default",
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
):
    print(mode, torch._inductor.list_mode_options(mode))

# %%
# Three modes on one network
# --------------------------
# The network is a small perceptron, 784-256-256-10, run on a batch of 64 with
# gradients off. For each mode the cell compiles it from a clean state, times
# the first call (the compilation; Inductor keeps generated code in a cache on
# disk, so a warm cache makes this shorter, and a mode that generates the same
# kernels as the one before it finds them there), checks the result against
# eager mode, reads Inductor's counter of skipped CUDA graphs, and times the
# compiled network right away: the clean state of the next mode drops this
# mode's compiled code. The timing starts after two untimed calls, because on
# a GPU CUDA graphs run the first call as a warm-up and record the graph on
# the second. On a CPU, Inductor has few alternatives to benchmark for the
# three matrix products; on a GPU, ``max-autotune`` benchmarks Triton
# templates for each of them, which typically takes tens of seconds. If a
# mode cannot compile (Inductor needs a C++ compiler on a CPU, and Triton a C
# compiler on a GPU), the cell says so and goes on without it.
#
# Each first call below compiles, and its time depends on Inductor's caches
# on disk. The end of its line says whether Inductor found the compiled graph
# there (a hit: a warm start, as in a rebuild of these pages) or generated
# its code anew (a miss), from its own count of cache hits. A miss is not
# always a cold compile: Inductor also keeps each compiled kernel, so a
# later mode that generates the same kernels skips compiling them, which is
# why its first call can be much shorter. Only a fresh machine, or an empty
# ``TORCHINDUCTOR_CACHE_DIR``, compiles everything cold.


def get_net():
    return nn.Sequential(
        nn.Linear(784, 256),
        nn.ReLU(),
        nn.Linear(256, 256),
        nn.ReLU(),
        nn.Linear(256, 10),
    )


torch.manual_seed(0)
net = get_net().to(device).requires_grad_(False)
x = torch.randn(64, 784, device=device)
expected = net(x)

eager_label = compperf.tr("eager")
compile_seconds, cudagraph_skips, modes = {}, {}, {eager_label: net}
caches = {}  # mode -> whether its first call found Inductor's caches on disk
comparisons, names = {}, {}
for mode in ("default", "reduce-overhead", "max-autotune"):
    torch.compiler.reset()
    counters.clear()
    compiled = torch.compile(net, mode=mode)
    timer = compperf.Timer()
    try:
        with compperf.inductor_cache() as cache:
            out = compiled(x)
            compperf.synchronize(device)
    except (
        torch._dynamo.exc.BackendCompilerFailed
    ) as error:  # for example, when no C or C++ compiler is installed
        reason = str(error).splitlines()[0]
        print(compperf.tr("{m}: cannot compile here: {e}", m=mode, e=reason))
        continue
    t = compile_seconds[mode] = timer.stop()
    caches[mode] = c = cache.label
    print(compperf.tr("{m} first call {t:time}, {c}", m=mode, t=t, c=c))
    torch.testing.assert_close(out, expected)
    cudagraph_skips[mode] = counters["inductor"]["cudagraph_skips"]
    name = names[mode] = f"`{mode}`"  # code: the same in every language
    modes[name] = compiled
    comparisons[mode] = compperf.interleave(
        {eager_label: lambda: net(x), name: lambda c=compiled: c(x)},
        device=device,
        budget=BUDGET,
        warmup=2,
    )
# %%
# The cell below reads the counters. On a GPU, ``reduce-overhead`` records the
# network as a CUDA graph and replays it on later calls, unless something
# stops it (the skip counter then rises). With graph partitioning, Inductor's
# default, the counter can stay at 0 while part of the work runs outside the
# graphs: Inductor splits the graph around what it cannot capture, and only
# the parts it captures replay. A zero therefore means "nothing skipped
# whole", not "everything replays"; a profile (see the asynchronous
# chapter's profiler page) shows what ran outside. On a CPU there are no CUDA
# graphs: Inductor skips them (the count of ``reduce-overhead`` is then at
# least 1), and the mode runs the same generated code as ``default``. Each
# line below is one mode's count of skipped CUDA graphs.

for mode, skips in cudagraph_skips.items():
    print(compperf.tr("{m}: CUDA graphs skipped: {n}", m=mode, n=skips))

# %%
# Time per call for each mode: each mode ran in interleaved rounds with eager
# mode, right after it compiled (``compperf.interleave``): each round times
# both for a few short blocks, so that a stall of the machine slows one
# round, not one of them. Each table holds one mode and the eager mode of its
# rounds; ``vs first`` is the mode's time relative to eager mode. The eager
# rows of the three tables time the same call at three moments; each mode is
# judged against its own. The verdict under each table comes from
# ``Comparison.faster``, from the 95 % interval of the ratio of the mode's
# time to eager mode's, against the threshold 1/1.05: *yes*, the mode is
# faster than eager mode, when the whole interval lies below it; *no*, it is
# not faster, when the interval lies at or above it; *unclear* when the
# interval reaches across, and this run cannot tell the two apart. The line
# after it says how quiet the machine was during the rounds.

for mode, comparison in comparisons.items():
    print(compperf.compare(list(comparison.measurements.values())))
    print(comparison.faster(names[mode], eager_label))
    print(comparison.disturbance)

# %%
# The figure puts the three modes side by side: each point is a mode's time
# relative to eager mode, with the 95 % interval of the ratio. Left of the
# dashed line at 1 the mode took less time than eager mode; the verdicts
# above say whether the whole interval lies far enough to the left.

ratios = [c.ratio(names[m], eager_label) for m, c in comparisons.items()]
fig, ax = plt.subplots(figsize=(7, 2.6), layout="constrained")
ax.errorbar(
    [r.estimate for r in ratios],
    range(len(ratios)),
    xerr=[
        [r.estimate - r.low for r in ratios],
        [r.high - r.estimate for r in ratios],
    ],
    fmt="o",
    capsize=4,
)
ax.axvline(1, color="gray", linestyle="--")
ax.set_yticks(range(len(ratios)), list(comparisons), fontfamily="monospace")
ax.set_ylim(len(ratios) - 0.5, -0.5)
ax.set_xlabel(compperf.tr("time relative to eager mode"))
ax.set_title(compperf.tr("torch.compile modes against eager mode"))
plt.show()

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
eager_step = make_step(
    eager_model, torch.optim.SGD(eager_model.parameters(), lr=0.05)
)
compiled_step = torch.compile(
    make_step(
        compiled_model, torch.optim.SGD(compiled_model.parameters(), lr=0.05)
    )
)
batches = [
    (
        torch.randn(64, 784, device=device),
        torch.randint(0, 10, (64,), device=device),
    )
    for _ in range(STEPS)
]

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
except (
    torch._dynamo.exc.BackendCompilerFailed
) as error:  # for example, when no C or C++ compiler is installed
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
# Time per step
# -------------
# Both steps keep training their copy while they are timed; each call does the
# full step on the same batch. The line under the table says how quiet the
# machine was.

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

# %%
# When does compiling the step pay?
# ---------------------------------
# Compiling costs the extra time of the first steps; each later step saves
# (or loses) the difference in time per step. ``Comparison.pays_back`` works
# out after how many steps the saving covers the compile time, from the
# interval of the ratio of the two steps' times. The first two lines give the
# compile cost (the first two compiled steps beyond two ordinary ones) and
# the median time per step of each copy. The verdict's line follows: *yes*
# when the compiled step is faster by more than 5 %; its measured value is
# then the number of steps after which compiling has paid back, with the
# interval of that number. *No* when the compiled step is not faster here:
# compiling never pays back; *unclear* when this run cannot tell the two
# steps apart, so there is no payback to compute. With *no* and *unclear*
# the interval is that of the ratio of the times, against the threshold
# 1/1.05.

if compiled_step is not None:
    eager_per_step, compiled_per_step = (m.median for m in step_timings)
    compile_cost = max(0.0, sum(first_steps) - 2 * compiled_per_step)
    payback = step_comparison.pays_back(
        compiled_step_label, eager_step_label, compile_cost
    )
    print(compperf.tr("compile cost: {t:time}", t=compile_cost))
    e, c = eager_per_step, compiled_per_step
    print(compperf.tr("per step: eager {e:time}, compiled {c:time}", e=e, c=c))
    print(payback)

# %%
# Summary
# -------
# * Modes are bundles of settings: ``reduce-overhead`` adds CUDA graphs;
#   ``max-autotune`` adds kernel benchmarking and tuning, and CUDA graphs too
#   (``max-autotune-no-cudagraphs`` tunes without them).
# * On a CPU there are no CUDA graphs: ``reduce-overhead`` falls back to the
#   default code, and Inductor's ``cudagraph_skips`` counter says so.
# * ``max-autotune`` costs compile time in proportion to what it tunes; keep
#   it for the model you deploy, not for every experiment.
# * A whole training step compiles, with a graph break at ``backward()``; the
#   first steps pay the compile time, and the measured time per step says
#   whether, and when, that pays back.
#
# Exercises
# ---------
# 1. Change the batch to 1024. Does the ranking of the modes change?
# 2. Replace SGD by ``torch.optim.Adam``. How many graphs does Dynamo compile
#    for the step now, and how long does the first step take?
# 3. Compile only the model (``torch.compile(model)``) and keep the optimizer in
#    eager mode. Compare compile time and time per step with the whole step
#    compiled.


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. Larger batches make the matrix products dominate. The untimed
#    warm-up calls compile each mode again for the new shape.
x = torch.randn(1024, 784, device=device)
for name, run in modes.items():
    print(compperf.measure(run, x, device=device, description=name, warmup=2))

# 2. Adam keeps two running averages per weight, so its update is more
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
print(compperf.tr("first step with Adam (compiles): {t:time}", t=t))
for inputs, targets in batches[1:3]:
    step(inputs, targets)
n = counters["stats"]["unique_graphs"]
print(compperf.tr("graphs compiled: {n}", n=n))

# 3. The model alone: forward and backward compiled, optimizer eager.
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
