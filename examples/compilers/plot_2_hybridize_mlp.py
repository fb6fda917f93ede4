"""
Hybridizing a Sequential model
==============================

You run one multilayer perceptron four ways: eager mode, TorchScript (legacy),
``torch.compile`` and ``torch.export``. You check that all four compute the same
output, see the code and the graph that the compilers produce, and measure what
each version costs to compile. The next page measures what each costs per call.

*Hybridizing* is the word of Dive into Deep Learning, written for MXNet, for
turning a model that runs line by line into a graph that a compiler runs in one
piece. PyTorch has no function of that name: ``torch.compile``,
``torch.export`` and TorchScript are its ways of doing it.

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
# bits: faster, less exact. Every compiling page of this chapter keeps full
# float32 (``torch.set_float32_matmul_precision("highest")``, PyTorch's
# default), so that eager mode and compiled code can be compared closely, and
# hides exactly Inductor's warning that TF32 is not enabled, since the choice
# is made. On a CPU the setting changes nothing.

import re
import time
import warnings

import matplotlib.pyplot as plt
import torch
from torch import nn

import compperf

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
# and says so with a ``DeprecationWarning``, which ``compperf.shown_warnings``
# prints (other warnings pass through untouched). Below it you see how long
# the compilation took. ``torch.testing.assert_close`` then checks that the
# scripted model computes the eager output: it raises an error if not, so the
# page goes on only with matching outputs. Every version below is checked the
# same way.

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
# What each version costs once
# ----------------------------
# The chart sets the one-off costs printed above side by side, each bar
# labelled with its time: a version pays its cost once, before its first
# result. How they rank depends on this machine and on Inductor's cache (the
# line under the first call's time): read the bars, not a rule. The next page
# weighs these costs against the time each version saves per call.

costs = {"torch.jit.script": script_seconds}
if compiled is not None:
    costs["torch.compile"] = first_call
costs["torch.export"] = export_seconds

fig, ax = plt.subplots(figsize=(7, 2.5))
bars = ax.barh(list(costs), list(costs.values()), color="tab:orange")
ax.bar_label(
    bars,
    labels=[compperf.tr("{t:time}", t=t) for t in costs.values()],
    padding=3,
)
ax.invert_yaxis()
for label in ax.get_yticklabels():  # the versions' names are code
    label.set_fontfamily("monospace")
ax.set_xlim(0, 1.3 * max(costs.values()))
ax.set_xlabel(compperf.tr("seconds, paid once per version"))
ax.set_title(compperf.tr("What each version costs to compile, MLP"))
fig.tight_layout()
plt.show()

# %%
# Summary
# -------
# * ``torch.compile`` captures the forward pass with Dynamo and generates code
#   with Inductor on the first call: C++ with OpenMP on a CPU, Triton kernels
#   on a GPU, around library calls for the matrix products.
# * The first compilation in a process also pays for imports and worker
#   start-up; time it apart from the model.
# * ``torch.export`` gives one whole graph without Python, ready to save;
#   TorchScript is deprecated.
# * Check every version against eager mode (``torch.testing.assert_close``)
#   before you time it.
#
# Exercises
# ---------
# 1. Hybridize another model from an earlier chapter. What changes?
# 2. Print a tensor's value inside ``forward`` (``print(h.sum().item())``) or
#    branch on it (``if h.sum() > 0:``), then run the model through
#    ``torch.compile`` and ``torch.export``. What does each one do?
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
