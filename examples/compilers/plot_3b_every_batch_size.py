"""
One graph for all sizes
=======================

You compile the perceptron of the previous example once for many batch sizes,
time the first call at each size, count the graphs Dynamo compiles, and see how
much of this machine's measured peak each version reaches at a small and a
large batch.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. ``torch.compile``
on a CPU also needs a C++ compiler (``g++`` or ``clang++``), and on an NVIDIA
GPU a C compiler (``gcc`` or ``clang``) for Triton's first kernel; without
one the page says so and measures the other versions.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.

import time
import warnings

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import compperf

BUDGET = 1.0  # Seconds of interleaved rounds per batch size.
BATCH_SIZES = [1, 8, 64, 512, 4096]
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    BUDGET = 0.1
    BATCH_SIZES = [1, 16, 256]
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))
# Full float32 products, and Inductor's TF32 warning: see page 2 of this chapter.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")
# Inductor's import uses the deprecated torch.jit.script_method.
warnings.filterwarnings("ignore", r"`torch\.jit\.script_method`")

# %%
# Three versions of one model
# ---------------------------
# The previous example's perceptron and TorchScript version; ``dynamic=True``
# asks for a graph whose batch dimension is a symbol. A one-line function
# compiled first pays the process's first ``torch.compile`` (imports,
# compile workers), so the first calls below measure this model only.


def prepare_compiler():
    """Compile and run a tiny function; return the seconds it took."""
    start = time.perf_counter()
    torch.compile(lambda t: t + 1)(torch.zeros(1, device=device))
    compperf.synchronize(device)
    return time.perf_counter() - start


torch.manual_seed(0)
net = nn.Sequential(
    nn.Linear(512, 256),
    nn.ReLU(),
    nn.Linear(256, 128),
    nn.ReLU(),
    nn.Linear(128, 2),
)
net = net.to(device).requires_grad_(False)
with compperf.shown_warnings(r"`torch\.jit\."):
    scripted = torch.jit.script(net)
try:
    setup = prepare_compiler()
    print(compperf.tr("one-line function compiled: {t:time}", t=setup))
    compiled = torch.compile(net, dynamic=True)
except torch._dynamo.exc.BackendCompilerFailed as error:  # No C/C++ compiler.
    print(compperf.tr("torch.compile failed: {e}", e=type(error).__name__))
    print(str(error).splitlines()[0])
    compiled = None

# %%
# Compile once, run at every batch size
# -------------------------------------
# The first call at each size compiles what that size needs: one line per
# size with its time, its output checked against eager mode's. PyTorch
# specializes sizes 0 and 1, so batch size 1 gets a graph of its own. Dynamo
# counts graphs for the whole process: the cell takes differences. The last
# line says whether Inductor's caches on disk held the code (a warm start).


def graphs_compiled():
    """Graphs Dynamo has compiled in this process (its own statistics)."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


inputs = {size: torch.randn(size, 512, device=device) for size in BATCH_SIZES}
first_calls, new_graphs = {}, {}
if compiled is not None:
    with compperf.inductor_cache() as cache:
        for size, x in inputs.items():
            before = graphs_compiled()
            start = time.perf_counter()
            output = compiled(x)
            compperf.synchronize(device)
            first_calls[size] = time.perf_counter() - start
            new_graphs[size] = graphs_compiled() - before
            torch.testing.assert_close(output, net(x))
    graphs = sum(new_graphs.values())
    for size, seconds in first_calls.items():
        print(compperf.tr("batch {n}: {t:time}", n=size, t=seconds))
    total = sum(first_calls.values())
    print(compperf.tr("Dynamo graphs: {n}", n=graphs))
    print(compperf.tr("first calls in all: {t:time}", t=total))
    print(cache)

# %%
# How much of the machine that is
# -------------------------------
# At the smallest and the largest size the versions run in interleaved
# rounds. ``FlopCounterMode`` counts one forward pass's floating-point
# operations (its matrix products); over a median time per call they give a
# rate, which ``Ceilings.peak_share`` sets against this device's peak on a
# matrix product (:doc:`/auto_examples/limits/plot_2_ceilings`).

versions = {compperf.tr("eager"): net, "torch.jit.script": scripted}
if compiled is not None:
    versions["torch.compile"] = compiled
limits = compperf.ceilings(device)
ends = (BATCH_SIZES[0], BATCH_SIZES[-1])
shares = {}
for size in ends:
    x = inputs[size]
    comparison = compperf.interleave(
        {name: lambda m=model, x=x: m(x) for name, model in versions.items()},
        device=device,
        budget=BUDGET,
    )
    with FlopCounterMode(display=False) as flop_counter:
        net(x)
    flops = flop_counter.get_total_flops()
    for name, timed in comparison.measurements.items():
        shares[name, size] = share = limits.peak_share(timed, flops)
        print(compperf.tr("{v}, batch size {n}: {s}", v=name, n=size, s=share))

# %%
# The picture
# -----------
# Top: the first call at each batch size, on a log scale; a dark bar is a
# call that compiled a graph, a light one a call that reused one. Bottom:
# each version's share of the measured peak at the smallest and the largest
# batch size, with the interval of the share as error bars.

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4.2), layout="constrained")
labels = [str(size) for size in first_calls]
colors = ["tab:blue" if new_graphs[s] else "lightblue" for s in first_calls]
top.bar(labels, [t * 1e3 for t in first_calls.values()], color=colors)
top.set(
    yscale="log" if first_calls else "linear",
    ylabel=compperf.tr("first call (ms)"),
    title=compperf.tr("torch.compile(dynamic=True): first call per size"),
)
width = 0.8 / len(versions)
for i, name in enumerate(versions):
    found = [shares[name, size] for size in ends]
    values = [s.share * 100 for s in found]
    below = [v - s.share_low * 100 for v, s in zip(values, found, strict=True)]
    above = [
        s.share_high * 100 - v for v, s in zip(values, found, strict=True)
    ]
    spots = [j + (i - (len(versions) - 1) / 2) * width for j in range(2)]
    bottom.bar(spots, values, width, yerr=[below, above], label=name)
bottom.set_xticks(
    range(2), [compperf.tr("batch {n}", n=size) for size in ends]
)
bottom.set_ylabel(compperf.tr("share of the measured peak (%)"))
legend = fig.legend(
    *bottom.get_legend_handles_labels(), loc="outside lower center", ncols=3
)
for text in legend.get_texts()[1:]:  # the compiled versions' names are code
    text.set_fontfamily("monospace")
plt.show()

# %%
# Why it looks like this
# ----------------------
# At small sizes a call's fixed cost dominates (the overhead regime): the
# Python around each layer, a compiled model's guards, on a GPU each kernel
# launch. Fusion pays where element-wise operations move data with little
# arithmetic (the memory-bandwidth regime); at large sizes the matrix
# products dominate (the compute regime), in the same library for every
# version. On a CPU, Inductor calls ``addmm`` and generates C++ code for the
# ReLUs; on a GPU it fuses each bias with its ReLU into a Triton kernel.
# Either way this MLP runs five kernels; only ``mode="reduce-overhead"``
# (:doc:`/auto_examples/compilers/plot_9_modes_training`) removes launches,
# replaying one CUDA graph per input shape, even under ``dynamic=True``.
#
# Summary
# -------
# * ``dynamic=True`` lets one graph serve many batch sizes; sizes 0 and 1
#   get graphs of their own.
# * Dynamo's statistics count for the whole process: take differences.
# * A small share of the measured peak means fixed cost; near the peak, the
#   matrix products, which every version hands to the same library.
#
# Exercises
# ---------
# 1. Compile the model without ``dynamic=True`` and with ``dynamic=False``.
#    How many graphs does Dynamo compile for the same batch sizes?
# 2. When is the compiled (symbolic) version faster than eager mode, and why
#    would the crossover move to a smaller batch size on a GPU?
#
# Answers
# -------
# **1.** ``backend="eager"`` runs Dynamo without Inductor: it captures graphs
# and runs them as they are, so counting graphs costs no code generation. By
# default PyTorch compiles the first size as a static graph and, when a second
# size arrives, one dynamic graph for the sizes that follow; ``dynamic=False``
# compiles one graph per size.

graph_counts = {}
for dynamic in (True, None, False):
    torch.compiler.reset()  # Forget earlier graphs; the statistics stay.
    counted = torch.compile(net, dynamic=dynamic, backend="eager")
    before = graphs_compiled()
    for x in inputs.values():
        counted(x)
    graph_counts[f"dynamic={dynamic}"] = graphs_compiled() - before
print()
for setting, count in graph_counts.items():
    print(compperf.tr("{s}: Dynamo graphs: {n}", s=setting, n=count))

# %%
# **2.** When the work per call is small compared with what compiling
# removes: the interpreter's steps and the Python around each layer (the
# overhead regime), and separate passes over memory for chains of element-wise
# operations (the memory-bandwidth regime). On a GPU the host path is a large
# part of a small call, since the GPU waits while the CPU launches each
# kernel, so a leaner host path pays from smaller batch sizes on; fusion does
# not reduce this MLP's kernel count (five either way, see above). On a CPU
# there is no launch to save. The previous page measured the default mode;
# ``mode="reduce-overhead"`` (the page named above) removes the launches
# themselves by replaying a CUDA graph, recorded once for each batch size it
# sees.
