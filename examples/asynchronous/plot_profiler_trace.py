"""
The profiler's view of asynchronous work
========================================

You record the matrix-product loop with ``torch.profiler`` and compare the time
the host spends launching each product with the time the device spends
computing it. You also get the trace file to open in a trace viewer.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the outputs on this page.
import base64
import os
import tempfile
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import compperf

# Set by the tests, never by the docs build.
FAST = os.environ.get("COMPPERF_FAST") == "1"
device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Recording
# ---------
# The profiler always records what the host does. It records kernels on the
# device only for CUDA; on Apple MPS and on a CPU you see the host side alone.
# The loop runs once before recording, as a warm-up, and the recording ends
# with a synchronization so that every queued kernel is in the trace.
size = {"cpu": 256, "mps": 2048, "cuda": 4096}[device.type]
if FAST:
    size = 64
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
print(
    f"{steps} products of {size} x {size} on {device}; recording {[x.name for x in activities]}"
)

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
# The sentence after the totals is chosen from what was recorded.
events = prof.events()
host = [
    e
    for e in events
    if e.name == "aten::mm" and e.device_type == DeviceType.CPU
]
kernels = [e for e in events if e.device_type != DeviceType.CPU]
host_time = sum(e.time_range.elapsed_us() for e in host) * 1e-6
kernel_time = sum(e.time_range.elapsed_us() for e in kernels) * 1e-6
print(
    f"host: {len(host)} aten::mm calls, {compperf.format_time(host_time)} in total"
)
if kernels:
    print(
        f"device: {len(kernels)} kernels, {compperf.format_time(kernel_time)} in total"
    )
    if kernel_time > host_time:
        print(
            textwrap.fill(
                f"The device computed for {kernel_time / host_time:.1f} times as long as the host "
                "spent launching: the host was done long before the device."
            )
        )
    else:
        print(
            "The host spent at least as long launching as the device computed."
        )
else:
    print(
        textwrap.fill(
            f"No device events were recorded on {device}. On a CPU each aten::mm call does the "
            "product itself, so the host time is the computation."
        )
    )

# %%
# The timeline
# ------------
# The figure draws each recorded interval as a bar on a common clock: launches
# on the host row, kernels on the device row (CUDA only). Where the device
# works asynchronously, look for the host bars ending early while the device
# bars continue.
fig, ax = plt.subplots(figsize=(7, 2.6))
origin = min(e.time_range.start for e in host + kernels)
rows = [("host: aten::mm", host, "C0"), ("device: kernels", kernels, "C1")]
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
        f"not recorded on {device}",
        ha="center",
        transform=ax.get_yaxis_transform(),
    )
ax.set_yticks(range(len(rows)), [label for label, _, _ in rows])
ax.set_ylim(-0.6, len(rows) - 0.4)
ax.invert_yaxis()
ax.set_xlabel("time since the first event (ms)")
ax.set_title(f"{steps} products of {size} x {size} on {device}")
fig.tight_layout()
plt.show()

# %%
# The trace file
# --------------
# The profiler writes the whole recording as a Chrome trace (JSON). Open it in
# https://ui.perfetto.dev or in ``chrome://tracing`` to zoom into every event.
# It goes to the folder named by the environment variable
# ``COMPPERF_OUTPUT_DIR``, or to a new temporary folder. On the web page, the
# link below the path downloads the copy made when the page was built.
output_dir = Path(
    os.environ.get("COMPPERF_OUTPUT_DIR")
    or tempfile.mkdtemp(prefix="compperf-")
)
output_dir.mkdir(parents=True, exist_ok=True)
trace_path = output_dir / "profiler_trace.json"
prof.export_chrome_trace(str(trace_path))
print(
    f"trace written: {trace_path.name} "
    f"({trace_path.stat().st_size / 1024:.0f} KiB)"
)


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
