"""
Saving a model and loading it elsewhere
=======================================

You save one model three ways: as TorchScript, as a ``torch.export`` program and
as a ``state_dict``. Then you load each file in a fresh Python process and see
what each format needs there: your model's code, Python at all, the device
it was saved on, and how long.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the model's code
# --------------------------------
# The model is the 512-256-128-2 perceptron, now as a class of your own,
# ``MLP``. Its code lives in a module file, ``mlp_model.py``, the way it would
# in a project. The page writes that file into a temporary folder, next to
# everything it saves, and imports ``MLP`` from there. The loading processes
# further down get that folder's files but, except for the ``state_dict``, not
# the module.

import importlib.util
import json
import subprocess
import sys
import tempfile
import textwrap
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
reference = net(x)
torch.save(x.cpu(), folder / "input.pt")

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
# compilation.) The two lines below list the devices of the program's weights
# before and after the move.


def devices(program):
    """The devices of an exported program's weights, as a sorted list."""
    return sorted({str(t.device) for t in program.state_dict.values()})


print(compperf.tr("weights before the move: {d}", d=devices(exported)))
exported = move_to_device_pass(exported, "cpu")
print(compperf.tr("weights after the move: {d}", d=devices(exported)))
torch.export.save(exported, folder / "mlp.pt2")

# %%
# What is on disk
# ---------------
# The book lists the files with ``ls -lh``; here Python lists them itself, with
# their sizes. Compare each size with the size of the weights alone, printed
# after the files: the weights make up most of every file. The last line is
# the size of the example input. An exported
# program also keeps the example inputs it was exported with, so export with a
# small example to keep the ``.pt2`` file small.


sizes = {path.name: path.stat().st_size for path in sorted(folder.iterdir())}
for name, size in sizes.items():
    print(compperf.tr("{f}: {b:bytes}", f=name, b=size))
weights = sum(t.numel() * t.element_size() for t in net.state_dict().values())
print(compperf.tr("the weights alone (float32): {b:bytes}", b=weights))
input_size = x.numel() * x.element_size()
print(compperf.tr("the example input: {b:bytes}", b=input_size))

# %%
# Loading in a fresh process
# --------------------------
# Each loader below runs in a new Python process: nothing of this page is in
# memory there. Its working folder is an empty folder, so ``mlp_model`` is not
# importable unless the loader puts the model's folder on its path, which only
# the ``state_dict`` loader does. The three loaders show the difference in one
# line each:
#
# * TorchScript carries its code. ``map_location="cpu"`` moves every tensor to
#   the CPU, so a model saved on a GPU loads on a machine without one.
# * An exported program carries its graph; ``.module()`` makes it callable.
#   Its weights load on the device they were saved from, here the CPU.
# * A ``state_dict`` carries names and tensors only; you need ``MLP`` to build
#   the model before you can fill it. ``map_location`` works as for
#   TorchScript.
#
# Each process sends back the output it computed, and
# ``torch.testing.assert_close`` checks it against the original model's: it
# raises if they differ, so the page goes on only when every fresh process
# computed the same output. A deprecation warning a loader raised is printed
# as it came, after the format's name.

LOADERS = {
    "TorchScript": 'model = torch.jit.load(path, map_location="cpu")',
    "torch.export": "model = torch.export.load(path).module()",
    "state_dict": textwrap.dedent("""\
        sys.path.insert(0, str(Path(path).parent))  # the folder with mlp_model.py
        from mlp_model import MLP
        model = MLP()
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))"""),
}
FILES = {
    "TorchScript": "mlp.pt",
    "torch.export": "mlp.pt2",
    "state_dict": "mlp_state_dict.pt",
}

# The frame around each loader: it times the load, runs the model and reports
# as JSON.
CHILD = """\
import importlib.util, json, re, sys, time, warnings
from pathlib import Path
import torch

path, input_path, output_path = sys.argv[1:4]
importable_before = importlib.util.find_spec("mlp_model") is not None
start = time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.filterwarnings("always", r"`torch\\.jit\\.", DeprecationWarning)
{loader}
load_seconds = time.perf_counter() - start
deprecations = []
for w in caught:
    if w.category is DeprecationWarning and "torch.jit" in str(w.message):
        deprecations.append(str(w.message))
    else:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
weight = next(model.parameters())
output = model(torch.load(input_path).to(weight.device))
torch.save(output.cpu(), output_path)
print(json.dumps({{"load_seconds": load_seconds, "device": str(weight.device),
                  "mlp_model_importable_at_start": importable_before,
                  "mlp_model_imported": "mlp_model" in sys.modules,
                  "deprecations": sorted(set(deprecations))}}))
"""


def load_in_fresh_process(kind):
    """Run the loader for ``kind`` in a new Python process and return its report."""
    code = CHILD.format(loader=textwrap.indent(LOADERS[kind], "    "))
    output_path = folder / f"output_{FILES[kind]}"
    with tempfile.TemporaryDirectory() as empty:
        timer = compperf.Timer()
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                str(folder / FILES[kind]),
                str(folder / "input.pt"),
                str(output_path),
            ],
            cwd=empty,
            capture_output=True,
            text=True,
            check=False,
        )
        process_seconds = timer.stop()
    if result.returncode != 0:
        raise RuntimeError(
            f"loading {kind} in a fresh process failed:\n{result.stderr}"
        )
    report = json.loads(result.stdout.splitlines()[-1])
    report["process_seconds"] = process_seconds
    report["output"] = torch.load(output_path)
    output_path.unlink()
    return report


reports = {kind: load_in_fresh_process(kind) for kind in LOADERS}
for kind, report in reports.items():
    torch.testing.assert_close(report["output"], reference.cpu())
    for message in report["deprecations"]:
        print(f"{kind}: DeprecationWarning: {message}")

# %%
# What each format needs
# ----------------------
# The table puts the measured facts side by side: the file's size, whether
# the loading process imported the model's code (it starts out unimportable in
# every process; only the ``state_dict`` loader fetches it), the device the
# loaded model ran on, the load time and the time of the whole process, which
# includes starting Python and importing torch. The load time is one cold load:
# it also pays for the parts of PyTorch that the loader imports on first use,
# so expect it to vary from run to run and from format to format.
#
# What the files need beyond that is a property of the formats:
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

with compperf.i18n.parts():
    size, imported = compperf.tr("size"), compperf.tr("imported mlp_model")
    ran_on, load = compperf.tr("ran on"), compperf.tr("load")
    process, said = compperf.tr("process"), {True: compperf.tr("yes")}
    said[False] = compperf.tr("no")
rows = []
for kind, report in reports.items():
    assert not report["mlp_model_importable_at_start"], "code seen at start"
    rows.append(
        [
            kind,
            compperf.units.bytes_((folder / FILES[kind]).stat().st_size),
            said[report["mlp_model_imported"]],
            report["device"],
            compperf.units.seconds(report["load_seconds"]),
            compperf.units.seconds(report["process_seconds"]),
        ]
    )
header = ["", size, imported, ran_on, load, process]
print(compperf.i18n.table(header, rows))

# %%
# The sizes and load times as a chart; the formats' names, which are code,
# label the bars in a monospace font.

kinds = list(reports)
fig, (size_ax, time_ax) = plt.subplots(
    2, 1, figsize=(7, 4.5), layout="constrained"
)
size_ax.barh(kinds, [(folder / FILES[k]).stat().st_size / 1024 for k in kinds])
size_ax.axvline(
    weights / 1024,
    color="gray",
    linestyle="--",
    label=compperf.tr("weights alone"),
)
size_ax.set(
    xlabel=compperf.tr("file size (KiB)"), title=compperf.tr("size on disk")
)
fig.legend(loc="outside upper center")
time_ax.barh(
    kinds,
    [reports[k]["load_seconds"] * 1e3 for k in kinds],
    color="tab:orange",
)
time_ax.set(
    xlabel=compperf.tr("load time in a fresh process (ms)"),
    title=compperf.tr("one cold load"),
)
for ax in (size_ax, time_ax):
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelfontfamily="monospace")
plt.show()

# %%
# Clean up
# --------
# The files lived in a temporary folder; removing it leaves nothing behind.
# To keep the whole model rather than its weights, ``torch.save(net)`` pickles
# the module object itself. That file refers to ``MLP`` by name, so the loading
# side needs your code just like a ``state_dict`` does, and ``torch.load``
# refuses it unless you pass ``weights_only=False`` and trust the file.

workdir.cleanup()

# %%
# Summary
# -------
# * TorchScript files carry code and weights and load without Python, but
#   ``torch.jit`` is deprecated.
# * A ``.pt2`` from ``torch.export`` carries a graph and its weights; the
#   weights load on the device they were saved from, so move the program
#   with ``move_to_device_pass`` before you save it for another device.
# * A ``state_dict`` carries weights only: the loading side needs your code.
# * Most of every file is weights; a ``.pt2`` also keeps its example input.
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
inputs, outputs = batch_of_8.shape[0], output.shape[0]
print(
    compperf.tr("dynamic batch: {i} inputs, {o} outputs", i=inputs, o=outputs)
)

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
