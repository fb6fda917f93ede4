"""
When compilation pays
=====================

You time the same multilayer perceptron in eager mode, as TorchScript and with
``torch.compile`` over a range of batch sizes, and find where compiling starts to
win on this machine, if it does.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. ``torch.compile``
on a CPU also needs a C++ compiler (``g++`` or ``clang++``); without one the
page says so and compares the other versions.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced every number below.

import math
import time
import warnings

import matplotlib.pyplot as plt
import torch
from matplotlib import ticker
from torch import nn

import compperf

MIN_RUN_TIME = 0.2  # Seconds of timed calls per measurement.
BATCH_SIZES = [1, 8, 64, 512, 4096]
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    MIN_RUN_TIME = 0.02
    BATCH_SIZES = [1, 16, 256]
# sphinx_gallery_end_ignore

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Three versions of one model
# ---------------------------
# The model is the 512-256-128-2 perceptron of the previous example, with
# gradients switched off. ``torch.compile`` gets ``dynamic=True``: it compiles
# a graph whose batch dimension is a symbol, so that one compilation serves
# many batch sizes instead of one compilation per size. As in the previous
# example, ``compperf.shown_warnings`` prints TorchScript's deprecation
# warning, and a one-line function compiled first pays what the first
# ``torch.compile`` of a process pays (imports, compile workers), so that the
# first calls below measure this model's compilation only.


def get_net():
    return nn.Sequential(
        nn.Linear(512, 256),
        nn.ReLU(),
        nn.Linear(256, 128),
        nn.ReLU(),
        nn.Linear(128, 2),
    )


def synchronize():
    """Wait until the device has finished the work queued so far."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type != "cpu":
        torch.accelerator.synchronize(device)


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
    synchronize()
    return time.perf_counter() - start


torch.manual_seed(0)
net = get_net().to(device).requires_grad_(False)
with compperf.shown_warnings(r"`torch\.jit\."):
    scripted = torch.jit.script(net)
try:
    print(
        compperf.tr(
            "compiling a one-line function took {seconds:.3f} s",
            seconds=prepare_compiler(),
        )
    )
    compiled = torch.compile(net, dynamic=True)
except (
    torch._dynamo.exc.BackendCompilerFailed
) as error:  # No C++ compiler here.
    print(
        compperf.tr(
            "torch.compile failed here, so the sweep continues without it: {error}",
            error=f"{type(error).__name__}: {str(error).splitlines()[0]}",
        )
    )
    compiled = None

# %%
# Compile once, run at every batch size
# -------------------------------------
# The first call at each batch size runs whatever compilation that size needs.
# The table shows how long each first call took (a clock read before, and one
# after the device has finished), and the line under it how many graphs Dynamo
# compiled in all. PyTorch treats sizes 0 and 1 as special cases (it
# specializes them), so batch size 1 gets a graph of its own and the other
# sizes share the dynamic one. Dynamo keeps its statistics for the whole
# process, so the cell counts the graphs as a difference: the count after the
# sweep minus the count before it.


def graphs_compiled():
    """Graphs Dynamo has compiled in this process (its own statistics)."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


inputs = {size: torch.randn(size, 512, device=device) for size in BATCH_SIZES}
first_calls = {}
if compiled is not None:
    graphs_before = graphs_compiled()
    for size, x in inputs.items():
        start = time.perf_counter()
        output = compiled(x)
        synchronize()
        first_calls[size] = time.perf_counter() - start
        torch.testing.assert_close(output, net(x))
    graphs = graphs_compiled() - graphs_before
    print(compperf.tr("batch size  first call of the compiled model (s)"))
    for size, seconds in first_calls.items():
        print(f"{size:>10}  {seconds:.3f}")
    sizes = compperf.tr_plural(
        "{n} batch size", "{n} batch sizes", len(BATCH_SIZES)
    )
    print()
    print(
        compperf.tr_plural(
            "Dynamo compiled {n} graph for {sizes}, "
            "{seconds:.2f} s of first calls in all.",
            "Dynamo compiled {n} graphs for {sizes}, "
            "{seconds:.2f} s of first calls in all.",
            graphs,
            sizes=sizes,
            seconds=sum(first_calls.values()),
        )
    )
    print()
    print(
        compperf.tr(
            "torch.compile output matches eager mode at every batch size."
        ),
        end="\n\n",
    )

# %%
# Time per call against batch size
# --------------------------------
# Each version runs at each batch size; ``compperf.measure``, the shortcut for
# ``torch.utils.benchmark.Timer`` of the previous example, reports the median
# time per call and its IQR after a warm-up call. Read the table row by row:
# each row is one batch size, each cell a median ± IQR. The plot further down
# tells the same story faster.

versions = {"eager": net, "torch.jit.script": scripted}
if compiled is not None:
    versions["torch.compile"] = compiled
# The name of each version in the tables and the plot.
labels = {
    "eager": compperf.tr("eager"),
    "torch.jit.script": compperf.tr("torch.jit.script"),
    "torch.compile": compperf.tr("torch.compile"),
}

timings = {name: [] for name in versions}
for size, x in inputs.items():
    for name, model in versions.items():
        timings[name].append(
            compperf.measure(
                model,
                x,
                device=device,
                description=compperf.tr(
                    "{version}, batch {size}", version=labels[name], size=size
                ),
                min_run_time=MIN_RUN_TIME,
            )
        )

print(compperf.tr("time per call on {device}, median ± IQR", device=device))
header = compperf.tr("{batch:>6}", batch=compperf.tr("batch"))
for name in versions:
    header = compperf.tr(
        "{columns}{version:>22}", columns=header, version=labels[name]
    )
print(header)
for row, size in enumerate(BATCH_SIZES):
    cells = (
        f"{compperf.format_time(m[row].median)} ± {compperf.format_time(m[row].iqr)}"
        for m in timings.values()
    )
    print(f"{size:>6}" + "".join(f"{cell:>22}" for cell in cells))

# %%
# Where the lines cross
# ---------------------
# For each compiled version the cell looks for the batch size from which it
# stays faster than eager mode, up to the largest size measured. Between the
# last slower and the first faster size it interpolates on the log scales of
# the plot to estimate the crossover. The printed lines state what this machine
# measured: a crossover, a version that is faster everywhere, or none at all.
# Medians alone can mislead when the machine is noisy, so a last line lists the
# batch sizes where the IQR ranges of a version and of eager mode overlap: there
# the run cannot tell the two apart.


def crossover(sizes, ratios):
    """Batch size where ``ratios`` (compiled / eager time) falls below 1 for good.

    Returns ``None`` if it never does, ``sizes[0]`` if it is below 1 throughout.
    """
    faster_from = len(sizes)
    while faster_from > 0 and ratios[faster_from - 1] < 1:
        faster_from -= 1
    if faster_from in (0, len(sizes)):
        return sizes[0] if faster_from == 0 else None
    s0, s1 = sizes[faster_from - 1], sizes[faster_from]
    r0, r1 = ratios[faster_from - 1], ratios[faster_from]
    fraction = math.log(r0) / (math.log(r0) - math.log(r1))
    return math.exp(math.log(s0) + fraction * (math.log(s1) - math.log(s0)))


def overlap(a, b):
    """True when the IQR ranges around two medians overlap."""
    return abs(a.median - b.median) <= (a.iqr + b.iqr) / 2


eager_medians = [m.median for m in timings["eager"]]
crossings = {}
for name in list(versions)[1:]:
    ratios = [
        m.median / e for m, e in zip(timings[name], eager_medians, strict=True)
    ]
    crossings[name] = point = crossover(BATCH_SIZES, ratios)
    pairs = zip(BATCH_SIZES, ratios, strict=True)
    ratio_text = ", ".join(f"{size}: {ratio:.2f}x" for size, ratio in pairs)
    print(
        compperf.tr(
            "{version} time / eager time by batch size: {ratios}",
            version=name,
            ratios=ratio_text,
        )
    )
    if point is None:
        print(
            compperf.tr(
                "  {version} is not faster than eager mode at the largest batch "
                "size measured ({largest}): no crossover in this range",
                version=name,
                largest=BATCH_SIZES[-1],
            )
        )
    elif point == BATCH_SIZES[0]:
        print(
            compperf.tr(
                "  {version} is faster than eager mode at every measured batch size",
                version=name,
            )
        )
    else:
        print(
            compperf.tr(
                "  {version} becomes faster than eager mode from a batch size of "
                "about {point:.0f} and stays faster up to {largest}",
                version=name,
                point=point,
                largest=BATCH_SIZES[-1],
            )
        )
    pairs = zip(BATCH_SIZES, timings[name], timings["eager"], strict=True)
    unclear = [str(size) for size, m, e in pairs if overlap(m, e)]
    if unclear:
        print(
            compperf.tr_plural(
                "  IQR ranges overlap with eager mode at batch size {sizes}",
                "  IQR ranges overlap with eager mode at batch sizes {sizes}",
                len(unclear),
                sizes=", ".join(unclear),
            )
        )

# %%
# The picture
# -----------
# Left: time per call on log scales, with a band of one IQR around each median.
# Right: each compiled version's speed-up over eager mode; above the dashed
# line at 1x the version is faster. A dotted vertical line marks a crossover
# where the cell above found one; without one, the panel's title says so.

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for name, measurements in timings.items():
    medians = [m.median * 1e6 for m in measurements]
    # A log axis cannot show values <= 0: the band stops at a tenth of the median.
    lower = [
        max(m.median - m.iqr / 2, m.median / 10) * 1e6 for m in measurements
    ]
    upper = [(m.median + m.iqr / 2) * 1e6 for m in measurements]
    (line,) = left.plot(BATCH_SIZES, medians, marker="o", label=labels[name])
    left.fill_between(
        BATCH_SIZES, lower, upper, color=line.get_color(), alpha=0.2
    )
    if name != "eager":  # Eager mode is the dashed line at 1.
        speedups = [
            e * 1e6 / t for e, t in zip(eager_medians, medians, strict=True)
        ]
        right.plot(
            BATCH_SIZES,
            speedups,
            marker="o",
            color=line.get_color(),
            label=labels[name],
        )
    point = crossings.get(name)
    if point is not None and point != BATCH_SIZES[0]:
        right.axvline(point, color=line.get_color(), linestyle=":")
        right.annotate(
            compperf.tr(
                "{version}\ncrossover ≈ {point:.0f}", version=name, point=point
            ),
            (point, 1),
            textcoords="offset points",
            xytext=(5, 10),
            color=line.get_color(),
            fontsize=8,
        )
left.set(
    xscale="log",
    yscale="log",
    xlabel=compperf.tr("batch size"),
    ylabel=compperf.tr("time per call (µs)"),
    title=compperf.tr("MLP forward pass on {device}", device=device),
)
right.axhline(1, color="gray", linestyle="--")
right.set(
    xscale="log",
    yscale="log",
    xlabel=compperf.tr("batch size"),
    ylabel=compperf.tr("speed-up over eager mode"),
)
found = [name for name, point in crossings.items() if point is not None]
if found:
    right.set_title(compperf.tr("speed-up over eager mode"))
else:
    right.set_title(compperf.tr("no crossover in the measured range"))
# The ticks read 0.5x and 2x rather than powers of ten.
for axis in (right.yaxis.set_major_formatter, right.yaxis.set_minor_formatter):
    axis(ticker.FormatStrFormatter("%g\N{MULTIPLICATION SIGN}"))
for ax in (left, right):
    ax.legend()
fig.tight_layout()
plt.show()

# %%
# Why it looks like this
# ----------------------
# A call has a fixed cost and a cost that grows with the batch. The fixed part
# is the Python code around the work: ``nn.Sequential`` calls each layer in
# turn, a compiled model checks its guards (are the inputs still of the kind
# the graph was compiled for?) and jumps into the generated code; on a GPU,
# each kernel launch adds a few microseconds. At small batch sizes the fixed
# part dominates, so whichever version has the leanest call path wins, and
# compiling can lose. At large batch sizes the matrix products dominate, and
# every version hands them to the same library: on a CPU, Inductor calls
# ``addmm``, which adds the bias too, and generates C++ code only for the
# ReLUs, so there is little left to gain. On a GPU, Inductor fuses the bias
# and the ReLU into one Triton kernel after each matrix product, which saves
# trips through memory, but each kernel still costs a launch. This page
# measures the default mode only. The mode that removes launch cost is
# ``mode="reduce-overhead"`` (pages 2 and 9 of this chapter use it): it
# replays a CUDA graph instead of launching the kernels one by one. CUDA
# graphs record one graph per distinct input shape, so ``dynamic=True`` does
# not give one CUDA graph for all batch sizes: each new size records its own.
#
# Summary
# -------
# * Whether compiling pays depends on the batch size and the device: measure
#   it over the sizes you use.
# * ``dynamic=True`` lets one graph serve many batch sizes; sizes 0 and 1 get
#   graphs of their own.
# * Dynamo's statistics count for the whole process: count graphs as a
#   difference before and after the work you look at.
# * A median alone can mislead on a noisy machine: check whether the IQR
#   ranges overlap.
#
# Exercises
# ---------
# 1. Compile the model without ``dynamic=True`` and with ``dynamic=False``.
#    How many graphs does Dynamo compile for the same batch sizes?
# 2. When is the compiled (symbolic) version faster than eager mode, and why
#    would the crossover move to a smaller batch size on a GPU?
# 3. Run the sweep with ``torch.set_num_threads(1)``. Does the crossover move?
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
    print(
        compperf.tr_plural(
            "{setting}: Dynamo captured {n} graph.",
            "{setting}: Dynamo captured {n} graphs.",
            count,
            setting=setting,
        )
    )

# %%
# **2.** When the work per call is small compared with what compiling
# removes: the interpreter's steps, separate passes over memory for each
# element-wise operation, and on a GPU one launch per kernel. On a GPU the
# launch cost is a large part of a small call, so fusing kernels (fewer
# launches) pays from smaller batch sizes on; on a CPU there is no launch to
# save. This page measured the default mode; ``mode="reduce-overhead"``
# (pages 2 and 9) removes the remaining launches by replaying a CUDA graph,
# recorded once for each batch size it sees.
#
# **3.** With one thread the matrix products take longer while the fixed cost
# of a call stays the same, so each version's time grows most at large batch
# sizes. Run the sweep again after ``torch.set_num_threads(1)`` to see where
# the lines cross on your machine.
