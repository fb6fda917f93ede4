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
import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The work and the ways to wait
# -----------------------------
# Each step queues ten matrix products, then does one thing with the last. A
# *barrier* waits on purpose: it synchronizes the device, a stream or an
# event. A *blocker* waits because it needs values: on a GPU, ``.item()``,
# ``.cpu()``, ``.numpy()`` and ``print`` copy data to the host, queued behind
# all earlier work. Hidden ones: ``b[b > 0]`` and ``nonzero()`` read back the
# size of their result, ``.tolist()`` copies, ``if b.sum() > 0:`` is an
# ``.item()``. ``torch.where(b > 0, b, 0)`` has a known size and does not wait.
size = {"cpu": 192, "mps": 2048, "cuda": 4096}[device.type]
repeats = 15
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    size, repeats = 96, 6
# sphinx_gallery_end_ignore
steps = 10
a = torch.randn(size, size, device=device)
print(compperf.tr("one step: {n} x torch.mm, {s} x {s}", n=steps, s=size))


def work():
    for _ in range(steps):
        b = torch.mm(a, a)
    return b


def if_tensor(b):
    if b.sum() > 0:
        return b


# print(tensor) formats the values without showing them.
blockers = {
    compperf.tr("no blocker"): lambda b: None,
    "compperf.synchronize()": lambda b: compperf.synchronize(device),
    ".item()": lambda b: b[0, 0].item(),
    ".cpu()": lambda b: b.cpu(),
    ".numpy()": lambda b: b.cpu().numpy(),
    "print(tensor)": lambda b: print(b, file=io.StringIO()),
    "b[b > 0]": lambda b: b[b > 0],
    "b.nonzero()": lambda b: b.nonzero(),
    "b[0].tolist()": lambda b: b[0].tolist(),
    "if b.sum() > 0:": if_tensor,
    "torch.where(b > 0, b, 0)": lambda b: torch.where(b > 0, b, 0),
}

# %%
# Streams and events exist only on accelerators (more in
# :doc:`/auto_examples/parallelism/plot_3_streams_and_copies`). On CUDA, a
# ``non_blocking=True`` copy from *pinned* memory is queued like a kernel;
# from *pageable* memory the call can wait. The lines say what this run leaves
# out, and why.

# compperf: cuda-only
has_events = device.type in ("cuda", "mps")  # the devices with streams
not_here = compperf.tr("none on {device}", device=device)
waits = ["stream.synchronize()", "event.synchronize()"]
not_measured = {} if has_events else dict.fromkeys(waits, not_here)
if has_events:
    try:
        stream = torch.accelerator.current_stream(device)
        stream.record_event().synchronize()
    except RuntimeError as error:  # no generic stream and event API here
        not_measured, has_events = dict.fromkeys(waits, str(error)), False
    else:
        blockers[waits[0]] = lambda b: stream.synchronize()
        blockers[waits[1]] = lambda b: stream.record_event().synchronize()
if device.type == "cuda":
    pageable = torch.randn(size, size)
    pinned = pageable.pin_memory()
    blockers["pageable.to(device)"] = lambda b: pageable.to(
        device, non_blocking=True
    )
    blockers["pinned.to(device)"] = lambda b: pinned.to(
        device, non_blocking=True
    )
else:
    not_measured[compperf.tr("host-to-device copies")] = not_here
for name, why in not_measured.items():
    print(compperf.tr("not measured: {name} ({why})", name=name, why=why))

# %%
# Timing the steps
# ----------------
# For each blocker you time how long the Python thread is held, from the
# start of a step (with an empty queue) until the blocker returns; the clock
# does not synchronize. The blockers take turns, run after run, so that a
# busy moment of the machine does not land on one of them only.
timers = {name: compperf.Timer() for name in blockers}
with compperf.watch() as watched:
    for _ in range(1 + repeats):  # The first run is the warm-up.
        for name, blocker in blockers.items():
            compperf.synchronize(device)  # Drain the queue outside the clock.
            timers[name].start()
            blocker(work())
            timers[name].stop()


same = {"device": device, "warmup": 1, "disturbance": watched.disturbance}
results = [
    compperf.Measurement.from_times(t.times[1:], description=name, **same)
    for name, t in timers.items()
]
title = compperf.tr("Python thread held per step (no synchronization)")
print(compperf.compare(results, title=title))

# %%
# compperf's verdict: does a step with nothing that waits return in under
# half the time of a step that ends with a barrier (the interval of the runs'
# median ratio wholly below 1/2)? *yes*: Python went on while the device
# worked, and one line per blocker follows (*yes* where Python went on, *no*
# where it waited). *no*: the work is done when the call returns, as on a CPU;
# a blocker that still costs more in the table pays for its own work, such as
# a copy or formatting text. *unclear*: the runs disagree too much to tell.
barrier = np.array(timers["compperf.synchronize()"].times[1:])


def early_verdict(name):
    """Does a step ending with ``name`` return in under half a barrier's time?"""
    ratios = np.array(timers[name].times[1:]) / barrier
    ratio = compperf.Ratio.from_rounds(name, "barrier", list(ratios))
    return compperf.conclude(
        compperf.tr("returns in under half a barrier's time"),
        name,
        ratio.low,
        ratio.high,
        below=1 / 2,
        disturbed=watched.disturbance.disturbed,
        value=ratio.estimate,
    )


early = early_verdict(results[0].description)
returns_early = early.yes
print(early)
if early.yes:
    for m in results[2:]:
        print(early_verdict(m.description))
print(watched.disturbance)

# %%
# The figure shows the same medians, with error bars to the quartiles. On an
# asynchronous device the steps that return early have short bars and those
# that wait for the ten products long ones; on a CPU every bar is about as
# long as the work.
fig, ax = plt.subplots(figsize=(7, 3.5))
medians = np.array([m.median for m in results])
quartiles = np.array([m.quartiles for m in results]).T
ax.barh(
    [m.description for m in results],
    medians * 1e3,
    xerr=np.abs(quartiles - medians) * 1e3,  # to each quartile
    color=["#999999"] + ["#1f77b4"] * (len(results) - 1),
)
ax.invert_yaxis()
for label in ax.get_yticklabels()[1:]:  # the blockers' names are code
    label.set_fontfamily("monospace")
ax.set_title(compperf.tr("Python thread held per step on {d} (ms)", d=device))
fig.tight_layout()
plt.show()

# %%
# Finding hidden synchronizations
# -------------------------------
# On CUDA, ``torch.cuda.set_sync_debug_mode("warn")`` warns whenever an
# operation makes the host wait (``"error"`` raises). The mode is
# experimental: it flags the copies that wait and ``stream.synchronize()``,
# but neither ``event.synchronize()`` nor ``torch.cuda.synchronize()`` (see
# ``c10/cuda/CUDAFunctions.h``), nor a pageable ``non_blocking=True`` copy
# that blocks. The cell runs each way to wait once in that mode and prints
# those that warned and those that stayed silent.

# compperf: cuda-only
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
    warned = ", ".join(str(name) for name, w in flagged.items() if w)
    silent = ", ".join(str(name) for name, w in flagged.items() if not w)
    print(compperf.tr("sync debug mode warned: {names}", names=warned or "-"))
    print(compperf.tr("sync debug mode silent: {names}", names=silent or "-"))
else:
    print(compperf.tr("sync debug mode: not run on {device}", device=device))

# %%
# In a training loop, a blocker (``loss.item()`` for a log line, a mask that
# selects samples) makes the frontend wait on every step. Read values every
# few steps or once at the end, and prefer results of a size known in advance.
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
#   but not all.
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
# 1. You mark a point in a stream with an event: ``event.synchronize()``
#    waits until the stream has reached it, not for the work queued after it
#    (reading a tensor of the first half would wait for the second: the copy
#    is queued behind it). The cell below queues one step, records an event,
#    queues another step, and prints the wait for the event, then for the
#    rest. A CPU has no events, and nothing to wait for.
if not has_events:
    print(compperf.tr("no events on {device}", device=device))
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
    print(compperf.tr("wait for the event: {t:time}", t=mark.times[0]))
    print(compperf.tr("then synchronize: {t:time}", t=everything.times[0]))

# %%
# 2. ``loss.item()`` and ``if torch.isnan(loss):`` read a value, and ``x[mask]``
#    needs the number of selected elements: all three wait. ``torch.where``
#    does not.
# 3. Only after something waited for the copy: ``torch.cuda.synchronize()``,
#    the stream's ``synchronize()``, or an event recorded after the copy.
#    Before that, the tensor's memory may still hold old values.
