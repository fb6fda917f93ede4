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
#   copies into a pinned staging buffer on the CPU, so the copy overlaps
#   little or not at all.
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


# %%
# On a GPU: what overlapped
# -------------------------
# ``compperf.interleave`` times five ways in turns, synchronizing the whole
# device around each block: the copy alone, the computation alone (a few
# matrix products), both one after the other on one stream, and both side by
# side on two streams, once from pinned and once from pageable memory. Each
# way is named by the call it times: ``copy(pinned)``, ``compute()``,
# ``one_stream()`` (both one after the other) and ``side_by_side(pinned)``,
# ``side_by_side(pageable)``. A line per way gives its median; the next, the
# copy's time between two events on its own stream and the bandwidth that
# makes.
#
# The copy overlapped the computation when both together on two streams took
# more than 5 % less time than one after the other on one stream, with the
# whole 95 % interval of the ratio on that side: ``Comparison.faster``
# decides it, once from pinned and once from pageable memory. Each verdict
# line prints the claim "faster", the way, the outcome and the interval of
# its time over the time of ``one_stream()``, against the threshold
# 1 / 1.05: *yes* when the whole interval lies below it (the copy
# overlapped), *no* when it lies at it or above (the copy did not overlap
# measurably here), *unclear* when it straddles it or the machine was
# disturbed.
#
# What a GPU shows: a copy from pinned memory on a second stream runs on a
# copy engine while the default stream computes, and both together take about
# as long as the longer of the two. From pageable memory the call returns only
# after the CPU has staged most of the data, so the computation starts late
# and both together take about as long as one after the other, or longer. A
# build without a CUDA device measures none of this; its line says so, and the
# next two cells that need one print nothing there.


# compperf: cuda-only
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

    def one_stream():
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
            "one_stream()": one_stream,
            "side_by_side(pinned)": side_by_side(pinned),
            "side_by_side(pageable)": side_by_side(pageable),
            "copy(pinned)": lambda: copy(pinned),
            "compute()": compute,
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


if device.type == "cuda":
    comparison, copy_ms = copy_and_compute_on_cuda()
    for name in comparison.names:
        print(comparison.measurements[name])
    copy_s = copy_ms / 1e3  # elapsed_time() is in milliseconds
    rate = elements * 4 / copy_s  # bytes per second
    print(compperf.tr("copy: {t:time}, {b:bytes}/s", t=copy_s, b=rate))
    gpu_verdicts = {}
    for memory in ("pinned", "pageable"):
        way = f"side_by_side({memory})"
        gpu_verdicts[memory] = comparison.faster(
            way, "one_stream()", subject=way
        )
        print(gpu_verdicts[memory])
else:
    gpu_verdicts = {}
    print(compperf.tr("no CUDA device: nothing measured on a GPU here"))

# %%
# The second mistake: reading too early
# -------------------------------------
# A non-blocking copy from the device to pinned host memory returns at once;
# the values arrive when the stream gets to the copy. The code below keeps
# the stream busy with matrix products, queues the copy of a tensor of sevens
# into a pinned tensor of zeros, reads it at once, then synchronizes and reads
# again. The two lines count the values that were not sevens in each read,
# out of ``elements``.
#
# What a GPU shows: the read before synchronizing can find old zeros where
# the sevens have not arrived, and the read after it finds only sevens. Even
# where the first read happens to find every value, nothing guarantees it:
# only the synchronization does. On a build without a CUDA device the copy is
# synchronous and cannot be read too early; the cell prints nothing there.


# compperf: cuda-only
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


if device.type == "cuda":
    wrong_early, wrong_late = read_too_early_on_cuda()
    print(compperf.tr("not sevens, read at once: {n}", n=wrong_early))
    print(compperf.tr("not sevens, after synchronizing: {n}", n=wrong_late))

# %%
# On a CPU: the analogue
# ----------------------
# A CPU has no copy engine and no streams: ``non_blocking=True`` between two
# CPU tensors is an ordinary copy, and pinning needs an accelerator. The
# line below shows what this build says when asked to pin: that it worked,
# where there is an accelerator, or PyTorch's error.
try:
    torch.empty(4).pin_memory()
    print(compperf.tr("pin_memory() worked: this build has an accelerator."))
except RuntimeError as error:
    print(compperf.tr("pin_memory() failed: {e}", e=str(error)))

# %%
# The CPU analogue of a copy stream is a thread that copies while another
# computes: ``Tensor.copy_`` and ``torch.mm`` both release the GIL. Whether
# they overlap depends on a free core and on memory bandwidth, which the
# copy needs and the product shares. The thread joins with a timeout, so a
# stuck copy cannot hang the page.
#
# ``Comparison.faster`` decides whether the copy in a second thread
# overlapped the product, as on the GPU: its line prints the claim "faster",
# the two ways, the outcome and the interval of the threaded time over the
# time one after the other, against 1 / 1.05. *yes*: the copy overlapped the
# one-thread matrix product; *no*: it did not overlap measurably here;
# *unclear*: this run cannot tell. The last line says what compperf saw of
# the rest of the machine.
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
copy_then_product = compperf.tr("copy, then product")
in_a_thread = compperf.tr("copy in a second thread")
cpu_comparison = compperf.interleave(
    {
        copy_then_product: lambda: (cpu_copy(), cpu_compute()),
        in_a_thread: cpu_side_by_side,
    },
    device=cpu,
    budget=1.5,
    num_threads=1,
)
cpu_verdict = cpu_comparison.faster(in_a_thread, copy_then_product)
print(cpu_verdict)
print(cpu_comparison.disturbance)

# %%
# The figure shows both ways' times: each bar is the median of the timed
# blocks, its error bar runs from the first to the third quartile.

names = list(cpu_comparison.names)
timed = [cpu_comparison.measurements[name] for name in names]
medians = [m.median * 1e3 for m in timed]
left = [(m.median - m.quartiles[0]) * 1e3 for m in timed]
right = [(m.quartiles[1] - m.median) * 1e3 for m in timed]
fig, ax = plt.subplots(figsize=(7, 2.4), layout="constrained")
ax.barh(names, medians, xerr=[left, right], capsize=4)
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
# * From pageable memory a "non-blocking" copy goes through the CPU and
#   overlaps little or not at all.
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
#    the ``DataLoader`` pin each batch: with ``num_workers > 0`` in a thread
#    of its own, without workers in the main thread (next page,
#    :doc:`/auto_examples/parallelism/plot_4_dataloader_workers`).
# 3. Record one event before and one after the work on the default stream,
#    then ``end.synchronize()`` and ``start.elapsed_time(end)`` (in
#    milliseconds). The line below gives that time; CUDA events need a CUDA
#    device, and a build without one prints nothing here.

# compperf: cuda-only
if device.type == "cuda":
    begin, finish = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    a = torch.randn(n, n, device=device)
    begin.record()
    torch.mm(a, a)
    finish.record()
    finish.synchronize()
    seconds = begin.elapsed_time(finish) / 1e3
    print(compperf.tr("one product between events: {t:time}", t=seconds))
