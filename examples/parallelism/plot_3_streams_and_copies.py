"""
Copies and computation side by side
===================================

You put a host-to-device copy on a second CUDA stream, from pinned memory,
while the default stream computes; you order the two with events, and you
measure the two classic mistakes: a copy from pageable memory, and reading a
device-to-host copy before it has arrived. On a CPU you see the analogue.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. The GPU measurements need a
CUDA device; elsewhere the page says what a GPU shows.
"""

# %%
# The machine and the device
# --------------------------
import os
import threading

import matplotlib.pyplot as plt
import torch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Streams, pinned memory and events
# ---------------------------------
# A CUDA stream is a queue: the GPU runs its work in order. Work on two
# different streams may run at the same time, and the GPU has copy engines
# that move data while its cores compute. Three things must come together
# for a copy to overlap a computation:
#
# * the copy and the computation are on different streams
#   (``torch.cuda.Stream()``, ``with torch.cuda.stream(s):``);
# * the copy is asynchronous, ``tensor.copy_(src, non_blocking=True)`` (or
#   ``.to(device, non_blocking=True)``);
# * the host memory is pinned (page-locked: ``torch.empty(...,
#   pin_memory=True)`` or ``tensor.pin_memory()``), so that the copy engine
#   can read it directly. From ordinary (pageable) memory the driver first
#   copies into a pinned buffer of its own, on the CPU, and the copy does not
#   overlap; this is what the measurement of "automatic parallelism" in
#   `Dive into Deep Learning <https://d2l.ai/>`__ ran into.
#
# Events (``torch.cuda.Event``) order the streams:
# ``stream.wait_stream(other)`` or ``stream.wait_event(event)`` make later
# work wait for earlier work on another stream, without stopping the CPU.
# A tensor made on one stream and used on another also needs
# ``tensor.record_stream(stream)``, so that the caching allocator does not
# reuse its memory too early.
elements = 2**26  # 256 MiB of float32 to copy
n, products = 4096, 4
budget = 3.0
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
if os.environ.get("COMPPERF_FAST") == "1":
    elements, n, products, budget = 2**22, 1024, 2, 1.0
# sphinx_gallery_end_ignore


def copy_and_compute_on_cuda():
    """Time copy and computation alone, one after the other, and overlapped."""
    pinned = torch.randn(elements).pin_memory()
    pageable = torch.randn(elements)
    on_device = torch.empty(elements, device=device)
    a = torch.randn(n, n, device=device)
    out = torch.empty(n, n, device=device)
    copy_stream = torch.cuda.Stream()

    def compute():
        for _ in range(products):
            torch.mm(a, a, out=out)

    def copy(source):
        on_device.copy_(source, non_blocking=True)

    def serial():
        compute()
        copy(pinned)

    def side_by_side(source):
        def call():
            copy_stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(copy_stream):
                copy(source)
            compute()
            torch.cuda.current_stream().wait_stream(copy_stream)

        return call

    comparison = compperf.interleave(
        {
            "serial": serial,
            "pinned": side_by_side(pinned),
            "pageable": side_by_side(pageable),
            "copy": lambda: copy(pinned),
            "compute": compute,
        },
        device=device,
        budget=budget,
    )
    # Events time the copy on its own stream inside one overlapped call.
    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    with torch.cuda.stream(copy_stream):
        start.record()
        copy(pinned)
        end.record()
    compute()
    torch.cuda.synchronize()
    copy_ms = start.elapsed_time(end)
    return comparison, copy_ms


def read_too_early_on_cuda():
    """Read a non-blocking device-to-host copy before and after synchronizing."""
    a = torch.randn(n, n, device=device)
    for _ in range(products):
        a = torch.mm(a, a) / n  # keeps the stream busy for a while
    source = torch.full((elements,), 7.0, device=device)
    host = torch.zeros(elements).pin_memory()
    host.copy_(source, non_blocking=True)
    early = host.clone()  # the CPU reads now, the copy may still be queued
    torch.cuda.current_stream().synchronize()
    late = host.clone()
    return int((early != 7.0).sum()), int((late != 7.0).sum())


# %%
# On a GPU: what overlapped
# -------------------------
# ``compperf.interleave`` times five ways in turns, synchronizing the whole
# device around each block: the copy alone, the computation alone (a few
# matrix products), both one after the other on one stream, and both side by
# side on two streams, once from pinned and once from pageable memory.
# "Overlapped" means more than 5 % faster than one after the other, with the
# whole 95 % interval of the ratio on that side.

# compperf: cuda-only
if device.type == "cuda":
    comparison, copy_ms = copy_and_compute_on_cuda()
    for name in comparison.names:
        print(comparison.measurements[name])
    print(
        compperf.tr(
            "The copy took {ms:.2f} ms between its events, {gbs:.1f} GB/s",
            ms=copy_ms,
            gbs=elements * 4 / copy_ms / 1e6,
        )
    )
    gpu_verdicts = {
        memory: comparison.faster(memory, "serial", subject=memory)
        for memory in ("pinned", "pageable")
    }
    for memory, verdict in gpu_verdicts.items():
        ratio = comparison.ratio(memory, "serial")
        if memory == "pinned":
            label = compperf.tr("pinned")
        else:
            label = compperf.tr("pageable")
        if verdict.yes:
            compperf.say(
                "From {memory} memory, the copy overlapped the computation: "
                "both together took {ratio} of one after the other.",
                memory=label,
                ratio=ratio,
            )
        elif verdict.no:
            compperf.say(
                "From {memory} memory, the copy did not overlap measurably "
                "here: both together took {ratio} of one after the other.",
                memory=label,
                ratio=ratio,
            )
        else:
            compperf.say(
                "From {memory} memory, whether the copy overlapped is "
                "unclear here: both together took {ratio} of one after the "
                "other.",
                memory=label,
                ratio=ratio,
            )
else:
    gpu_verdicts = {}
    compperf.say(
        "What a GPU shows (this build has no CUDA device, so nothing here "
        "was measured on one): a copy from pinned memory on a second stream "
        "runs on a copy engine while the default stream computes, and both "
        "together take about as long as the longer of the two; from pageable "
        "memory the same code takes at least as long as both one after the "
        "other, because the driver stages the data through the CPU first."
    )

# %%
# The second mistake: reading too early
# -------------------------------------
# A non-blocking copy from the device to pinned host memory returns at once;
# the values arrive when the stream gets to the copy. The code below keeps
# the stream busy with matrix products, queues the copy of a tensor of sevens
# into a pinned tensor of zeros, reads it at once, then synchronizes and reads
# again.

# compperf: cuda-only
if device.type == "cuda":
    wrong_early, wrong_late = read_too_early_on_cuda()
    if wrong_early:
        compperf.say(
            "Read before synchronizing, {wrong} of {total} values were not "
            "there yet; after synchronizing, {late} were wrong.",
            wrong=wrong_early,
            total=elements,
            late=wrong_late,
        )
    else:
        compperf.say(
            "Read before synchronizing, all {total} values happened to be "
            "there already; after synchronizing, {late} were wrong. Nothing "
            "guarantees the first read: only the synchronization does.",
            total=elements,
            late=wrong_late,
        )
else:
    compperf.say(
        "What a GPU shows: the read before synchronizing can find old zeros "
        "where the sevens have not arrived, and the read after it finds only "
        "sevens. On this build the copy is synchronous and cannot be read "
        "too early."
    )

# %%
# On a CPU: the analogue
# ----------------------
# A CPU has no copy engine and no streams: ``non_blocking=True`` between two
# CPU tensors is an ordinary copy, and pinning needs an accelerator. The
# lines below show what this build says when asked to pin.
try:
    torch.empty(4).pin_memory()
    print(compperf.tr("pin_memory() worked: this build has an accelerator."))
except RuntimeError as error:
    print(compperf.tr("pin_memory() failed: {error}", error=str(error)))

# %%
# The CPU analogue of a copy stream is a thread that copies while another
# computes: ``Tensor.copy_`` and ``torch.mm`` both release the GIL. Whether
# they overlap depends on a free core and on memory bandwidth, which the
# copy needs and the product shares. The thread joins with a timeout, so a
# stuck copy cannot hang the page.
cpu_elements, cpu_n = 2**23, 384
# sphinx_gallery_start_ignore
if os.environ.get("COMPPERF_FAST") == "1":
    cpu_elements, cpu_n = 2**20, 192
# sphinx_gallery_end_ignore
source, target = torch.randn(cpu_elements), torch.empty(cpu_elements)
x = torch.randn(cpu_n, cpu_n)


def cpu_compute():
    torch.mm(x, x)


def cpu_copy():
    target.copy_(source)


def cpu_side_by_side():
    copier = threading.Thread(target=cpu_copy, daemon=True)
    copier.start()
    cpu_compute()
    copier.join(timeout=60)
    if copier.is_alive():
        raise TimeoutError("the copy ran longer than 60 s")


cpu = torch.device("cpu")
cpu_comparison = compperf.interleave(
    {
        "serial": lambda: (cpu_copy(), cpu_compute()),
        "thread": cpu_side_by_side,
    },
    device=cpu,
    budget=1.5,
    num_threads=1,
)
cpu_ratio = cpu_comparison.ratio("thread", "serial")
cpu_verdict = cpu_comparison.faster("thread", "serial", subject="cpu copy")
if cpu_verdict.yes:
    compperf.say(
        "On the CPU, a copy in a second thread overlapped a one-thread "
        "matrix product: both together took {ratio} of one after the other.",
        ratio=cpu_ratio,
    )
elif cpu_verdict.no:
    compperf.say(
        "On the CPU, a copy in a second thread did not overlap a one-thread "
        "matrix product measurably here: both together took {ratio} of one "
        "after the other.",
        ratio=cpu_ratio,
    )
else:
    compperf.say(
        "On the CPU, whether a copy in a second thread overlapped a "
        "one-thread matrix product is unclear here: both together took "
        "{ratio} of one after the other.",
        ratio=cpu_ratio,
    )
print(cpu_comparison.disturbance)

# %%
# The figure shows both ways' times: each bar is the median of the timed
# blocks, its error bar runs from the first to the third quartile.

timed = [cpu_comparison.measurements[name] for name in ("serial", "thread")]
fig, ax = plt.subplots(figsize=(7, 2.4), layout="constrained")
ax.barh(
    [
        compperf.tr("copy, then product"),
        compperf.tr("copy in a second thread"),
    ],
    [m.median * 1e3 for m in timed],
    xerr=[
        [(m.median - m.quartiles[0]) * 1e3 for m in timed],
        [(m.quartiles[1] - m.median) * 1e3 for m in timed],
    ],
    capsize=4,
)
ax.invert_yaxis()
ax.set_xlabel(compperf.tr("time (ms), median and quartiles"))
ax.set_title(compperf.tr("A copy and a matrix product on the CPU"))
plt.show()

# %%
# Summary
# -------
# * A copy overlaps a computation only on another stream, with
#   ``non_blocking=True``, from pinned memory; events and ``wait_stream``
#   order the streams without stopping the CPU.
# * From pageable memory a "non-blocking" copy goes through the CPU and does
#   not overlap.
# * A non-blocking copy to the host may not have arrived when you read it:
#   synchronize the stream (or an event) first.
# * On a CPU the analogue is a second thread, and it overlaps only where a
#   core and memory bandwidth are free.
#
# Exercises
# ---------
# 1. Why does ``side_by_side`` start with
#    ``copy_stream.wait_stream(torch.cuda.current_stream())``?
# 2. A training loop copies each batch to the GPU with
#    ``batch.to("cuda", non_blocking=True)`` from a ``DataLoader`` without
#    ``pin_memory=True``. What does ``non_blocking`` buy it?
# 3. Which event call would you use to time the computation on the default
#    stream alone, without synchronizing the device in between?
#
# Answers
# -------
# 1. The copy writes ``on_device``, which the previous call's work may still
#    use on the default stream; waiting for the default stream keeps the
#    copy from overwriting data that is still being read.
# 2. Little: from pageable memory the copy is staged through a pinned buffer
#    by the CPU, so the CPU waits for most of it. ``pin_memory=True`` makes
#    the ``DataLoader`` pin each batch in a thread of its own (next page,
#    :doc:`/auto_examples/parallelism/plot_4_dataloader_workers`).
# 3. Record one event before and one after the work on the default stream,
#    then ``end.synchronize()`` and ``start.elapsed_time(end)``:
if device.type == "cuda":
    begin, finish = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    a = torch.randn(n, n, device=device)
    begin.record()
    torch.mm(a, a)
    finish.record()
    finish.synchronize()
    print(
        compperf.tr(
            "one product: {ms:.3f} ms between events",
            ms=begin.elapsed_time(finish),
        )
    )
else:
    print(
        compperf.tr(
            "CUDA events need a CUDA device; this is {device}.", device=device
        )
    )
