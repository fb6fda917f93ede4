"""
Hybridizing a Sequential model
==============================

You run one multilayer perceptron four ways: eager mode, TorchScript (legacy),
``torch.compile`` and ``torch.export``. You check that all four compute the same
output, see which code the compiler generated, and measure what each version
costs per call and what it costs to compile.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains. ``torch.compile``
on a CPU also needs a C++ compiler (``g++`` or ``clang++``), and on an NVIDIA
GPU a C compiler (``gcc`` or ``clang``), which Triton calls the first time it
builds its kernel launcher; without one the page says so and goes on with the
other versions.
"""

# %%
# The machine and the model
# -------------------------
# The first line says which device and software produced every number below.
# The model is the multilayer perceptron from the book, 512-256-128-2. You time
# inference, so you switch off gradients for its parameters; the input is one
# example, a batch of size 1.
#
# NVIDIA GPUs from the Ampere generation on can multiply float32 matrices on
# TensorFloat32 (TF32) tensor cores, which round the inputs to 10 mantissa
# bits: faster, less exact. ``torch.set_float32_matmul_precision`` chooses:
# ``"highest"`` (PyTorch's default) keeps full float32, ``"high"`` allows
# TF32. Every compiling page of this chapter sets ``"highest"`` on purpose,
# so that eager mode and compiled code compute the same numbers and their
# outputs can be compared closely. On such a GPU Inductor warns that TF32 is
# available but not enabled; the pages hide exactly that warning, since the
# choice is made. On a CPU the setting changes
# nothing here.

import re
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
# Full float32 matrix products, in eager mode and compiled code alike.
torch.set_float32_matmul_precision("highest")
warnings.filterwarnings("ignore", "TensorFloat32 tensor cores")  # see above


def get_net():
    return nn.Sequential(
        nn.Linear(512, 256),
        nn.ReLU(),
        nn.Linear(256, 128),
        nn.ReLU(),
        nn.Linear(128, 2),
    )


torch.manual_seed(0)
net = get_net().to(device).requires_grad_(False)
x = torch.randn(1, 512, device=device)
reference = net(x)
print(compperf.tr("eager output: {o}", o=reference))


def synchronize():
    """Wait until the device has finished the work queued so far."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type != "cpu":
        torch.accelerator.synchronize(device)


# %%
# TorchScript: the legacy path, and its deprecation
# -------------------------------------------------
# ``torch.jit.script`` compiles the model's Python code into TorchScript, a
# statically typed subset of Python that runs without the Python interpreter.
# PyTorch now deprecates it in favour of ``torch.compile`` and ``torch.export``,
# and says so with a ``DeprecationWarning``. You should see that warning:
# ``compperf.shown_warnings`` prints it instead of letting it slip into the log
# or hiding it. Any other warning passes through untouched. Below it you see
# how long the compilation took. ``torch.testing.assert_close`` then checks
# that the scripted model computes the eager output: it raises an error if
# not, so the page goes on only with matching outputs. Every version below
# is checked the same way.

start = time.perf_counter()
with compperf.shown_warnings(r"`torch\.jit\."):
    scripted = torch.jit.script(net)
script_seconds = time.perf_counter() - start
print(compperf.tr("torch.jit.script: {t:time}", t=script_seconds))
torch.testing.assert_close(scripted(x), reference)

# %%
# What the first ``torch.compile`` of a process pays
# --------------------------------------------------
# The first time a Python process compiles anything, PyTorch imports its
# compiler stack (Dynamo, Inductor and what they need) and starts the worker
# processes that compile code. That cost belongs to the process, not to a
# model: in the docs build, an earlier page may already have paid it. The cell
# pays it on a one-line function, so that the model's first call below
# measures the model's own compilation.
#
# Importing Inductor imports a PyTorch module that still uses the deprecated
# ``torch.jit.script_method``, which warns once per process. The warning is
# about PyTorch's own code, not yours, so the cell hides exactly that one.
# Where no C or C++ compiler is found, compiling fails: the line below then
# names the error, and the page goes on without ``torch.compile``.


def prepare_compiler():
    """Compile and run a tiny function; return the seconds it took."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", r"`torch\.jit\.script_method`", DeprecationWarning
        )
        torch.compile(lambda t: t + 1)(torch.zeros(1, device=device))
    synchronize()
    return time.perf_counter() - start


try:
    setup_seconds = prepare_compiler()
except torch._dynamo.exc.BackendCompilerFailed as error:  # No C/C++ compiler.
    setup_seconds = None
    print(compperf.tr("torch.compile failed: {e}", e=type(error).__name__))
    print(str(error).splitlines()[0])
else:
    print(compperf.tr("one-line function compiled: {t:time}", t=setup_seconds))

# %%
# torch.compile: capture with Dynamo, generate code with Inductor
# ---------------------------------------------------------------
# ``torch.compile`` returns at once; the work happens on the first call. Dynamo
# captures the forward pass as a graph, and Inductor generates code for it.
# Compiled code is cached on disk, so the first call takes much longer on a
# fresh machine (a cold compile) than on one that has compiled this model
# before (a warm one, as in a rebuild of these pages). The line under the
# time says whether Inductor found this graph in its caches, from its own
# count of cache hits. The cell times
# the first call by hand, with the PyTorch calls you would write yourself: a
# clock read, and on a GPU ``torch.cuda.synchronize`` before the second read,
# because the GPU may still be running the work that the call queued. Then
# ``assert_close`` checks the compiled output against eager mode's.
#
# It also asks Inductor for the code it produced (``run_and_get_code`` is a
# helper of PyTorch's own tests; ``TORCH_LOGS=output_code`` prints the same
# code to the log). Look at the lines it lists: ``extern_kernels.addmm`` or
# ``extern_kernels.mm`` are matrix products handed to a library (oneDNN or MKL
# on a CPU, cuBLAS on a GPU). The other names are kernels that Inductor wrote.
# On a CPU they are C++ loops parallelized with OpenMP, ``cpp_fused_relu_0``:
# there ``addmm`` already adds the bias, so only the ReLU is left to generate.
# On a CUDA GPU they are Triton kernels: Inductor calls ``mm`` without the bias
# and fuses the bias and the ReLU into one kernel,
# ``triton_poi_fused_addmm_relu_0``, one pass over memory instead of two.
# On Apple's MPS, Inductor writes Metal shaders instead (``generated_kernel_0``
# and so on).


compiled = None
if setup_seconds is not None:
    from torch._inductor.utils import run_and_get_code

    compiled = torch.compile(net)
    with compperf.inductor_cache() as cache:
        start = time.perf_counter()
        compiled_output, (generated,) = run_and_get_code(compiled, x)
        synchronize()
        first_call = time.perf_counter() - start
    print(compperf.tr("torch.compile, first call: {t:time}", t=first_call))
    print(cache)
    torch.testing.assert_close(compiled_output, reference)

# %%
# The calls in Inductor's generated ``call`` function, in order:

LAUNCH = (
    r"^\s+(extern_kernels\.\w+|cpp_fused_\w+|triton_\w+"
    r"|generated_kernel_\d+)(?=\(|\.run\()"
)


def launches(code):
    """The library calls and generated kernels that a wrapper runs."""
    return [m.group(1) for m in re.finditer(LAUNCH, code, re.MULTILINE)]


if compiled is not None:
    calls = launches(generated)
    print(*calls, sep="\n")

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
# 3. Call 3, and every later call, replays it. A graph replays fixed memory addresses: the
#    weights stay where they are, and each input is copied into the graph's
#    own input buffer first. The output also lives in the graph's memory, and
#    the next replay overwrites it, so the cell clones it before comparing.
#
# A new input shape means a new recording. A recorded graph also keeps its
# memory: its intermediates and outputs live in a memory pool of its own for
# as long as the graph exists, so each recording costs GPU memory besides
# the model's. ``torch.compile`` starts a new iteration at each call, so the
# previous call's outputs may be overwritten; where that guess is wrong (two
# calls per step, or a loop that keeps outputs), call
# ``torch.compiler.cudagraph_mark_step_begin()`` before each step, or clone
# an output you keep: reading an overwritten output raises an error that
# says so. On other devices there is no CUDA graph to record (nor where
# ``torch.compile`` failed above), and the cell says that it skipped this
# mode instead of compiling a second time.

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
# torch.export: one whole graph, ready to save
# --------------------------------------------
# ``torch.export.export`` traces the model ahead of time into an
# ``ExportedProgram``: a single graph of ATen operations with no Python left in
# it and no fallback to eager mode. The graph below is what a runtime has to
# execute: three ``linear`` and two ``relu`` operations. ``.module()`` turns the
# program back into a callable module; each call first checks that its inputs
# still fit the shapes the program was exported for. Exporting needs no C++
# compiler. The first line below is how long exporting took.

start = time.perf_counter()
exported = torch.export.export(net, (x,))
export_seconds = time.perf_counter() - start
print(compperf.tr("torch.export.export: {t:time}", t=export_seconds))
print(exported.graph)
exported_module = exported.module()
torch.testing.assert_close(exported_module(x), reference)

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
# The Timer line above and the eager row of the table time the same call.
# Where they differ, trust the table: the Timer ran once, alone, so a stall
# during its blocks moves its median, while the table's rounds ran
# alternately with the other versions and the verdicts below come from their
# per-round ratios.

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
# Compilation is a one-off cost; a faster call pays it back only after enough
# calls: the one-off cost divided by the time each call saves. The one-off
# costs are the times printed above: ``torch.jit.script``'s compilation,
# ``torch.compile``'s first call and ``torch.export.export``.
# ``Comparison.pays_back`` answers from the interval of the time ratio (the
# version's time over eager mode's), not from two medians, and prints one
# line per version. Its outcome is *yes* when the version is faster than eager
# mode by more than 5 %: the line then gives the number of calls after which
# the compilation has paid for itself, with its interval. It is *no* when the
# whole interval of the ratio lies at or above 1/1.05, the version is not
# faster per call, and it never pays back; the line then gives that interval.
# It is *unclear* when the interval reaches across that line, or when the
# machine was disturbed (the line says so): this run cannot tell. At batch
# size 1, one forward pass is little work: the fixed cost of each call
# (Python, the guards that check a compiled graph still applies, kernel
# launches) can outweigh what compiling saves. The next example measures how
# this changes with the batch size.

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
# * ``torch.compile`` captures the forward pass with Dynamo and generates code
#   with Inductor on the first call: C++ with OpenMP on a CPU, Triton kernels
#   on a GPU, around library calls for the matrix products.
# * The first compilation in a process also pays for imports and worker
#   start-up; time it apart from the model.
# * ``mode="reduce-overhead"`` records CUDA graphs on a GPU: a warm-up call, a
#   recording call, then replays with one launch each.
# * ``torch.export`` gives one whole graph without Python, ready to save;
#   TorchScript is deprecated.
# * Time with ``torch.utils.benchmark.Timer`` (or ``compperf.measure``);
#   compare versions in interleaved rounds (``compperf.interleave``), and
#   weigh a one-off cost against what each call saves, from the interval of
#   the ratio.
#
# Exercises
# ---------
# 1. Hybridize another model from an earlier chapter. What changes?
# 2. Print a tensor's value inside ``forward`` (``print(h.sum().item())``) or
#    branch on it (``if h.sum() > 0:``), then run the model through
#    ``torch.compile`` and ``torch.export``. What does each one do?
# 3. Why can the verdict "pays back" say *no* (never) for a version that
#    compiled without error?
#
# Answers
# -------
# **1.** The next pages do it: "When compilation pays" sweeps the batch size,
# and "Hybridizing another model: a small CNN" runs LeNet through the same
# steps as this page.
#
# **2.** ``torch._dynamo.explain`` runs Dynamo alone, without generating code,
# and reports the graphs it captured. At the branch Dynamo cannot know the
# value of ``h.sum() > 0``, so it ends the graph there (a graph break), lets
# Python take the branch and captures what follows as a second graph.
# ``torch.export`` allows no break: exporting ``Branchy`` stops with an error
# (``GuardOnDataDependentSymNode``); ``torch.cond`` expresses such a branch
# inside one graph.


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = nn.Linear(512, 256), nn.Linear(256, 2)

    def forward(self, x):
        h = torch.relu(self.first(x))
        if h.sum() > 0:  # The branch depends on the data.
            return self.second(h)
        return self.second(-h)


branchy = Branchy().to(device).requires_grad_(False)
explanation = torch._dynamo.explain(branchy)(x)
graphs, breaks = explanation.graph_count, explanation.graph_break_count
print(compperf.tr("Dynamo graphs: {g}, graph breaks: {b}", g=graphs, b=breaks))

# %%
# **3.** *No* means that the whole confidence interval of the version's
# time ratio lies at or above 1/1.05 of eager mode: the version is not faster
# per call at this batch size. The fixed cost of a call (guards, the Python
# around the generated code, on a GPU the launches) is then as large as what
# the generated code saves, and with nothing saved per call, no number of
# calls repays the compilation. *Unclear* means that the interval reaches
# across that line: this run cannot tell, and more rounds or a quieter
# machine would.
