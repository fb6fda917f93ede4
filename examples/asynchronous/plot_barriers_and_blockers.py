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
# ``.cpu()`` returns the tensor itself.
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
print(
    compperf.tr_plural(
        "one step: {n} product of a {size} x {size} float32 matrix on {device}",
        "one step: {n} products of a {size} x {size} float32 matrix on {device}",
        steps,
        size=size,
        device=device,
    )
)


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
    compperf.tr("compperf.synchronize()"): lambda b: compperf.synchronize(
        device
    ),
    compperf.tr(".item()"): lambda b: b[0, 0].item(),
    compperf.tr(".cpu()"): lambda b: b.cpu(),
    compperf.tr(".numpy()"): to_numpy,
    compperf.tr("print(tensor)"): print_tensor,
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
        compperf.tr("b[b > 0]"): lambda b: b[b > 0],
        compperf.tr("b.nonzero()"): lambda b: b.nonzero(),
        compperf.tr("b[0].tolist()"): lambda b: b[0].tolist(),
        compperf.tr("if b.sum() > 0:"): if_tensor,
        compperf.tr("torch.where(b > 0, b, 0)"): lambda b: torch.where(
            b > 0, b, 0
        ),
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
stream_synchronize = compperf.tr("stream.synchronize()")
event_synchronize = compperf.tr("event.synchronize()")
not_measured = {}
has_events = False
if device.type == "cpu":
    not_measured = {
        stream_synchronize: compperf.tr("no streams on the CPU"),
        event_synchronize: compperf.tr("no events on the CPU"),
    }
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
    blockers[compperf.tr("copy from pageable memory")] = lambda b: pageable.to(
        device, non_blocking=True
    )
    blockers[compperf.tr("copy from pinned memory")] = lambda b: pinned.to(
        device, non_blocking=True
    )
else:
    not_measured[compperf.tr("host-to-device copies")] = compperf.tr(
        "nothing to copy to on {device}", device=device
    )
for name, reason in not_measured.items():
    print(
        compperf.tr(
            "not measured on {device}: {name} ({reason})",
            device=device,
            name=name,
            reason=reason,
        )
    )

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
print(
    compperf.compare(
        results,
        title=compperf.tr(
            "Python thread held per step (host clock, no synchronization)"
        ),
    )
)

# %%
# The sentence below is chosen by compperf's verdict: does a step with nothing
# that waits return much sooner than a step that ends with a barrier? Each run
# gives the ratio of the two steps' times; "much sooner" means that the
# median ratio's confidence interval lies wholly below 1/2 (at least twice as
# soon). A busy machine moves single steps by tens of percent, a queue of ten
# products moves them by far more; an interval that straddles 1/2 leaves the
# question open on this run.
EARLY = 2.0
baseline = results[0]
synchronized = results[1]


def early_verdict(name):
    """Does a step ending with ``name`` return at least EARLY times sooner than with a barrier?"""
    runs = zip(
        timers[name].times[1:],
        timers[synchronized.description].times[1:],
        strict=True,
    )
    ratio = compperf.Ratio.from_rounds(
        name, "barrier", [t / s for t, s in runs]
    )
    return compperf.conclude(
        "returns early",
        f"{name} vs {synchronized.description} on {device}",
        ratio.low,
        ratio.high,
        below=1 / EARLY,
        disturbed=watched.disturbance.disturbed,
        value=ratio.estimate,
    )


early = early_verdict(baseline.description)
returns_early = early.yes
print(watched.disturbance)


def enumeration(names):
    """The names as one list for a sentence, "a, b, c", or "none"."""
    if not names:
        return compperf.tr("none")
    listed = names[0]
    for name in names[1:]:
        listed = compperf.tr("{listed}, {name}", listed=listed, name=name)
    return listed


step_times = {
    "device": device,
    "baseline": compperf.format_time(baseline.median),
    "synchronized": compperf.format_time(synchronized.median),
}
if early.yes:
    went = {m.description: early_verdict(m.description) for m in results[2:]}
    compperf.say(
        "On {device} a step without a blocker returns after {baseline}; with a "
        "barrier Python waits {synchronized}, until the device has finished.",
        **step_times,
    )
    compperf.say(
        "Python waited for the device in: {waited}. It went on without "
        "waiting in: {went_on}. Unclear here: {unclear}.",
        waited=enumeration([name for name, v in went.items() if v.no]),
        went_on=enumeration([name for name, v in went.items() if v.yes]),
        unclear=enumeration([name for name, v in went.items() if v.unclear]),
    )
elif early.no:
    compperf.say(
        "On {device} a step without a blocker takes as long as one with a "
        "barrier ({baseline} against {synchronized}): the work is done when "
        "the call returns, so waiting costs almost nothing. Where a blocker "
        "still costs more, it pays for its own work, such as a copy or "
        "formatting the printed text.",
        **step_times,
    )
else:
    compperf.say(
        "On {device} it is unclear here whether a step without a blocker "
        "returns much sooner than one with a barrier ({baseline} against "
        "{synchronized}): the runs disagree too much to tell.",
        **step_times,
    )

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
            [m.median - np.percentile(m.times, 25) for m in results],
            [np.percentile(m.times, 75) - m.median for m in results],
        ],
        0,
        None,
    )
    * 1e3,
    color=["#999999"] + ["#1f77b4"] * (len(results) - 1),
)
ax.invert_yaxis()
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
# queued work, and records which ones warned.

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
    compperf.say(
        "The sync debug mode warned for: {warned}. It stayed silent for: "
        "{silent}.",
        warned=enumeration([name for name, w in flagged.items() if w]),
        silent=enumeration([name for name, w in flagged.items() if not w]),
    )
else:
    compperf.say(
        "The sync debug mode exists for CUDA only, and this page runs on "
        "{device}, so this cell does not run it. On CUDA it warns for the calls "
        "that copy values to the host (.item(), .cpu(), .numpy(), .tolist(), "
        "printing), for boolean-mask indexing, nonzero(), if tensor: and "
        "stream.synchronize(), and stays silent for torch.where. It does not "
        "flag event.synchronize() nor torch.cuda.synchronize() (which "
        "compperf.synchronize() calls), and a non_blocking copy from pageable "
        "memory can block without a warning.",
        device=device,
    )

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
#    the host is queued behind the second half on the same stream.
if not has_events:
    compperf.say(
        "On {device} there is no event to wait for. On a CPU every product has "
        "finished when its call returns, so waiting for the middle and waiting "
        "for everything both return at once. On a GPU this cell measures the "
        "difference.",
        device=device,
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
    compperf.say(
        compperf.tr_plural(
            "Waiting for the event in the middle took {mark} (the first {n} "
            "product); synchronizing the device then took {everything} more "
            "(the other {n}).",
            "Waiting for the event in the middle took {mark} (the first {n} "
            "products); synchronizing the device then took {everything} more "
            "(the other {n}).",
            steps,
            mark=compperf.format_time(mark.times[0]),
            everything=compperf.format_time(everything.times[0]),
        )
    )

# %%
# 2. ``loss.item()`` and ``if torch.isnan(loss):`` read a value, and ``x[mask]``
#    needs the number of selected elements: all three wait. ``torch.where``
#    does not.
# 3. Only after something waited for the copy: ``torch.cuda.synchronize()``,
#    the stream's ``synchronize()``, or an event recorded after the copy.
#    Before that, the tensor's memory may still hold old values.
