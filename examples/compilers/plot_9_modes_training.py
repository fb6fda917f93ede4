"""
Compile modes
=============

``torch.compile`` has modes that trade compile time for speed. You compare
``default``, ``reduce-overhead`` and ``max-autotune`` on a small network, see
what each one turns on, and measure what each does on this machine.

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
# compile time, and it turns on CUDA graphs too. What pays depends on the
# device, so the page measures it; the next lesson,
# :doc:`/auto_examples/compilers/plot_9b_training_step`, compiles a whole
# training step. The first line says which device and software produced the
# numbers below.

import warnings

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch._dynamo.utils import counters

import compperf

BUDGET = 1.0  # seconds of interleaved rounds per comparison
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET = 0.1
# sphinx_gallery_end_ignore

# Importing Inductor, torch.compile's default compiler, runs a deprecated
# torch.jit decorator in torch 2.13: a warning not about this page, silenced.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", r"`torch\.jit\.", DeprecationWarning)
    import torch._inductor.compile_fx

# One CPU thread, less disturbed by other programs on a shared machine (the
# parallelism chapter measures threads). Compiled code assumes the thread
# count (a guard), so it is set before anything compiles, stays the same in
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
# the first call (the compilation), checks the result against eager mode,
# reads Inductor's counter of skipped CUDA graphs, and times the compiled
# network right away, in interleaved rounds with eager mode (the next mode's
# clean state drops this mode's code). The timing starts after two untimed
# calls: on a GPU, CUDA graphs run the first call as a warm-up and record the
# graph on the second. On a GPU, ``max-autotune`` benchmarks Triton templates
# for each matrix product, which typically takes tens of seconds; on a CPU it
# has few alternatives. A mode that cannot compile (Inductor needs a C++
# compiler on a CPU, and Triton a C compiler on a GPU) is reported and left
# out.
#
# A first call's line ends with whether Inductor found the compiled graph in
# its caches on disk (a hit, as in a rebuild of these pages) or generated its
# code anew (a miss). A miss is not always a cold compile: a later mode that
# generates the same kernels finds them compiled already.


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
    except torch._dynamo.exc.BackendCompilerFailed as error:
        reason = str(error).splitlines()[0]
        print(compperf.tr("{m}: cannot compile here: {e}", m=mode, e=reason))
        continue
    t = compile_seconds[mode] = timer.stop()
    c = cache.label
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
# Each line below is one mode's count of skipped CUDA graphs. On a GPU,
# ``reduce-overhead`` records the network as a CUDA graph and replays it,
# unless something stops it (the count then rises). With graph partitioning,
# Inductor's default, only the parts it can capture replay, so a zero means
# "nothing skipped whole", not "everything replays" (a profile, see the
# asynchronous chapter, shows what ran outside). On a CPU there are no CUDA
# graphs: the count of ``reduce-overhead`` is at least 1, and the mode runs
# the same generated code as ``default``.

for mode, skips in cudagraph_skips.items():
    print(compperf.tr("{m}: CUDA graphs skipped: {n}", m=mode, n=skips))

# %%
# Time per call for each mode. Each table holds one mode and the eager mode
# of its own rounds (``compperf.interleave`` alternates them, so a stall of
# the machine slows one round, not one of them); ``vs first`` is the mode's
# time relative to eager mode. The verdict under each table comes from
# ``Comparison.faster``, from the 95 % interval of the ratio of the mode's
# time to eager mode's, against the threshold 1/1.05: *yes*, the mode is
# faster, when the whole interval lies below it; *no* when the interval lies
# at or above it; *unclear* when it reaches across, and this run cannot tell
# the two apart. The line after it says how quiet the machine was.

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
# Summary
# -------
# * Modes are bundles of settings: ``reduce-overhead`` adds CUDA graphs;
#   ``max-autotune`` adds kernel benchmarking and tuning, and CUDA graphs too
#   (``max-autotune-no-cudagraphs`` tunes without them).
# * On a CPU there are no CUDA graphs: ``reduce-overhead`` falls back to the
#   default code, and Inductor's ``cudagraph_skips`` counter says so.
# * ``max-autotune`` costs compile time in proportion to what it tunes; keep
#   it for the model you deploy, not for every experiment.
#
# Exercises
# ---------
# 1. Change the batch to 1024. Does the ranking of the modes change?


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

torch.set_num_threads(threads_before)  # The page is done: give it back.
