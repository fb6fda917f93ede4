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
# Each step queues ten matrix products and then does one thing with the last
# product. A *barrier* waits on purpose: synchronizing the device, a stream or
# an event. A *blocker* waits because it needs the values: on a GPU,
# ``.item()``, ``.cpu()``, ``.numpy()`` and printing a tensor all copy data to
# the host. The copy is queued on the current stream behind everything queued
# before it, so a blocker waits for all of that work, not only for the
# kernels that produce its value. On a CPU the data is already there, and
# ``.cpu()`` returns the tensor itself. The line below gives the number of
# products in one step and the matrix size.
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


def to_numpy(t):
    # .numpy() works only on CPU tensors; .cpu() costs nothing there.
    return t.cpu().numpy()


def print_tensor(t):
    # This formats every value shown, as print(t) does, but prints nothing.
    print(t, file=io.StringIO())


# Each way to wait has a name that labels the table and the figure. The
# names that are code read the same in every language.
blockers = {
    compperf.tr("no blocker"): lambda b: None,
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
        return b


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
# silently: one line per way to wait that this run leaves out, with the
# reason (none on this device, or the error the backend raised). The same
# goes for copies from host memory to a CUDA device: a ``non_blocking=True``
# copy from *pinned* (page-locked) host memory is queued like a kernel, but
# from ordinary *pageable* memory the driver first stages the data, and the
# call can wait for the queue ahead of it.
#
# On a GPU, each operation goes to the *current stream*, the device's default
# stream unless you switch, and runs after everything queued there before
# it. A *side stream* (``torch.cuda.Stream()``, entered with
# ``with torch.cuda.stream(s):``) is another queue whose work may overlap the
# default stream's. Nothing orders two streams unless you do
# (``s.wait_stream(torch.cuda.current_stream())``, or an event), and a tensor
# made on one stream and used on another needs ``tensor.record_stream(s)``,
# so that its memory is not reused while the other stream still reads it.
# This page uses the current stream only: ``stream.synchronize()`` waits for
# that stream, ``torch.cuda.synchronize()`` for every stream of the device;
# :doc:`/auto_examples/parallelism/plot_3_streams_and_copies` overlaps work
# on several streams.
stream_synchronize = "stream.synchronize()"
event_synchronize = "event.synchronize()"
not_here = compperf.tr("none on {device}", device=device)
not_measured = {}
has_events = False
if device.type == "cpu":
    not_measured = dict.fromkeys(
        [stream_synchronize, event_synchronize], not_here
    )
else:
    try:
        stream = torch.accelerator.current_stream(device)
        torch.Event(device=device)
    except RuntimeError as error:
        # This backend lacks the generic stream and event API.
        not_measured = dict.fromkeys(
            [stream_synchronize, event_synchronize], str(error)
        )
    else:

        def wait_for_event(b):
            event = torch.Event(device=device)
            event.record(stream)
            event.synchronize()

        blockers[stream_synchronize] = lambda b: stream.synchronize()
        blockers[event_synchronize] = wait_for_event
        has_events = True
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
# For each blocker you time, many times over, how long the Python thread is
# held: from the start of a step until the blocker returns. Every step starts
# with an empty queue, and the clock does not synchronize, so it sees only what
# Python sees. The blockers take turns, run after run, so that a busy moment of
# the machine does not land on one of them only. The table lists the median and
# the IQR per step; ``vs first`` is the ratio to the step without a blocker.
timers = {name: compperf.Timer() for name in blockers}
with compperf.watch() as watched:
    for _ in range(1 + repeats):  # The first run is the warm-up.
        for name, blocker in blockers.items():
            compperf.synchronize(device)  # Drain the queue outside the clock.
            timers[name].start()
            blocker(work())
            timers[name].stop()


results = [
    compperf.Measurement.from_times(
        timer.times[1:],
        description=name,
        device=device,
        warmup=1,
        disturbance=watched.disturbance,
    )
    for name, timer in timers.items()
]
title = compperf.tr("Python thread held per step (no synchronization)")
print(compperf.compare(results, title=title))

# %%
# The line below is compperf's verdict: does a step with nothing that waits
# return much sooner than a step that ends with a barrier? Each run gives the
# ratio of the two steps' times; "much sooner" means that the median ratio's
# confidence interval lies wholly below 1/2 (at least twice as soon). A busy
# machine moves single steps by tens of percent, a queue of ten products moves
# them by far more.
#
# * *yes*: Python went on while the device still worked. One more verdict
#   line per blocker follows, each against the same barrier: *yes* where
#   Python went on without waiting, *no* where it waited for the device,
#   *unclear* where this run cannot tell.
# * *no*: a step without a blocker takes as long as one with a barrier. The
#   work is done when the call returns, as on a CPU, so waiting costs almost
#   nothing; where a blocker still costs more in the table, it pays for its
#   own work, such as a copy or formatting the printed text.
# * *unclear*: the interval straddles 1/2, the runs disagree too much to
#   tell, and the question stays open on this run.
#
# The line after the verdicts says how disturbed the machine was meanwhile.
EARLY = 2.0
baseline = results[0]
synchronized = results[1]
barrier = timers[synchronized.description].times[1:]


def early_verdict(name):
    """Does a step ending with ``name`` return at least EARLY times sooner than with a barrier?"""
    runs = zip(timers[name].times[1:], barrier, strict=True)
    ratio = compperf.Ratio.from_rounds(
        name, "barrier", [t / s for t, s in runs]
    )
    return compperf.conclude(
        compperf.tr("returns in under half a barrier's time"),
        name,
        ratio.low,
        ratio.high,
        below=1 / EARLY,
        disturbed=watched.disturbance.disturbed,
        value=ratio.estimate,
    )


early = early_verdict(baseline.description)
returns_early = early.yes
print(early)
if early.yes:
    for m in results[2:]:
        print(early_verdict(m.description))
print(watched.disturbance)

# %%
# The figure shows the same medians, with error bars from the first to the
# third quartile (never below zero). When the
# device works asynchronously, the bars of the steps that return early are
# short and those that wait are long, because they all wait for the same ten
# products. When it does not, as on a CPU, every bar is about as long as the
# work itself.
fig, ax = plt.subplots(figsize=(7, 3.5))
names = [m.description for m in results]
ax.barh(
    names,
    [m.median * 1e3 for m in results],
    xerr=np.clip(
        [
            [m.median - m.quartiles[0] for m in results],
            [m.quartiles[1] - m.median for m in results],
        ],
        0,
        None,
    )
    * 1e3,
    color=["#999999"] + ["#1f77b4"] * (len(results) - 1),
)
ax.invert_yaxis()
for label in ax.get_yticklabels()[1:]:  # the blockers' names are code
    label.set_fontfamily("monospace")
ax.set_xlabel(compperf.tr("Python thread held per step (ms)"))
ax.set_title(compperf.tr("Barriers and blockers on {device}", device=device))
fig.tight_layout()
plt.show()

# %%
# Finding hidden synchronizations
# -------------------------------
# You do not have to guess which line waits. On CUDA,
# ``torch.cuda.set_sync_debug_mode("warn")`` makes PyTorch warn whenever an
# operation makes the host wait for the device (``"error"`` raises instead;
# ``"default"`` turns it off). PyTorch calls the mode experimental: it does not
# catch every synchronization. It flags the copies that wait and
# ``stream.synchronize()``, but neither ``event.synchronize()`` nor
# ``torch.cuda.synchronize()`` (in ``c10/cuda/CUDAFunctions.h`` the stream's
# synchronization and the copies that wait call the warning, the device's
# synchronization does not), so on a GPU the list of
# silent calls below holds those two barriers as well as ``torch.where``;
# and a ``non_blocking=True`` copy from pageable memory can block without a
# warning. The cell below runs each way to wait once in that mode, after
# queued work, and prints two lines: the ways to wait that warned, and those
# that stayed silent.
#
# The mode exists for CUDA only; on another device the cell prints one line
# saying it did not run. On CUDA it warns for the calls that copy values to
# the host (``.item()``, ``.cpu()``, ``.numpy()``, ``.tolist()``, printing),
# for boolean-mask indexing, ``nonzero()``, ``if tensor:`` and
# ``stream.synchronize()``; among the silent ones are ``torch.where``,
# ``event.synchronize()`` and ``compperf.synchronize()`` (which calls
# ``torch.cuda.synchronize()``).

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
# In your own code, a blocker inside a training loop (``loss.item()`` for a
# log line, a ``print`` of a tensor, a mask that selects the valid samples)
# makes the frontend wait on every step, so it can no longer queue the next
# step while the device works. Read values every few steps, keep them as
# tensors and read them once at the end, and prefer operations whose result
# has a size known in advance.
#
# Queued work also fails late. A kernel that goes wrong on a GPU (an index
# out of range, say) reports its error at the next call that waits for the
# device or checks for errors, a blocker or a barrier perhaps many lines
# later, and the traceback points there, not at the operation that failed.
# To find the culprit, run the program with the environment variable
# ``CUDA_LAUNCH_BLOCKING=1``: every kernel launch then waits until the
# kernel has finished, so the error surfaces at its own line (and the
# program runs slower; it is for debugging only).
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
# * A blocker waits for everything queued before it on the current stream,
#   not only for the kernels that produce its value.
# * ``torch.cuda.set_sync_debug_mode("warn")`` finds most hidden ones on CUDA,
#   but not all: it does not flag ``event.synchronize()`` nor
#   ``torch.cuda.synchronize()``, and a ``non_blocking`` copy from pageable
#   memory can block without a warning.
# * A CUDA error (a bad index in a kernel, say) is reported at a later call
#   that waits, not at the line that queued the kernel; see the note above
#   the summary.
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
#    the host is queued behind the second half on the same stream. The cell
#    below queues one step's products, records an event, queues another
#    step's, and prints two times: waiting for the event (the first half),
#    then synchronizing the device (the rest). Where the device has no events
#    (a CPU has none), it prints one line instead: there every product has
#    finished when its call returns, so waiting for the middle and waiting for
#    everything would both return at once.
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
