"""
Hybridizing a Sequential model
==============================

You run one multilayer perceptron four ways: eager mode, TorchScript (legacy),
``torch.compile`` and ``torch.export``. You check that all four compute the same
output, and you measure what each costs per call and what it costs to compile.
"""

# %%
# The machine and the model
# -------------------------
# The first line says which device and software produced every number below.
# The model is the multilayer perceptron from the book, 512-256-128-2. You time
# inference, so you switch off gradients for its parameters; the input is one
# example, a batch of size 1.

import os

import matplotlib.pyplot as plt
import torch
from torch import nn

import compperf

FAST = os.environ.get("COMPPERF_FAST") == "1"  # set by the tests only
MIN_RUN_TIME = 0.02 if FAST else 0.2  # seconds of timed calls per measurement

device = compperf.try_gpu()
print(compperf.environment(device))


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
print("eager output:", reference)

# %%
# TorchScript: the legacy path, and its deprecation
# -------------------------------------------------
# ``torch.jit.script`` compiles the model's Python code into TorchScript, a
# statically typed subset of Python that runs without the Python interpreter.
# PyTorch now deprecates it in favour of ``torch.compile`` and ``torch.export``,
# and says so with a ``DeprecationWarning``. You should see that warning: the
# helper below records it and prints its message instead of letting it slip
# into the log or hiding it. Any other warning passes through untouched.


def call_noting_jit_deprecation(fn, *args, **kwargs):
    """Call fn; print the torch.jit deprecation warnings it raises."""
    with compperf.shown_warnings(r"`torch\.jit\."):
        return fn(*args, **kwargs)


script_timer = compperf.Timer()
scripted = call_noting_jit_deprecation(torch.jit.script, net)
compperf.synchronize(device)
script_seconds = script_timer.stop()
print(f"torch.jit.script took {script_seconds:.3f} s")
torch.testing.assert_close(scripted(x), reference)
print("TorchScript output matches eager mode")

# %%
# torch.compile: capture with Dynamo, generate code with Inductor
# ---------------------------------------------------------------
# ``torch.compile`` returns at once; the work happens on the first call. Dynamo
# captures the forward pass as a graph, and Inductor generates code for it: C++
# on a CPU, which needs a working C++ compiler, or Triton kernels on a CUDA GPU.
# Compiled code is cached on disk, so the first call takes much longer on a
# fresh machine than on one that has compiled this model before. The line
# ``torch.compile, first call`` gives the time on this build.
#
# Depending on what PyTorch has imported before, ``torch.compile`` itself may
# raise a ``torch.jit.script_method`` deprecation warning: it comes from a
# module inside PyTorch, not from your code. If the machine has no working C++
# compiler, the cell prints why compilation failed and the page carries on
# without the compiled model.

# Forget compiled graphs held in memory (Inductor's disk cache stays warm).
torch.compiler.reset()
compiled = call_noting_jit_deprecation(torch.compile, net)
try:
    with compperf.Benchmark(
        "torch.compile, first call", device=device
    ) as first_call:
        compiled_output = compiled(x)
except (
    torch._dynamo.exc.BackendCompilerFailed
) as error:  # e.g. no C++ compiler
    print(
        f"torch.compile failed here, so the page continues without it: "
        f"{type(error).__name__}: {str(error).splitlines()[0]}"
    )
    compiled = None
else:
    torch.testing.assert_close(compiled_output, reference)
    print("torch.compile output matches eager mode")

# %%
# CUDA graphs: ``mode="reduce-overhead"``
# ---------------------------------------
# On a CUDA GPU, ``mode="reduce-overhead"`` records the compiled kernels once as a
# CUDA graph and then replays the whole graph with a single launch. That saves
# the launch cost of each kernel, which can dominate for a model as small as
# this one. On other devices there is no CUDA graph to record: PyTorch skips
# that step and the mode compiles the same code as the default one. This cell
# then says so instead of spending a second compilation on it.

reduce_overhead = None
if device.type == "cuda" and compiled is not None:
    reduce_overhead = torch.compile(net, mode="reduce-overhead")
    with compperf.Benchmark("reduce-overhead, first call", device=device):
        reduce_overhead(x)
    # A CUDA graph reuses its output buffer: clone before the next replay overwrites it.
    torch.testing.assert_close(reduce_overhead(x).clone(), reference)
    print("reduce-overhead output matches eager mode")
elif device.type != "cuda":
    print(
        f"mode='reduce-overhead' skipped: CUDA graphs need CUDA, this page runs on {device}"
    )
else:
    print("mode='reduce-overhead' skipped: torch.compile failed above")

# %%
# torch.export: one whole graph, ready to save
# --------------------------------------------
# ``torch.export.export`` traces the model ahead of time into an
# ``ExportedProgram``: a single graph of ATen operations with no Python left in
# it and no fallback to eager mode. The graph below is what a runtime has to
# execute: three ``linear`` and two ``relu`` operations. ``.module()`` turns the
# program back into a callable module; each call first checks that its inputs
# still fit the shapes the program was exported for. Exporting needs no C++
# compiler.

with compperf.Benchmark("torch.export.export", device=device) as export_time:
    exported = torch.export.export(net, (x,))
print(exported.graph)
exported_module = exported.module()
torch.testing.assert_close(exported_module(x), reference)
print("torch.export output matches eager mode")

# %%
# Time per call
# -------------
# ``compperf.measure`` calls each version after a warm-up call, in blocks long
# enough to hide the clock's overhead, and reports the median time per call and
# the spread between blocks (IQR). The ``vs first`` column compares each
# version with eager mode on this machine.

versions = {"eager": net, "torch.jit.script": scripted}
if compiled is not None:
    versions["torch.compile"] = compiled
if reduce_overhead is not None:
    versions["reduce-overhead"] = reduce_overhead
versions["torch.export"] = exported_module  # the .module() of the program

timings = [
    compperf.measure(
        model, x, device=device, description=name, min_run_time=MIN_RUN_TIME
    )
    for name, model in versions.items()
]
print(
    compperf.compare(
        timings, title=f"512-256-128-2 MLP, batch size {x.shape[0]}"
    )
)

# %%
# The same numbers as a chart: bars are medians, whiskers span the IQR.

fig, ax = plt.subplots(figsize=(7, 3))
medians_us = [m.median * 1e6 for m in timings]
iqrs_us = [m.iqr * 1e6 / 2 for m in timings]
ax.barh(
    [m.description for m in timings],
    medians_us,
    xerr=iqrs_us,
    color="tab:blue",
    capsize=4,
)
ax.invert_yaxis()
ax.set_xlabel("time per call (µs), median ± IQR/2")
ax.set_title(f"MLP forward pass, batch size {x.shape[0]}, on {device}")
fig.tight_layout()
plt.show()

# %%
# Does compiling pay here?
# ------------------------
# Compilation is a one-off cost; a faster call pays it back only after enough
# calls. The cell computes that break-even point from the measurements above:
# the one-off cost divided by the time each call saves. A version that is not
# faster than eager mode never pays back at this batch size.
# At batch size 1, one forward pass is little work: the fixed cost of each call
# (Python, the guards that check a compiled graph still applies, kernel
# launches) can outweigh what compiling saves. The next example measures how
# this changes with the batch size.

eager_time = timings[0].median
one_off = {
    "torch.jit.script": script_seconds,
    "torch.export": export_time.elapsed,
}
if compiled is not None:
    one_off["torch.compile"] = first_call.elapsed
print(
    f"{'version':<18}{'time vs eager':>15}{'one-off cost':>14}{'pays back after':>18}"
)
for m in timings[1:]:
    cost = one_off.get(m.description)
    if cost is None:
        continue
    saved = eager_time - m.median
    pays_back = f"{cost / saved:,.0f} calls" if saved > 0 else "never"
    print(
        f"{m.description:<18}{m.median / eager_time:>14.3g}x{cost:>12.3f} s{pays_back:>18}"
    )
