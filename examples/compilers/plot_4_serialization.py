"""
Saving a model three ways
=========================

You save one model as TorchScript, as a ``torch.export`` program and as a
``state_dict``, and see what each file holds: code, a graph or weights alone,
the device of the weights, and the example input.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the model's code
# --------------------------------
# The model is the 512-256-128-2 perceptron, now as a class of your own,
# ``MLP``. Its code lives in a module file, ``mlp_model.py``, the way it would
# in a project. The page writes that file into a temporary folder, next to
# everything it saves, and imports ``MLP`` from there.
# :doc:`/auto_examples/compilers/plot_4b_loading_elsewhere` loads the saved
# files in fresh Python processes and shows what each one needs there.

import importlib.util
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch.export.passes import move_to_device_pass

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

MODEL_CODE = '''\
from torch import nn


class MLP(nn.Module):
    """The 512-256-128-2 multilayer perceptron."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU())
        self.output = nn.Linear(128, 2)

    def forward(self, x):
        return self.output(self.hidden(x))
'''

workdir = tempfile.TemporaryDirectory(prefix="compperf-serialization-")
folder = Path(workdir.name)
(folder / "mlp_model.py").write_text(MODEL_CODE, encoding="utf-8")
spec = importlib.util.spec_from_file_location(
    "mlp_model", folder / "mlp_model.py"
)
mlp_model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mlp_model)

torch.manual_seed(0)
net = mlp_model.MLP().to(device).requires_grad_(False)
x = torch.randn(4, 512, device=device)

# %%
# Three ways to save
# ------------------
# * **TorchScript** (``torch.jit.save``) stores the compiled code and the
#   weights in one zip archive. It is the legacy format: PyTorch deprecates the
#   whole ``torch.jit`` family, and the cell prints the warning it raises.
# * **torch.export** (``torch.export.save``) stores an ``ExportedProgram``, the
#   graph of ATen operations together with the weights, in a ``.pt2`` archive.
# * **state_dict** (``torch.save(net.state_dict())``) stores only the weights,
#   by name. Whoever loads them must build the model from its code first.
#
# What loading each file needs is a property of its format:
#
# ==========================  ===============  ================================
# Format                      Needs your code  Needs Python to load
# ==========================  ===============  ================================
# TorchScript ``.pt``         no               no: C++ loads it with LibTorch
# ``torch.export`` ``.pt2``   no               yes, or AOTInductor for C++
# ``state_dict``              yes              yes
# ==========================  ===============  ================================
#
# LibTorch's ``torch::jit::load`` reads TorchScript from C++. AOTInductor
# (``torch._inductor.aoti_compile_and_package``) compiles an exported program
# into a package that C++ runs without Python.
# :doc:`/auto_examples/compilers/plot_4b_loading_elsewhere` checks the first
# column in fresh processes.

with compperf.shown_warnings(r"`torch\.jit\."):
    torch.jit.save(torch.jit.script(net), folder / "mlp.pt")
exported = torch.export.export(net, (x,))
torch.save(net.state_dict(), folder / "mlp_state_dict.pt")

# %%
# A ``.pt2`` remembers the device
# -------------------------------
# Every file stores each tensor together with its device. TorchScript and
# ``torch.load`` take ``map_location`` to put the tensors elsewhere when they
# load. ``torch.export.load`` has no such argument: it puts each weight back
# on the device it was saved from, so a program exported from a model on a GPU
# needs a GPU to load. The graph may also name a device itself, for a tensor
# it creates. ``torch.export.passes.move_to_device_pass`` moves the weights,
# the example inputs and those devices in the graph; the cell moves the
# program to the CPU before saving it, so that it loads on any machine. (A
# program compiled ahead of time with AOTInductor is different: its kernels
# were generated for one kind of device, and another device needs a new
# compilation.) The line below lists the devices of the program's weights
# before and after the move.


def devices(program):
    """The devices of an exported program's weights, as a sorted list."""
    return sorted({str(t.device) for t in program.state_dict.values()})


was = devices(exported)
exported = move_to_device_pass(exported, "cpu")
now = devices(exported)
print(compperf.tr("weights: {w} before the move, {n} after", w=was, n=now))
torch.export.save(exported, folder / "mlp.pt2")

# %%
# What is on disk
# ---------------
# Dive into Deep Learning lists the files with ``ls -lh``; here Python lists
# them itself, with their sizes. Compare each size with the size of the
# weights alone, printed after the files: the weights make up most of every
# file. The last line is the size of the example input. An exported program
# also keeps the example inputs it was exported with, so export with a small
# example to keep the ``.pt2`` file small.

sizes = {path.name: path.stat().st_size for path in sorted(folder.iterdir())}
for name, size in sizes.items():
    print(compperf.tr("{f}: {b:bytes}", f=name, b=size))
weights = sum(t.numel() * t.element_size() for t in net.state_dict().values())
print(compperf.tr("the weights alone (float32): {b:bytes}", b=weights))
input_size = x.numel() * x.element_size()
print(compperf.tr("the example input: {b:bytes}", b=input_size))

# %%
# The sizes as a chart, against the size of the weights alone (the dashed
# line); the formats' names, which are code, label the bars in a monospace
# font.

FILES = {
    "TorchScript": "mlp.pt",
    "torch.export": "mlp.pt2",
    "state_dict": "mlp_state_dict.pt",
}
fig, ax = plt.subplots(figsize=(7, 2.5), layout="constrained")
ax.barh(list(FILES), [sizes[name] / 1024 for name in FILES.values()])
ax.axvline(
    weights / 1024,
    color="gray",
    linestyle="--",
    label=compperf.tr("weights alone"),
)
ax.set(
    xlabel=compperf.tr("file size (KiB)"), title=compperf.tr("size on disk")
)
fig.legend(loc="outside upper center")
ax.invert_yaxis()
ax.tick_params(axis="y", labelfontfamily="monospace")
plt.show()

# %%
# Clean up
# --------
# The files lived in a temporary folder; removing it leaves nothing behind.
# To keep the whole model rather than its weights, ``torch.save(net)`` pickles
# the module object itself. That file refers to ``MLP`` by name, so the loading
# side needs your code just like a ``state_dict`` does.

workdir.cleanup()

# %%
# Summary
# -------
# * TorchScript files carry code and weights, but ``torch.jit`` is deprecated.
# * A ``.pt2`` from ``torch.export`` carries a graph and its weights; the
#   weights stay on the device they were saved from, so move the program
#   with ``move_to_device_pass`` before you save it for another device.
# * A ``state_dict`` carries weights only, by name.
# * Only TorchScript loads in C++ as it is; an exported program needs
#   AOTInductor for that.
# * Most of every file is weights; a ``.pt2`` also keeps its example input.
#
# :doc:`/auto_examples/compilers/plot_4b_loading_elsewhere` loads each file
# in a fresh process.
#
# Exercises
# ---------
# 1. Call the exported program with a batch of 8 examples. What happens, and
#    how do you export a program that accepts any batch size?
# 2. Move an exported program to another device. On a machine without a GPU,
#    try PyTorch's ``meta`` device, which keeps shapes but no data.
# 3. Why does ``torch.load`` refuse a pickled module unless you pass
#    ``weights_only=False``?
#
# Answers
# -------
# **1.** The program was exported with a batch of 4, so its batch dimension
# is fixed: ``.module()`` checks the input and raises. Declare the dimension
# dynamic with ``dynamic_shapes`` and one program accepts every batch size.

batch_of_8 = torch.randn(8, 512, device=device)
try:
    exported.module()(batch_of_8.cpu())  # The saved program is on the CPU.
except (AssertionError, RuntimeError, ValueError) as error:
    print(f"{type(error).__name__}: {str(error).splitlines()[0]}")
dynamic = torch.export.export(
    net, (x,), dynamic_shapes=({0: torch.export.Dim("batch")},)
)
output = dynamic.module()(batch_of_8)
i, o = len(batch_of_8), len(output)
print(compperf.tr("dynamic batch: {i} inputs, {o} outputs", i=i, o=o))

# %%
# **2.** ``move_to_device_pass`` works on any program; on the ``meta`` device
# the weights keep their shapes but hold no data.

on_meta = move_to_device_pass(torch.export.export(net, (x,)), "meta")
print(compperf.tr("weights of the moved program: {d}", d=devices(on_meta)))

# %%
# **3.** Unpickling can run arbitrary code, and a pickled module names
# classes to import. ``weights_only=True``, the default, loads only tensors
# and plain containers; a whole module needs the full unpickler, which you
# should use only on files you trust.
