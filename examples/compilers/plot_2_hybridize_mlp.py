"""
Hybridizing a Sequential model
==============================

You run one multilayer perceptron four ways: eager mode, TorchScript (legacy),
``torch.compile`` and ``torch.export``. You check that all four compute the same
output, see the code and the graph that the compilers produce, and measure what
each version costs to compile. The next page measures what each costs per call.

*Hybridizing*, in Dive into Deep Learning, turns a model that runs line by
line into a graph that a compiler runs in one piece.

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
# The model is the book's 512-256-128-2 perceptron, without gradients; the
# input is a batch of size 1. Recent NVIDIA GPUs can multiply float32 on
# TensorFloat32 (TF32) tensor cores (10 mantissa bits: faster, less exact).
# This chapter keeps full float32, so that eager mode and compiled code
# compare closely, and hides Inductor's warning about it. On a CPU the setting
# changes nothing.

import re
import textwrap
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
        nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
        nn.Linear(128, 2),
    )  # fmt: skip


torch.manual_seed(0)
net = get_net().to(device).requires_grad_(False)
x = torch.randn(1, 512, device=device)
reference = net(x)
print(compperf.tr("eager output: {o}", o=reference))


def synchronize():
    """Wait until the device has finished the work queued so far."""
    if device.type != "cpu":
        torch.accelerator.synchronize(device)


# %%
# TorchScript: the legacy path, and its deprecation
# -------------------------------------------------
# ``torch.jit.script`` compiles the model into TorchScript, a typed subset of
# Python that runs without the interpreter. PyTorch deprecates it, and
# ``compperf.shown_warnings`` prints its ``DeprecationWarning``; below it, the
# compile time. ``torch.testing.assert_close`` raises unless the scripted
# model computes the eager output; every version below is checked so.

start = time.perf_counter()
with compperf.shown_warnings(r"`torch\.jit\."):
    scripted = torch.jit.script(net)
script_seconds = time.perf_counter() - start
print(compperf.tr("torch.jit.script: {t:time}", t=script_seconds))
torch.testing.assert_close(scripted(x), reference)

# %%
# What the first ``torch.compile`` of a process pays
# --------------------------------------------------
# A process's first compile imports Dynamo and Inductor and starts compiler
# workers: a cost of the process, not of a model. The cell pays it on a
# one-line function, and hides the deprecation warning of PyTorch's own
# ``torch.jit.script_method`` that the import triggers. Without a C or C++
# compiler, the line names the error and the page goes on without it.


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
# ``torch.compile`` returns at once. On the first call Dynamo captures the
# forward pass as a graph and Inductor generates code for it, cached on disk:
# a cold compile on a fresh machine takes longer than a warm one (the line
# under the time says which). The cell times that call with a clock read and,
# on a GPU, a synchronization before the second read.
#
# ``run_and_get_code`` (a helper of PyTorch's tests; ``TORCH_LOGS=output_code``
# logs the same) returns the generated code; the last line lists its calls in
# order. ``extern_kernels.addmm`` or ``.mm`` are matrix products handed to a
# library (oneDNN or MKL, cuBLAS on a GPU); the rest are Inductor's kernels.
# On a CPU, C++ loops with OpenMP (``cpp_fused_relu_0``: ``addmm`` already
# adds the bias). On a GPU, Triton kernels that fuse the bias and the ReLU
# (``triton_poi_fused_addmm_relu_0``); on Apple's MPS, Metal shaders.


LAUNCH = (
    r"^\s+(extern_kernels\.\w+|cpp_fused_\w+|triton_\w+"
    r"|generated_kernel_\d+)(?=\(|\.run\()"
)


def launches(code):
    """The library calls and generated kernels that a wrapper runs."""
    return [m.group(1) for m in re.finditer(LAUNCH, code, re.MULTILINE)]


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
    print(textwrap.fill(" -> ".join(launches(generated)), 79))

# %%
# torch.export: one whole graph, ready to save
# --------------------------------------------
# ``torch.export.export`` traces the model ahead of time into an
# ``ExportedProgram``: one graph of ATen operations, no Python left and no
# fallback to eager mode, built without a C++ compiler. Below the export time,
# its operations (the parameters and the input are the graph's inputs): three
# ``linear`` and two ``relu``. ``.module()`` makes the program a callable
# module that checks its inputs' shapes.

start = time.perf_counter()
exported = torch.export.export(net, (x,))
export_seconds = time.perf_counter() - start
print(compperf.tr("torch.export.export: {t:time}", t=export_seconds))
for node in exported.graph.nodes:
    if node.op == "call_function":
        args = ", ".join(map(str, node.args))
        print(f"{node.name} = {node.target}({args})")
exported_module = exported.module()
torch.testing.assert_close(exported_module(x), reference)

# %%
# What each version costs once
# ----------------------------
# The one-off costs above, side by side. How they rank depends on this
# machine and on Inductor's cache: read the bars, not a rule. The next page
# weighs them against what each version saves per call.

costs = {"torch.jit.script": script_seconds}
if compiled is not None:
    costs["torch.compile"] = first_call
costs["torch.export"] = export_seconds

fig, ax = plt.subplots(figsize=(7, 2.2))
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
#   with Inductor on the first call (C++ on a CPU, Triton on a GPU); a
#   process's first compile also pays for imports: time it apart.
# * ``torch.export`` gives one whole graph without Python, ready to save;
#   TorchScript is deprecated. Check every version with ``assert_close``.
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
# **2.** ``torch._dynamo.explain`` runs Dynamo alone and counts its graphs.
# Dynamo cannot know ``h.sum() > 0``, so it ends the graph there (a graph
# break), lets Python branch and captures the rest as a second graph.
# ``torch.export`` allows no break: exporting ``Branchy`` raises
# ``GuardOnDataDependentSymNode``; ``torch.cond`` keeps such a branch in one
# graph.


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
