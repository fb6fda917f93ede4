"""
When the frontend runs ahead
============================

You queue a long run of matrix products without ever waiting, and watch how
far Python gets ahead of the device. You also measure the memory that the
queued work holds, and learn when it grows.

To run this example yourself, install PyTorch, then ``pip install matplotlib
numpy``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the numbers on this page.
import matplotlib.pyplot as plt
import numpy as np
import torch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Queuing without waiting
# -----------------------
# Python issues matrix products one after another and never waits. For each
# call you record how long it held the Python thread. After the loop you time
# how long the device still needed: that is the work that was queued but not
# done when the loop ended. The same wait with nothing queued tells you what
# the wait itself costs. You do this in ten rounds, while compperf watches the
# machine. The first line below gives the host time of the last round's
# calls (*issue*) and the shortest wait for the device after the loop
# (*wait*); the second, the shortest wait with nothing queued. The shortest,
# because interruptions from the rest of the machine only ever add time; the
# verdict further down uses every round. The last round feeds the figure.
size = {"cpu": 192, "mps": 1024, "cuda": 2048}[device.type]
launches = {"cpu": 400, "mps": 1000, "cuda": 2000}[device.type]
memory_launches = 100
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    size, launches, memory_launches = 128, 100, 10
# sphinx_gallery_end_ignore
a = torch.randn(size, size, device=device)
torch.mm(a, a)  # A warm-up product, not timed.

rounds = 10
backlogs, empty_waits, issue_sums = [], [], []
with compperf.watch() as watched:
    for _ in range(rounds):
        compperf.synchronize(device)
        issue = compperf.Timer()
        for _ in range(launches):
            issue.start()
            y = torch.mm(a, a)
            issue.stop()
        backlog = compperf.Timer()
        backlog.start()
        compperf.synchronize(device)
        backlogs.append(backlog.stop())
        backlog.start()
        compperf.synchronize(device)  # Nothing is queued now.
        empty_waits.append(backlog.stop())
        issue_sums.append(sum(issue.times))

issued = np.array(issue.times)
waited = min(backlogs)
empty_wait = min(empty_waits)
# The device's average time per product in the last round: it finished all of
# them when the final wait returned.
pace = (issued.sum() + backlogs[-1]) / launches
print(compperf.tr("issue: {a:time}, wait: {b:time}", a=issued.sum(), b=waited))
print(compperf.tr("wait with nothing queued: {t:time}", t=empty_wait))

# %%
# Now let compperf's verdict decide. Each round gives the work still queued
# when the loop ended, beyond what the wait itself costs, in products:
# ``(backlog - empty wait) / time per product``, with that round's time per
# product. The median over the rounds has a confidence interval, which a round
# hit by an interruption cannot move alone. The verdict line prints the claim
# "nothing queued when the loop ends", its outcome, the median and the
# interval, in products, against the threshold of one product:
#
# * *yes*: the whole interval lies below one product. Each call returned only
#   after its product was done, as on a CPU.
# * *no*: the whole interval lies at one product or more. Python finished
#   issuing while the device still had work queued: the frontend ran ahead.
# * *unclear*: the interval straddles one product (or the machine was
#   disturbed), and this run cannot tell.
per_round = [
    (b - e) / ((issued_sum + b) / launches)
    for b, e, issued_sum in zip(backlogs, empty_waits, issue_sums, strict=True)
]
queued = compperf.Ratio.from_rounds("backlog", "one product", per_round)
nothing_queued = compperf.conclude(
    "nothing queued when the loop ends",
    str(device),
    queued.low,
    queued.high,
    below=1.0,
    disturbed=watched.disturbance.disturbed,
    value=queued.estimate,
)
queued_products = queued.estimate
print(watched.disturbance)
print(nothing_queued)

# %%
# The figure shows when each call returned to Python (host time) next to when
# the device finished, if it worked at its average pace. The gap between the
# curves is how far the frontend ran ahead. If the device works
# asynchronously, the gap grows until the queue is full; after that each
# launch waits for a free slot, so Python moves at the device's pace. Where
# nothing is queued, the curves can part only where a call held Python far
# longer than the others: a step in the host curve. The line after the figure
# gives the share of long calls (those that held Python more than ten times as
# long as the median call) and the largest gap between the curves. Read it with the verdict
# above: where nothing was queued, the gap is made of the machine's
# interruptions of Python; where work was queued, it is how far Python ran
# ahead; where the verdict is unclear, this run cannot tell the two apart.
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
index = np.arange(1, launches + 1)
ax.plot(
    index,
    np.cumsum(issued) * 1e3,
    label=compperf.tr("call returned to Python"),
)
ax.plot(
    index,
    index * pace * 1e3,
    linestyle="--",
    label=compperf.tr("device done, at its average pace"),
)
ax.set_xlabel(compperf.tr("product number"))
ax.set_ylabel(compperf.tr("time since the first call (ms)"))
ax.set_title(
    compperf.tr("When each call returned, and when the device was done")
)
fig.legend(loc="outside upper center", ncols=2)
plt.show()

long_calls = issued[issued > 10 * np.median(issued)]
gap = np.max(np.abs(np.cumsum(issued) - index * pace))
share = len(long_calls) / launches
print(compperf.tr("long calls: {s:.0%}, widest gap: {t:time}", s=share, t=gap))

# %%
# Memory held by queued work
# --------------------------
# The book warns that a frontend far ahead can use a lot of memory, because
# every queued operation holds its inputs and outputs. In PyTorch the call that
# queues a kernel also allocates its output, and memory follows the tensors'
# references, not the queue. If you rebind ``y``, the old output has no
# reference left, and the caching allocator hands its block to the next
# product at once, before the kernel that wrote it may even have run: that is
# safe because kernels on one stream run in order. If you keep every result, for instance
# by appending a loss tensor to a list instead of calling ``.item()``, each one
# keeps its memory. You read the allocator right after the loop, before
# waiting, while the queue is still full, once rebinding ``y`` and once keeping
# every result. On a GPU the cell prints a verdict on whether the queue itself
# held little memory: its measured value is the memory held while rebinding
# ``y`` as a share of what the kept results held, *yes* under a tenth, *no*
# otherwise. On a CPU the cell prints nothing: PyTorch keeps no
# allocator statistics there, and nothing is queued, since each product exists
# once its call returns; a list of kept products still holds all of them (the
# answer to exercise 3 counts their bytes).


def allocated():
    if device.type == "cuda":
        return torch.cuda.memory_allocated(device)
    return torch.mps.current_allocated_memory()


def held_after_loop(keep):
    kept = []
    compperf.synchronize(device)
    before = allocated()
    for _ in range(memory_launches):
        y = torch.mm(a, a)
        if keep:
            kept.append(y)
    held = allocated() - before
    del kept, y
    compperf.synchronize(device)
    return held


if device.type != "cpu":  # On a CPU there are no allocator statistics.
    held = {keep: held_after_loop(keep) for keep in (False, True)}
    # Bytes, not timings: one exact share, so the interval is a single point.
    share = held[False] / max(held[True], 1)
    little = compperf.conclude(
        "queue holds little memory",
        str(device),
        share,
        share,
        below=0.1,
    )
    print(little)

# %%
# Keep logged values as numbers (read them every few steps), or collect
# tensors on purpose and know what they cost; and let the device catch up
# before you queue more than you can afford to hold.
#
# Summary
# -------
# * On a GPU, Python can queue work far ahead of the device; each launch then
#   costs the host only microseconds, until the launch queue is full and
#   Python moves at the device's pace.
# * Memory follows tensor references, not the queue: an output is allocated
#   when its kernel is queued, and its block returns to the caching allocator
#   when the last reference goes, even before that kernel has run; the next
#   kernel on the same stream may reuse it, since the stream runs in order.
#   Results you keep (a list of loss tensors) hold their memory until you
#   drop them.
# * On a CPU nothing is queued: each product exists once its call returns.
#
# Exercises
# ---------
# 1. The frontend can run ahead only as far as the queue allows. What happens
#    to the time per call once the queue is full?
# 2. A training loop appends ``loss`` (a tensor) to a list on every step, to
#    print the average at the end. What does that cost, and how do you fix it
#    without waiting on every step?
# 3. How much memory do the kept products of this page take, in MiB, for
#    ``memory_launches`` products? Check it with the tensors' own sizes.
#
# Answers
# -------
# 1. Each launch waits for a free slot, so after the queue is full a call costs
#    about as long as the device needs for one product: the curve of the host
#    bends to the device's pace.
# 2. Each kept ``loss`` is a small tensor on the device, and it keeps its
#    ``grad_fn``: the nodes of that step's backward graph (``backward()`` has
#    freed the saved activations, unless you passed ``retain_graph=True``).
#    Memory grows slowly with the steps, but nothing waits. Append
#    ``loss.detach()`` to drop the graph, and call ``.item()`` once at the end,
#    or every few steps.
# 3. Each product is a ``size x size`` float32 matrix: ``numel() *
#    element_size()`` bytes.
kept = [torch.mm(a, a) for _ in range(memory_launches)]
kept_bytes = sum(t.numel() * t.element_size() for t in kept)
print(compperf.tr("memory of the kept products: {b:bytes}", b=kept_bytes))
del kept
