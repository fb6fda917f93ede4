"""
Loading a saved model elsewhere
===============================

You load each file that the previous page saves in a fresh Python process and
see what it needs there: your model's code, Python at all, the device it was
saved on, and how long.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the saved files
# -------------------------------
# The cell saves the 512-256-128-2 perceptron as
# :doc:`/auto_examples/compilers/plot_4_serialization` does and explains:
# TorchScript, a ``torch.export`` program moved to the CPU, and a
# ``state_dict``. The model's class, ``MLP``, lives in ``mlp_model.py`` in
# the same temporary folder, with the example input. The cell hides the
# TorchScript deprecation warnings, which that page shows.

import importlib.util
import json
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch.export.passes import move_to_device_pass

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

MODEL_CODE = """\
from torch import nn

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU())
        self.output = nn.Linear(128, 2)

    def forward(self, x):
        return self.output(self.hidden(x))
"""

workdir = tempfile.TemporaryDirectory(prefix="compperf-loading-")
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
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    torch.jit.save(torch.jit.script(net), folder / "mlp.pt")
exported = move_to_device_pass(torch.export.export(net, (x,)), "cpu")
torch.export.save(exported, folder / "mlp.pt2")
torch.save(net.state_dict(), folder / "mlp_state_dict.pt")

# %%
# Loading in a fresh process
# --------------------------
# Each loader below runs in a new Python process, in an empty working folder,
# so ``mlp_model`` is not importable unless the loader puts the model's folder
# on its path, which only the ``state_dict`` loader does:
#
# * TorchScript carries its code. ``map_location="cpu"`` moves every tensor to
#   the CPU, so a model saved on a GPU loads on a machine without one.
# * An exported program carries its graph; ``.module()`` makes it callable.
#   Its weights load on the device they were saved from, here the CPU.
# * A ``state_dict`` carries names and tensors only; you need ``MLP`` to build
#   the model before you can fill it.
#
# Each process sends back the output it computed, and
# ``torch.testing.assert_close`` raises if it differs from the original
# model's, so the page goes on only when every fresh process computed the same
# output. A ``torch.jit`` deprecation warning a loader raised is printed after
# the format's name.

LOADERS = {
    "TorchScript": 'model = torch.jit.load(path, map_location="cpu")',
    "torch.export": "model = torch.export.load(path).module()",
    "state_dict": textwrap.dedent("""\
        sys.path.insert(0, str(Path(path).parent))  # the folder of mlp_model
        from mlp_model import MLP
        model = MLP()
        model.load_state_dict(torch.load(path, map_location="cpu"))"""),
}
FILES = {
    "TorchScript": "mlp.pt",
    "torch.export": "mlp.pt2",
    "state_dict": "mlp_state_dict.pt",
}

# The frame around each loader: it times the load, runs the model and reports
# as JSON.
CHILD = """\
import importlib.util, json, sys, time, warnings
from pathlib import Path
import torch
path, input_path, output_path = sys.argv[1:4]
importable_at_start = importlib.util.find_spec("mlp_model") is not None
start = time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", DeprecationWarning)
{loader}
load_seconds = time.perf_counter() - start
weight = next(model.parameters())
output = model(torch.load(input_path).to(weight.device))
torch.save(output.cpu(), output_path)
jit = {{str(w.message) for w in caught if "torch.jit" in str(w.message)}}
print(json.dumps({{
    "load_seconds": load_seconds, "device": str(weight.device),
    "importable_at_start": importable_at_start,
    "imported": "mlp_model" in sys.modules, "deprecations": sorted(jit),
}}))
"""


def load_in_fresh_process(loader, file):
    """Run ``loader`` on ``file`` in a new Python process; return its report."""
    code = CHILD.format(loader=textwrap.indent(loader, "    "))
    output_path = folder / f"output_{file}"
    paths = (folder / file, folder / "input.pt", output_path)
    with tempfile.TemporaryDirectory() as empty:
        timer = compperf.Timer()
        result = subprocess.run(
            [sys.executable, "-c", code, *map(str, paths)],
            cwd=empty,
            capture_output=True,
            text=True,
            check=False,
        )
        process_seconds = timer.stop()
    if result.returncode != 0:
        raise RuntimeError(f"loading {file} failed:\n{result.stderr}")
    report = json.loads(result.stdout.splitlines()[-1])
    report["process_seconds"] = process_seconds
    report["output"] = torch.load(output_path)
    output_path.unlink()
    return report


reports = {k: load_in_fresh_process(LOADERS[k], FILES[k]) for k in LOADERS}
for kind, report in reports.items():
    torch.testing.assert_close(report["output"], reference.cpu())
    for message in report["deprecations"]:
        print(f"{kind}: DeprecationWarning: {message}")

# %%
# What each format needs
# ----------------------
# The table puts the measured facts side by side: the file's size, whether
# the loading process imported the model's code, the device the loaded model
# ran on, the load time and the time of the whole process, which includes
# starting Python and importing torch. The load time is one cold load: it also pays for the parts
# of PyTorch that the loader imports on first use, so expect it to vary from
# run to run and from format to format.
#
# Whether a file needs Python to load is a property of its format: see the
# table of :doc:`/auto_examples/compilers/plot_4_serialization`.

with compperf.i18n.parts():
    size, imported = compperf.tr("size"), compperf.tr("imported mlp_model")
    ran_on, load = compperf.tr("ran on"), compperf.tr("load")
    process, said = compperf.tr("process"), {True: compperf.tr("yes")}
    said[False] = compperf.tr("no")
rows = []
for kind, report in reports.items():
    assert not report["importable_at_start"], "mlp_model importable at start"
    rows.append(
        [
            kind,
            compperf.units.bytes_((folder / FILES[kind]).stat().st_size),
            said[report["imported"]],
            report["device"],
            compperf.units.seconds(report["load_seconds"]),
            compperf.units.seconds(report["process_seconds"]),
        ]
    )
header = ["", size, imported, ran_on, load, process]
print(compperf.i18n.table(header, rows))

# %%
# The same times as a chart: each whole process (blue), with the load inside
# it (orange).

kinds = list(reports)
fig, ax = plt.subplots(figsize=(7, 2.5), layout="constrained")
ax.barh(
    kinds,
    [reports[k]["process_seconds"] for k in kinds],
    label=compperf.tr("whole process"),
)
ax.barh(
    kinds,
    [reports[k]["load_seconds"] for k in kinds],
    label=compperf.tr("load"),
)
ax.set(
    xlabel=compperf.tr("seconds"), title=compperf.tr("time in a fresh process")
)
fig.legend(loc="outside upper center", ncols=2)
ax.invert_yaxis()
ax.tick_params(axis="y", labelfontfamily="monospace")
plt.show()

# %%
# Summary
# -------
# * A fresh process loads TorchScript and ``.pt2`` files without your code;
#   a ``state_dict`` needs ``MLP`` importable there.
# * ``map_location`` moves TorchScript and ``state_dict`` tensors on load; a
#   ``.pt2`` loads on the device it was saved from.
# * A fresh process also pays for starting Python and importing torch, in
#   every format.
#
# Exercises
# ---------
# 1. Load the ``state_dict`` without the line that puts the model's folder on
#    the path. What does the fresh process say?
# 2. How long does a fresh process take that only imports torch? Compare it
#    with the process column of the table.
#
# Answers
# -------
# **1.** It cannot import ``mlp_model``, so it fails before it reads the file:
# the last line of its error is below.

without_path = LOADERS["state_dict"].split("\n", 1)[1]  # the other lines
try:
    load_in_fresh_process(without_path, FILES["state_dict"])
except RuntimeError as error:
    print(str(error).strip().splitlines()[-1])

# %%
# **2.** Compare the line below with the process column of the table: the
# rest of each process is the load, one call of the model and its output.

timer = compperf.Timer()
subprocess.run([sys.executable, "-c", "import torch"], check=True)
print(
    compperf.tr("a process that only imports torch: {t:time}", t=timer.stop())
)
workdir.cleanup()  # The files lived in a temporary folder: remove it.
