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
# The model, its input (a batch of size 1) and its versions are the previous
# page's. The cell builds them again and times what each costs once, as that
# page did.

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
    nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
    nn.Linear(128, 2),
)  # fmt: skip
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
# On a CUDA GPU at batch 1, launching a kernel can take longer than running
# it. ``mode="reduce-overhead"`` records the kernels once as a CUDA graph and
# replays them with one launch. Call 1 is a warm-up, call 2 records, call 3
# and later replay at fixed addresses: the input is copied in, and the next
# replay overwrites the output, so clone what you keep (or call
# ``torch.compiler.cudagraph_mark_step_begin()`` before each step). Each new
# shape records anew. Elsewhere the cell says that it skipped this mode.

# compperf: cuda-only
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
    reduce_overhead = None
    print(compperf.tr("mode='reduce-overhead' skipped on {d}", d=device))

# %%
# Time per call, the PyTorch way
# ------------------------------
# ``torch.utils.benchmark.Timer`` runs the statement in blocks long enough to
# hide the clock's overhead and synchronizes the accelerator at each clock
# read. Here it times eager mode: its median, and its IQR (the spread of the
# middle half of its blocks).

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
# A busy machine stalls your program now and then; timed one after the other,
# a stall can land on one version and decide the comparison.
# ``compperf.interleave`` runs every version in each round instead, a few
# short blocks each; the ratio of two versions is the median of their
# per-round ratios, with a 95 % interval. The table gives each median and,
# in ``vs first``, its ratio to eager mode; the line under it says whether
# the machine was quiet. Where the Timer line and the eager row differ, trust
# the table: the verdicts use its rounds.

eager = compperf.tr("eager")
versions = {eager: net, "torch.jit.script": scripted}
if compiled is not None:
    versions["torch.compile"] = compiled
if reduce_overhead is not None:
    versions["reduce-overhead"] = reduce_overhead
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
# The same numbers as a chart: medians, with whiskers from the first to the
# third quartile of the blocks (``Measurement.quartiles``).

fig, ax = plt.subplots(figsize=(7, 2.5))
medians_us = [m.median * 1e6 for m in timings]
spans = [m.quartiles for m in timings]
errors = [
    [(m.median - q1) * 1e6 for m, (q1, _) in zip(timings, spans, strict=True)],
    [(q3 - m.median) * 1e6 for m, (_, q3) in zip(timings, spans, strict=True)],
]
names = [m.description for m in timings]
ax.barh(names, medians_us, xerr=errors, color="tab:blue", capsize=4)
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
# A one-off cost pays back after the cost divided by what each call saves.
# ``Comparison.pays_back`` answers per version from the interval of its time
# ratio to eager mode. *Yes*: faster by more than 5 %, paid back after the
# number of calls given. *No*: the interval lies at or above 1/1.05, never.
# *Unclear*: the interval crosses that line, or the machine was disturbed.
# At batch 1, each call's fixed cost (Python, guards, launches) can outweigh
# what compiling saves.

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
# * Compare versions in interleaved rounds (``compperf.interleave``): a stall
#   then moves one round, not the comparison.
# * ``mode="reduce-overhead"`` replays CUDA graphs on a GPU, one launch each.
# * A compiled version that is not faster per call never pays back.
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
# **2.** *No* means that the whole interval of the time ratio lies at or
# above 1/1.05: not faster per call at this batch size. A call's fixed cost
# (guards, the Python around the generated code, launches) eats what the
# generated code saves, and with nothing saved per call, no number of calls
# repays the compilation. *Unclear*: this run cannot tell; more rounds or a
# quieter machine would.
