"""
Barriers and blockers
=====================

You measure every way PyTorch makes your Python thread wait for the device,
against the same work with nothing that waits. You learn which calls are
barriers you write on purpose and which ones block you without saying so.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the numbers on this page.
import io
import os
import textwrap

import matplotlib.pyplot as plt
import torch

import compperf

# Set by the tests, never by the docs build.
FAST = os.environ.get("COMPPERF_FAST") == "1"
device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The work and the ways to wait
# -----------------------------
# Each step queues ten matrix products and then does one thing with the last
# product. A *barrier* waits on purpose: synchronizing the device, a stream or
# an event. A *blocker* waits because it needs the values: on a GPU,
# ``.item()``, ``.cpu()``, ``.numpy()`` and printing a tensor all copy data to
# the host, so they wait for the kernels that produce it. On a CPU the data is
# already there, and ``.cpu()`` returns the tensor itself.
size = {"cpu": 256, "mps": 2048, "cuda": 4096}[device.type]
if FAST:
    size = 96
steps = 10
a = torch.randn(size, size, device=device)
print(
    f"one step: {steps} products of a {size} x {size} float32 matrix on {device}"
)


def work():
    for _ in range(steps):
        b = torch.mm(a, a)
    return b


def to_numpy(t):
    return (
        t.cpu().numpy()
    )  # .numpy() works only on CPU tensors; .cpu() is free there


def print_tensor(t):
    print(t, file=io.StringIO())  # formats every shown value, as print(t) does


blockers = {
    "no blocker": lambda b: None,
    "compperf.synchronize()": lambda b: compperf.synchronize(device),
    ".item()": lambda b: b[0, 0].item(),
    ".cpu()": lambda b: b.cpu(),
    ".numpy()": to_numpy,
    "print(tensor)": print_tensor,
}

# %%
# Streams and events exist only on accelerators. On a CPU each operation has
# finished when it returns, so there is no queue for them to wait on. Where a
# device lacks them, the code says what it leaves out instead of skipping it
# silently.
not_measured = {}
if device.type == "cpu":
    not_measured = {
        "stream.synchronize()": "no streams on the CPU",
        "event.synchronize()": "no events on the CPU",
    }
else:
    try:
        stream = torch.accelerator.current_stream(device)
        torch.Event(device=device)
    except (
        RuntimeError
    ) as error:  # a backend without the generic stream and event API
        not_measured = dict.fromkeys(
            ["stream.synchronize()", "event.synchronize()"], str(error)
        )
    else:

        def event_synchronize(b):
            event = torch.Event(device=device)
            event.record(stream)
            event.synchronize()

        blockers["stream.synchronize()"] = lambda b: stream.synchronize()
        blockers["event.synchronize()"] = event_synchronize
for name, reason in not_measured.items():
    print(f"not measured on {device}: {name} ({reason})")

# %%
# Timing the steps
# ----------------
# For each blocker you time, many times over, how long the Python thread is
# held: from the start of a step until the blocker returns. Every step starts
# with an empty queue, and the clock does not synchronize, so it sees only what
# Python sees. The blockers take turns, run after run, so that a busy moment of
# the machine does not land on one of them only. The table lists the median and
# the IQR per step; ``vs first`` is the ratio to the step without a blocker.
repeats = 5 if FAST else 20
timers = {name: compperf.Timer() for name in blockers}
for _ in range(1 + repeats):  # the first run is the warm-up
    for name, blocker in blockers.items():
        compperf.synchronize(device)  # drain the queue outside the clock
        timers[name].start()
        blocker(work())
        timers[name].stop()


results = [
    compperf.Measurement.from_times(
        timer.times[1:], description=name, device=device, warmup=1
    )
    for name, timer in timers.items()
]
print(
    compperf.compare(
        results,
        title="Python thread held per step (host clock, no synchronization)",
    )
)

# %%
# The sentence below is chosen from the measurements: does a step with nothing
# that waits return much sooner than a step that ends with a barrier?
baseline = results[0]
synchronized = results[1]
returns_early = (
    synchronized.median - baseline.median > baseline.iqr + synchronized.iqr
)
if returns_early:
    print(
        textwrap.fill(
            f"On {device} a step without a blocker returns after {compperf.format_time(baseline.median)}; "
            f"with a barrier Python waits {compperf.format_time(synchronized.median)}, until the "
            "device has finished. The blockers below it wait for the same products."
        )
    )
else:
    print(
        textwrap.fill(
            f"On {device} a step without a blocker takes as long as one with a barrier "
            f"({compperf.format_time(baseline.median)} against {compperf.format_time(synchronized.median)}): "
            "the work is done when the call returns, so waiting costs almost nothing. "
            "Where a blocker still costs more, it pays for its own work, such as a copy "
            "or formatting the printed text."
        )
    )

# %%
# The figure shows the same medians, with the IQR as an error bar. When the
# device works asynchronously, the first bar is short and the others are long,
# because they all wait for the same ten products. When it does not, as on a
# CPU, every bar is about as long as the work itself.
fig, ax = plt.subplots(figsize=(7, 3.5))
names = [m.description for m in results]
ax.barh(
    names,
    [m.median * 1e3 for m in results],
    xerr=[m.iqr * 1e3 for m in results],
    color=["#999999"] + ["#1f77b4"] * (len(results) - 1),
)
ax.invert_yaxis()
ax.set_xlabel("Python thread held per step (ms)")
ax.set_title(f"Barriers and blockers on {device}")
fig.tight_layout()
plt.show()

# %%
# In your own code, a blocker inside a training loop (``loss.item()`` for a
# log line, a ``print`` of a tensor) makes the frontend wait on every step, so
# it can no longer queue the next step while the device works. Read values
# every few steps, or keep them as tensors and read them once at the end.
