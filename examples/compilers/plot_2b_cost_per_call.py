"""
What hybridizing saves per call
===============================

You time the perceptron of the previous page per call, in eager mode and in
each compiled version: TorchScript, ``torch.compile``, on an NVIDIA GPU also
with CUDA graphs, and ``torch.export``. You then weigh each version's one-off
cost against what it saves per call, from the interval of the time ratio.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. ``torch.compile``
on a CPU also needs a C++ compiler (``g++`` or ``clang++``), and on an NVIDIA
GPU a C compiler (``gcc`` or ``clang``), which Triton calls the first time it
builds its kernel launcher; without one the page says so and goes on with the
other versions.
"""

# %%
# The machine, the model and its versions
# ---------------------------------------
# The first line says which device and software produced every number below.
# The model, its input (a batch of size 1) and its versions are those of the
# previous page, which explains them. The cell builds them again and times
# what each costs once: for ``torch.compile`` its first call, after a one-line
# function has paid for the process's compiler set-up, with a line that says
# whether Inductor found the graph in its caches. Without a C or C++ compiler
# the page goes on without ``torch.compile``.

import time
import warnings

import matplotlib.pyplot as plt
import torch
import torch.utils.benchmark
from torch import nn

import compperf

MIN_RUN_TIME = 0.2  # Seconds of timed calls per measurement.
BUDGET = 2.0  # Seconds for the interleaved comparison of all versions.
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    MIN_RUN_TIME, BUDGET = 0.02, 0.2
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))
# Full float32 products, and Inductor's TF32 warning hidden: see page 2 of this chapter.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")
# PyTorch's own import of Inductor uses the deprecated torch.jit.script_method.
warnings.filterwarnings(
    "ignore", r"`torch\.jit\.script_method`", DeprecationWarning
)

torch.manual_seed(0)
net = nn.Sequential(
    nn.Linear(512, 256),
    nn.ReLU(),
    nn.Linear(256, 128),
    nn.ReLU(),
    nn.Linear(128, 2),
)
net = net.to(device).requires_grad_(False)
x = torch.randn(1, 512, device=device)
reference = net(x)


def once(make):
    """Run make() once, device work included; return its result and the seconds."""
    start = time.perf_counter()
    result = make()
    compperf.synchronize(device)
    return result, time.perf_counter() - start


with compperf.shown_warnings(r"`torch\.jit\."):
    scripted, script_seconds = once(lambda: torch.jit.script(net))
print(compperf.tr("torch.jit.script: {t:time}", t=script_seconds))
compiled = torch.compile(net)
try:
    once(lambda: torch.compile(lambda t: t + 1)(torch.zeros(1, device=device)))
    with compperf.inductor_cache() as cache:
        compiled_output, first_call = once(lambda: compiled(x))
except torch._dynamo.exc.BackendCompilerFailed as error:  # No C/C++ compiler.
    compiled = None
    print(compperf.tr("torch.compile failed: {e}", e=type(error).__name__))
else:
    print(compperf.tr("torch.compile, first call: {t:time}", t=first_call))
    print(cache)
    torch.testing.assert_close(compiled_output, reference)
exported, export_seconds = once(lambda: torch.export.export(net, (x,)))
print(compperf.tr("torch.export.export: {t:time}", t=export_seconds))
exported_module = exported.module()
torch.testing.assert_close(exported_module(x), reference)
torch.testing.assert_close(scripted(x), reference)

# %%
# CUDA graphs: ``mode="reduce-overhead"``
# ---------------------------------------
# On a CUDA GPU, a batch of one example is little work for each kernel, and the
# time the CPU needs to launch a kernel can exceed the time the kernel runs.
# ``mode="reduce-overhead"`` removes most of that cost with CUDA graphs: the GPU
# records the kernels once and then replays the whole sequence with one launch.
# The cell times three calls, which do different things:
#
# 1. Call 1 compiles and runs the code without recording: a warm-up, so that
#    one-off allocations stay out of the graph.
# 2. Call 2 records the CUDA graph (and runs it).
# 3. Call 3, and every later call, replays it at fixed memory addresses: each
#    input is copied into the graph's own input buffer first, and the next
#    replay overwrites the output, so the cell clones it before comparing.
#
# A new input shape means a new recording, and each recording keeps its
# intermediates and outputs in a memory pool of its own. Where a loop keeps
# outputs across calls, call ``torch.compiler.cudagraph_mark_step_begin()``
# before each step, or clone what you keep. On other devices (or where
# ``torch.compile`` failed above) the cell says that it skipped this mode.

reduce_overhead = None
if device.type == "cuda" and compiled is not None:
    reduce_overhead = torch.compile(net, mode="reduce-overhead")
    for call in (1, 2, 3):
        start = time.perf_counter()
        output = reduce_overhead(x)
        torch.cuda.synchronize(device)
        seconds = time.perf_counter() - start
        print(compperf.tr("CUDA graph call {n}: {t:time}", n=call, t=seconds))
    torch.testing.assert_close(output.clone(), reference)
else:
    print(compperf.tr("mode='reduce-overhead' skipped on {d}", d=device))

# %%
# Time per call, the PyTorch way
# ------------------------------
# ``torch.utils.benchmark.Timer`` is PyTorch's tool for timing small pieces of
# code: it runs the statement in blocks long enough to hide the clock's
# overhead and synchronizes the current accelerator (a GPU) at each clock
# read. Here it times eager mode; read its median, and its IQR: the spread of
# the middle half of its timed blocks.

timer = torch.utils.benchmark.Timer(
    stmt="net(x)",
    globals={"net": net, "x": x},
    num_threads=torch.get_num_threads(),
)
eager_alone = timer.blocked_autorange(min_run_time=MIN_RUN_TIME)
median, iqr = eager_alone.median, eager_alone.iqr
print(compperf.tr("Timer: median {m:time}, IQR {i:time}", m=median, i=iqr))

# %%
# The same for every version, in interleaved rounds
# -------------------------------------------------
# A machine that runs other programs stalls yours now and then, for
# milliseconds at a time. Timing one version after the other lets a stall
# land on one of them and decide the comparison. ``compperf.interleave``
# times the versions in rounds instead: each round runs every version for a
# few short blocks, in turn, and keeps the median block. The ratio of two
# versions is the median of their per-round ratios, with a 95 % confidence
# interval; a stalled round moves it by one rank at most. It repeats rounds
# until the intervals are narrow or its time budget is spent. The table lists
# each version's median over all its blocks; the ``vs first`` column compares
# it with eager mode. The line under it says whether the machine was quiet or
# disturbed while the rounds ran.
#
# The Timer line above and the eager row of the table time the same call;
# where they differ, trust the table, whose rounds the verdicts below use.

eager = compperf.tr("eager")
versions = {eager: net, "torch.jit.script": scripted}
if compiled is not None:
    versions["torch.compile"] = compiled
if reduce_overhead is not None:
    versions[compperf.tr("reduce-overhead")] = reduce_overhead
versions["torch.export"] = exported_module  # The callable .module().

comparison = compperf.interleave(
    {name: lambda m=model: m(x) for name, model in versions.items()},
    device=device,
    budget=BUDGET,
    warmup=2,  # reduce-overhead records its CUDA graph on the second call.
)
timings = list(comparison.measurements.values())
batch = x.shape[0]
title = compperf.tr("512-256-128-2 MLP, batch size {n}", n=batch)
print(compperf.compare(timings, title=title))
print(comparison.disturbance)

# %%
# The same numbers as a chart: bars are medians, whiskers reach from the
# 25th to the 75th percentile of the timed blocks (their quartiles,
# ``Measurement.quartiles``), so they never reach below zero.

fig, ax = plt.subplots(figsize=(7, 3))
medians_us = [m.median * 1e6 for m in timings]
spans = [m.quartiles for m in timings]
errors = [
    [(m.median - q1) * 1e6 for m, (q1, _) in zip(timings, spans, strict=True)],
    [(q3 - m.median) * 1e6 for m, (_, q3) in zip(timings, spans, strict=True)],
]
ax.barh(
    [m.description for m in timings],
    medians_us,
    xerr=errors,
    color="tab:blue",
    capsize=4,
)
ax.invert_yaxis()
for label in ax.get_yticklabels()[1:]:  # the compiled versions' names are code
    label.set_fontfamily("monospace")
ax.set_xlabel(compperf.tr("time per call (µs), median and quartiles"))
ax.set_title(compperf.tr("MLP forward pass, batch size {n}", n=batch))
fig.tight_layout()
plt.show()

# %%
# Does compiling pay here?
# ------------------------
# A faster call pays back a one-off cost (the times printed first) after
# enough calls: the cost divided by the time each call saves.
# ``Comparison.pays_back`` answers from the interval of the time ratio (the
# version's time over eager mode's), one line per version. *Yes*: the version
# is faster by more than 5 %, and the line gives after how many calls the
# compilation has paid for itself. *No*: the whole interval lies at or above
# 1/1.05, and the version never pays back. *Unclear*: the interval reaches
# across that line, or the machine was disturbed (the line says so). At batch
# size 1 the fixed cost of each call (Python, guards, kernel launches) can
# outweigh what compiling saves.

one_off = {
    "torch.jit.script": script_seconds,
    "torch.export": export_seconds,
}
if compiled is not None:
    one_off["torch.compile"] = first_call
for name, cost in one_off.items():
    print(comparison.pays_back(name, eager, cost))

# %%
# Summary
# -------
# * Time with ``torch.utils.benchmark.Timer`` (or ``compperf.measure``);
#   compare versions in interleaved rounds (``compperf.interleave``): a
#   stall then moves one round, not the comparison.
# * ``mode="reduce-overhead"`` records CUDA graphs on a GPU: a warm-up call, a
#   recording call, then replays with one launch each.
# * Weigh a one-off cost against what each call saves, from the interval of
#   the ratio: a compiled version that is not faster per call never pays back.
#
# Exercises
# ---------
# 1. Time the versions at a batch size of 256 (change ``x``). Which verdicts
#    change?
# 2. Why can the verdict "pays back" say *no* (never) for a version that
#    compiled without error?
#
# Answers
# -------
# **1.** The next page, "When compilation pays", sweeps the batch size and
# gives each version's verdict at every size.
#
# **2.** *No* means that the whole confidence interval of the version's
# time ratio lies at or above 1/1.05 of eager mode: the version is not faster
# per call at this batch size. The fixed cost of a call (guards, the Python
# around the generated code, on a GPU the launches) is then as large as what
# the generated code saves, and with nothing saved per call, no number of
# calls repays the compilation. *Unclear* means that the interval reaches
# across that line: this run cannot tell, and more rounds or a quieter
# machine would.
