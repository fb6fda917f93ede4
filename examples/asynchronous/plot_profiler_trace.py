"""
The profiler's view of asynchronous work
========================================

You record the matrix-product loop with ``torch.profiler`` and compare the time
the host spends launching each product with the time the device spends
computing it. You also get the trace file to open in a trace viewer.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the outputs on this page.
import base64
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Recording
# ---------
# The profiler always records what the host does. It records kernels on the
# device only for CUDA; on Apple MPS and on a CPU you see the host side alone.
# The loop runs once before recording, as a warm-up, and the recording ends
# with a synchronization so that every queued kernel is in the trace. The
# line below names the activities the profiler records on this device.
size = {"cpu": 256, "mps": 2048, "cuda": 4096}[device.type]
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    size = 64
# sphinx_gallery_end_ignore
steps = 10
a = torch.randn(size, size, device=device)


def matmuls():
    for _ in range(steps):
        b = torch.mm(a, a)
    return b


records_device = (
    device.type == "cuda"
    and ProfilerActivity.CUDA in torch.profiler.supported_activities()
)
activities = [ProfilerActivity.CPU] + (
    [ProfilerActivity.CUDA] if records_device else []
)
print(compperf.tr("recording: {a}", a=", ".join(x.name for x in activities)))

matmuls()
compperf.synchronize(device)
with profile(activities=activities) as prof:
    matmuls()
    compperf.synchronize(device)

# %%
# The profiler's table
# --------------------
# ``key_averages()`` groups the recorded events by operator. The ``Self CPU``
# column is time spent on the host in that operator itself. With CUDA, the
# device columns show the time the kernels ran on the GPU.
sort_by = "self_device_time_total" if records_device else "self_cpu_time_total"
print(prof.key_averages().table(sort_by=sort_by, row_limit=8))

# %%
# Host time against device time
# -----------------------------
# Each ``aten::mm`` event on the host covers one launch (on a CPU: one whole
# product). Each kernel event on the device covers one product's computation.
# The two lines below count the events of each side (the host's ``aten::mm``
# calls, the device's kernels) and add up their time; on a CPU no device
# events are recorded, because each ``aten::mm`` call does the
# product itself, so the host time is the computation.
#
# Where kernels were recorded, compperf's verdict compares, product by product,
# the launch on the host with its kernels on the device. Its line prints the
# claim "device computed longer than the host launched", its outcome, and the
# interval of launch time over kernel time, against the threshold 1: *yes*
# when the whole interval lies below 1 (the host was done long before the
# device, free to run ahead), *no* when it lies at 1 or above (the host spent
# at least as long launching as the device computed), *unclear* otherwise.
events = prof.events()
host = [
    e
    for e in events
    if e.name == "aten::mm" and e.device_type == DeviceType.CPU
]
kernels = [e for e in events if e.device_type != DeviceType.CPU]
host_time = sum(e.time_range.elapsed_us() for e in host) * 1e-6
kernel_time = sum(e.time_range.elapsed_us() for e in kernels) * 1e-6
print(compperf.tr("host, aten::mm ×{n}: {t:time}", n=len(host), t=host_time))
print(compperf.tr("kernels ×{n}: {t:time}", n=len(kernels), t=kernel_time))
if kernels:
    # One ratio per product (its launch over its kernels), decided by compperf:
    # the device computed longer when the whole interval lies below 1.
    by_start = sorted(kernels, key=lambda e: e.time_range.start)
    each = max(len(kernels) // len(host), 1)  # kernels per launch
    launches = sorted(host, key=lambda e: e.time_range.start)
    ratio = compperf.Ratio.from_rounds(
        "launch",
        "kernels",
        [
            e.time_range.elapsed_us()
            / max(
                sum(
                    k.time_range.elapsed_us()
                    for k in by_start[i * each :][:each]
                ),
                1e-3,
            )
            for i, e in enumerate(launches)
        ],
    )
    device_longer = compperf.conclude(
        compperf.tr("device computed longer than the host launched"),
        str(device),
        ratio.low,
        ratio.high,
        below=1.0,
    )
    print(device_longer)

# %%
# The timeline
# ------------
# The figure draws each recorded interval as a bar on a common clock: launches
# on the host row, kernels on the device row (CUDA only). Where the device
# works asynchronously, look for the host bars ending early while the device
# bars continue.
fig, ax = plt.subplots(figsize=(7, 2.6))
origin = min(e.time_range.start for e in host + kernels)
rows = [
    (compperf.tr("host: aten::mm"), host, "C0"),
    (compperf.tr("device: kernels"), kernels, "C1"),
]
for row, (_, row_events, colour) in enumerate(rows):
    spans = [
        ((e.time_range.start - origin) / 1e3, e.time_range.elapsed_us() / 1e3)
        for e in row_events
    ]
    ax.broken_barh(
        spans,
        (row - 0.4, 0.8),
        facecolors=colour,
        edgecolors="white",
        linewidth=0.5,
    )
if not kernels:
    ax.text(
        0.5,
        1,
        compperf.tr("not recorded on {device}", device=device),
        ha="center",
        transform=ax.get_yaxis_transform(),
    )
ax.set_yticks(range(len(rows)), [label for label, _, _ in rows])
ax.set_ylim(-0.6, len(rows) - 0.4)
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time since the first event (ms)"))
ax.set_title(compperf.tr("Launches and kernels on one clock"))
fig.tight_layout()
plt.show()

# %%
# The trace file
# --------------
# The profiler writes the whole recording as a Chrome trace (JSON). Open it in
# https://ui.perfetto.dev or in ``chrome://tracing`` to zoom into every event.
# It goes to a new temporary folder. On the web page, the link below the path
# downloads the copy made when the page was built.
output_dir = Path(tempfile.mkdtemp(prefix="compperf-"))
# sphinx_gallery_start_ignore
# benchmarks/gpu/run_asynchronous.py keeps the trace; readers never see this block.
if os.environ.get("COMPPERF_OUTPUT_DIR"):
    output_dir = Path(os.environ["COMPPERF_OUTPUT_DIR"])
    output_dir.mkdir(parents=True, exist_ok=True)
# sphinx_gallery_end_ignore
trace_path = output_dir / "profiler_trace.json"
prof.export_chrome_trace(str(trace_path))
nbytes = trace_path.stat().st_size
print(compperf.tr("trace: {f}, {b:bytes}", f=trace_path.name, b=nbytes))


class Download:
    """A file as a download link on a web page, and as its path in a terminal."""

    def __init__(self, path, mime="application/json"):
        self.path, self.mime = path, mime

    def _repr_html_(self):
        data = base64.b64encode(self.path.read_bytes()).decode("ascii")
        size = f"{self.path.stat().st_size / 1024:.0f} KiB"
        return f'<p><a download="{self.path.name}" href="data:{self.mime};base64,{data}">{self.path.name}</a> ({size})</p>'

    def __repr__(self):
        return str(self.path)


Download(trace_path)

# %%
# Summary
# -------
# * ``torch.profiler.profile`` records the host's operators on every device,
#   and the device's kernels on CUDA.
# * On a GPU, compare the host's launch time with the device's kernel time:
#   when the kernels take longer, the host is free to run ahead.
# * ``export_chrome_trace`` writes a timeline that Perfetto or
#   ``chrome://tracing`` shows event by event.
#
# Exercises
# ---------
# 1. Read one value back after every product (``b[0, 0].item()`` in the
#    loop) and profile again. Which new operators appear, and what do they do
#    on a GPU?
# 2. In the trace of this page, find the first ``aten::mm`` on the host and
#    its kernel on the device (CUDA only). Which starts first, and why?
#
# Answers
# -------
# 1. The code below profiles that loop on this page's device and lists the
#    operators that the reads added.


def matmuls_reading_back():
    for _ in range(steps):
        b = torch.mm(a, a)
        b[0, 0].item()
    return b


matmuls_reading_back()
with profile(activities=activities) as reading_prof:
    matmuls_reading_back()
    compperf.synchronize(device)
before = {e.name for e in prof.events()}
added = sorted({e.name for e in reading_prof.events()} - before)
names = ", ".join(added) or "-"
print(compperf.tr("operators added by the reads: {ops}", ops=names))

# %%
# ``aten::item`` calls ``aten::_local_scalar_dense``, which copies the value to
# the host. On a GPU that copy waits for the product (look for
# ``cudaMemcpyAsync`` followed by ``cudaStreamSynchronize`` in the trace), so
# the host can no longer run ahead: each launch now waits for the previous
# product.
#
# 2. The host event starts first: the host launches the kernel, and the device
#    runs it later, once it reaches that kernel in the stream's queue.
