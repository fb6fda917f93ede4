"""
Barriers and blockers
=====================

You measure every way PyTorch makes your Python thread wait for the device,
against the same work with nothing that waits. You learn which calls are
barriers you write on purpose, which ones block you without saying so, and how
PyTorch finds the hidden ones for you.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the numbers on this page.
import io
import textwrap
import warnings

import matplotlib.pyplot as plt
import torch

import compperf


def say(sentence):
    """Print a conclusion as a paragraph of its own, wrapped to 70 columns."""
    print(f"\n{textwrap.fill(sentence)}\n")


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
size = {"cpu": 192, "mps": 2048, "cuda": 4096}[device.type]
repeats = 15
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    size, repeats = 96, 5
# sphinx_gallery_end_ignore
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
# Hidden synchronizations
# -----------------------
# Some calls wait although they look like any other tensor operation, because
# Python needs a value or a size before it can go on:
#
# * boolean-mask indexing ``b[b > 0]`` and ``nonzero()``: the size of the
#   result depends on the data, so PyTorch reads a count back from the device
#   before it can allocate the result;
# * ``.tolist()``: it copies the values to Python numbers;
# * ``if tensor:`` (here ``if b.sum() > 0:``): Python needs one ``True`` or
#   ``False``, which is a ``.item()`` in disguise.
#
# ``torch.where(b > 0, b, 0)`` computes a masked result of known size instead,
# and does not wait.


def if_tensor(b):
    if b.sum() > 0:
        pass


blockers.update(
    {
        "b[b > 0]": lambda b: b[b > 0],
        "b.nonzero()": lambda b: b.nonzero(),
        "b[0].tolist()": lambda b: b[0].tolist(),
        "if b.sum() > 0:": if_tensor,
        "torch.where(b > 0, b, 0)": lambda b: torch.where(b > 0, b, 0),
    }
)

# %%
# Streams and events exist only on accelerators. On a CPU each operation has
# finished when it returns, so there is no queue for them to wait on. Where a
# device lacks them, the code says what it leaves out instead of skipping it
# silently. The same goes for copies from host memory to a CUDA device: a
# ``non_blocking=True`` copy from *pinned* (page-locked) host memory is queued
# like a kernel, but from ordinary *pageable* memory the driver first stages the
# data, and the call can wait for the queue ahead of it.
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
if device.type == "cuda":
    pageable = torch.randn(size, size)
    pinned = pageable.pin_memory()
    blockers["copy from pageable memory"] = lambda b: pageable.to(
        device, non_blocking=True
    )
    blockers["copy from pinned memory"] = lambda b: pinned.to(
        device, non_blocking=True
    )
else:
    not_measured["host-to-device copies"] = f"nothing to copy to on {device}"
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
# that waits return much sooner than a step that ends with a barrier? "Much"
# means at least twice as soon, and apart by more than the spread: a busy
# machine moves medians by tens of percent, a queue of ten products by far more.
EARLY = 2.0
baseline = results[0]
synchronized = results[1]
returns_early = (
    synchronized.median > EARLY * baseline.median
    and synchronized.median - baseline.median > baseline.iqr + synchronized.iqr
)
if returns_early:
    halfway = (baseline.median + synchronized.median) / 2
    waited = [m.description for m in results[2:] if m.median > halfway]
    went_on = [m.description for m in results[2:] if m.median <= halfway]
    say(
        f"On {device} a step without a blocker returns after {compperf.format_time(baseline.median)}; "
        f"with a barrier Python waits {compperf.format_time(synchronized.median)}, until the "
        "device has finished."
    )
    say(
        "Python waited for the device in: "
        + (", ".join(waited) or "none")
        + ". It went on without waiting in: "
        + (", ".join(went_on) or "none")
        + "."
    )
else:
    say(
        f"On {device} a step without a blocker takes as long as one with a barrier "
        f"({compperf.format_time(baseline.median)} against {compperf.format_time(synchronized.median)}): "
        "the work is done when the call returns, so waiting costs almost nothing. "
        "Where a blocker still costs more, it pays for its own work, such as a copy "
        "or formatting the printed text."
    )

# %%
# The figure shows the same medians, with the IQR as an error bar. When the
# device works asynchronously, the bars of the steps that return early are
# short and those that wait are long, because they all wait for the same ten
# products. When it does not, as on a CPU, every bar is about as long as the
# work itself.
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
# Finding hidden synchronizations
# -------------------------------
# You do not have to guess which line waits. On CUDA,
# ``torch.cuda.set_sync_debug_mode("warn")`` makes PyTorch warn whenever an
# operation makes the host wait for the device (``"error"`` raises instead;
# ``"default"`` turns it off). PyTorch calls the mode experimental: it does not
# catch every synchronization. It flags ``stream.synchronize()`` but not
# ``torch.cuda.synchronize()``, and a ``non_blocking=True`` copy from pageable
# memory can block without a warning. The cell below runs each way to wait
# once in that mode, after queued work, and records which ones warned.
if device.type == "cuda":
    flagged = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for name, blocker in blockers.items():
                b = work()
                already = len(caught)
                blocker(b)
                flagged[name] = any(
                    "synchroniz" in str(w.message) for w in caught[already:]
                )
        finally:
            torch.cuda.set_sync_debug_mode("default")
    say(
        "The sync debug mode warned for: "
        + (
            ", ".join(name for name, warned in flagged.items() if warned)
            or "none"
        )
        + ". It stayed silent for: "
        + (
            ", ".join(name for name, warned in flagged.items() if not warned)
            or "none"
        )
        + "."
    )
else:
    say(
        f"The sync debug mode exists for CUDA only, and this page runs on {device}, "
        "so this cell does not run it. On CUDA it warns for the calls that copy "
        "values to the host (.item(), .cpu(), .numpy(), .tolist(), printing), for "
        "boolean-mask indexing, nonzero(), if tensor: and stream.synchronize(), and "
        "stays silent for torch.where. It does not flag torch.cuda.synchronize() "
        "(which compperf.synchronize() calls), and a non_blocking copy from "
        "pageable memory can block without a warning."
    )

# %%
# In your own code, a blocker inside a training loop (``loss.item()`` for a
# log line, a ``print`` of a tensor, a mask that selects the valid samples)
# makes the frontend wait on every step, so it can no longer queue the next
# step while the device works. Read values every few steps, keep them as
# tensors and read them once at the end, and prefer operations whose result
# has a size known in advance.
#
# Summary
# -------
# * A barrier waits on purpose: ``torch.cuda.synchronize()``,
#   ``torch.accelerator.synchronize()``, ``stream.synchronize()``,
#   ``event.synchronize()``.
# * A blocker waits because Python needs values or a size: ``.item()``,
#   ``.cpu()``, ``.numpy()``, ``.tolist()``, ``print``, ``if tensor:``,
#   boolean-mask indexing and ``nonzero()``; on CUDA also a copy from pageable
#   host memory.
# * ``torch.cuda.set_sync_debug_mode("warn")`` finds most hidden ones on CUDA,
#   but not all: it does not flag ``torch.cuda.synchronize()``, and a
#   ``non_blocking`` copy from pageable memory can block without a warning.
# * On a CPU every operator has finished when it returns: nothing is left to
#   wait for, and each blocker costs only its own work.
#
# Exercises
# ---------
# 1. Waiting for everything and waiting for one result are different things.
#    Queue some products, mark the middle of the queue, queue more, then
#    compare waiting for the mark with synchronizing the device.
# 2. Which of these lines make a CUDA step wait: ``loss.item()``,
#    ``if torch.isnan(loss):``, ``x[mask]``, ``torch.where(mask, x, 0)``?
# 3. ``b.to("cpu", non_blocking=True)`` returns before the copy has finished.
#    When may you read its values?
#
# Answers
# -------
# 1. In PyTorch you mark a point in a stream with an event: ``event.synchronize()``
#    waits until the stream has reached it, not for the work queued after it.
#    Reading a tensor that the first half computed would not do: the copy to
#    the host is queued behind the second half on the same stream.
if "event.synchronize()" not in blockers:
    say(
        f"On {device} there is no event to wait for. On a CPU every product has finished when its call returns, so waiting for "
        "the middle and waiting for everything both return at once. On a GPU "
        "this cell measures the difference."
    )
else:
    middle = torch.Event(device=device)
    compperf.synchronize(device)
    work()
    middle.record()
    work()
    mark = compperf.Timer()
    middle.synchronize()
    mark.stop()
    everything = compperf.Timer()
    compperf.synchronize(device)
    everything.stop()
    say(
        f"Waiting for the event in the middle took {compperf.format_time(mark.times[0])} "
        f"(the first {steps} products); synchronizing the device then took "
        f"{compperf.format_time(everything.times[0])} more (the other {steps})."
    )

# %%
# 2. ``loss.item()`` and ``if torch.isnan(loss):`` read a value, and ``x[mask]``
#    needs the number of selected elements: all three wait. ``torch.where``
#    does not.
# 3. Only after something waited for the copy: ``torch.cuda.synchronize()``,
#    the stream's ``synchronize()``, or an event recorded after the copy.
#    Before that, the tensor's memory may still hold old values.
