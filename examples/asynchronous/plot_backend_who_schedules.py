"""
Who schedules from a graph
==========================

In eager mode nothing schedules the operations of your program by their
dependencies (:doc:`plot_backend_dependency_graph`). You watch the two parts
of PyTorch that do: autograd's engine, which runs the backward graph in
dependency order, and compilers, which see the whole graph. Then you see how
you make independent work overlap yourself on a GPU, with a second stream and
an event.

To run this example yourself, install PyTorch, then ``pip install
matplotlib``, and compperf as :ref:`run-yourself` explains.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the outputs on this page.
import matplotlib.pyplot as plt
import torch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Autograd's engine
# -----------------
# **Autograd's engine** runs the backward graph that the forward pass recorded
# (each result's ``grad_fn`` and its ``next_functions``). It counts, for every
# node, how many nodes feed it gradients, and runs a node only when all of
# them have run: a real dependency scheduler. A hook on each node records the
# order in which it ran; the second line says whether each one ran after every
# node that feeds it gradients (``True``). Nothing orders the two
# ``AccumulateGrad`` nodes, which write ``x.grad`` and ``y.grad``: either may
# come first.
x = torch.ones((1, 2), device=device, requires_grad=True)
y = torch.ones((1, 2), device=device, requires_grad=True)
loss = (x * y + 2).sum()


def label(node):
    if hasattr(node, "variable"):  # AccumulateGrad writes a leaf's .grad.
        return f"AccumulateGrad({'x' if node.variable is x else 'y'})"
    return node.name()


feeds = {}  # For each node, the nodes that send it gradients.
ran = []
stack, seen = [loss.grad_fn], set()
while stack:
    node = stack.pop()
    if node in seen:
        continue
    seen.add(node)
    node.register_prehook(lambda grads, node=node: ran.append(label(node)))
    for child, _ in node.next_functions:
        if child is not None:
            feeds.setdefault(label(child), set()).add(label(node))
            stack.append(child)
loss.backward()
print(compperf.tr("backward ran: {nodes}", nodes=" -> ".join(ran)))
topological = all(
    ran.index(parent) < ran.index(node)
    for node, parents in feeds.items()
    for parent in parents
)
print(compperf.tr("in dependency order: {ok}", ok=topological))

# %%
# The figure draws the backward graph the hooks saw, one row per step away
# from the loss, each node numbered in the order the engine ran it. An arrow
# points from a node to the one it sends gradients to.
depth = {label(loss.grad_fn): 0}
for node in ran:  # parents run first, so their depth is known
    for child, parents in feeds.items():
        if node in parents:
            depth[child] = max(depth.get(child, 0), depth[node] + 1)
rows = {}
for node in ran:
    rows.setdefault(depth[node], []).append(node)
where = {
    node: (column - (len(row) - 1) / 2, -level)
    for level, row in rows.items()
    for column, node in enumerate(row)
}
fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
for child, parents in feeds.items():
    for parent in parents:
        arrow = {"arrowstyle": "->", "shrinkA": 12, "shrinkB": 12}
        ax.annotate("", where[child], where[parent], arrowprops=arrow)
for node, (across, down) in where.items():
    ax.text(
        across, down, f"{ran.index(node) + 1}. {node}", ha="center", va="center",
        bbox={"boxstyle": "round", "facecolor": "#cfe8ff"},
        fontfamily="monospace",  # the nodes' names are code
    )  # fmt: skip
ax.set_xlim(-1.5, 1.5)
ax.set_ylim(-max(rows) - 0.5, 0.5)
ax.set_axis_off()
ax.set_title(compperf.tr("The backward graph, in the order autograd ran it"))
plt.show()

# %%
# Compilers
# ---------
# **Compilers** see the whole graph before anything runs: ``torch.compile``
# hands it to Inductor, which fuses ``x * y + 2`` into one kernel and orders
# its code by the graph, still on one stream (``TORCH_LOGS=output_code`` shows
# that code; :doc:`/auto_examples/compilers/index` measures when it pays).
#
# Overlap is your job: a second stream and an event
# -------------------------------------------------
# Work overlaps on a GPU only when it sits on different streams (or devices).
# On CUDA the cell below copies 512 MiB from pinned host memory to the GPU on
# a second stream while the current stream multiplies matrices:
#
# * ``side.wait_stream(main)``: the side stream starts after the work queued
#   on ``main`` so far;
# * an event recorded on ``side`` after the copies, and ``main.wait_event``:
#   later work on ``main`` may use the copies only once they are done;
# * ``record_stream(main)``: the copies were allocated on ``side`` but are used
#   on ``main``, so the caching allocator must not reuse their memory before
#   ``main`` is done with them.
#
# It prints each task's time alone (CUDA events), the medians of one stream
# and two streams timed in turns by ``compperf.interleave``, then compperf's
# verdict: two streams overlapped when the interval of their time over one
# stream's lies wholly below 1/1.05. *Yes*: the copy engines moved the data
# while the cores computed; the last line gives the time hidden and its share
# of the shorter task. *No*: no measurable overlap; the hidden time is noise.
# *Unclear*: the rounds disagree too much to tell. Elsewhere the cell prints
# one line: a CPU has no streams, and on Apple's MPS backend PyTorch gives
# Python no second stream.

# compperf: cuda-only
if device.type == "cuda":
    main = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    a = torch.randn(4096, 4096, device=device)
    # Eight chunks of 64 MiB: 512 MiB in pinned host memory.
    chunks = [torch.randn(4096, 4096).pin_memory() for _ in range(8)]

    def compute():
        for _ in range(10):
            b = torch.mm(a, a)
        return b

    def copy():
        return [chunk.to(device, non_blocking=True) for chunk in chunks]

    def one_stream():
        compute()
        return copy()

    def two_streams():
        side.wait_stream(main)
        with torch.cuda.stream(side):
            copies = copy()
        copied = torch.cuda.Event()
        copied.record(side)
        compute()
        main.wait_event(copied)
        for tensor in copies:
            tensor.record_stream(main)
        return copies

    def device_time(fn, runs=3):
        """The shortest device time of fn over a few runs, in seconds (CUDA events)."""
        fn()  # A warm-up run, not timed.
        times = []
        for _ in range(runs):
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return min(times)

    compute_alone = device_time(compute)
    copy_alone = device_time(copy)
    # One stream against two in interleaved rounds: compperf decides "overlapped".
    streams = compperf.interleave(
        {"one stream": one_stream, "two streams": two_streams}, device=device
    )
    on_one_stream = streams.measurements["one stream"].median
    on_two_streams = streams.measurements["two streams"].median
    print(compperf.tr("compute alone: {t:time}", t=compute_alone))
    print(compperf.tr("copy alone: {t:time}", t=copy_alone))
    print(compperf.tr("one stream: {t:time}", t=on_one_stream))
    print(compperf.tr("two streams: {t:time}", t=on_two_streams))
    # Overlapped: two streams' time over one stream's lies below 1 / 1.05.
    ratio = streams.ratio("two streams", "one stream")
    overlapped = compperf.conclude(
        compperf.tr("two streams overlapped"),
        str(device),
        ratio.low,
        ratio.high,
        below=1 / 1.05,
        disturbed=streams.disturbance.disturbed,
        value=ratio.estimate,
    )
    print(overlapped)
    hidden = on_one_stream - on_two_streams
    share = hidden / min(compute_alone, copy_alone)
    print(compperf.tr("hidden: {t:time} ({s:.0%})", t=hidden, s=share))
else:
    print(compperf.tr("no second stream on {device}: not run", device=device))

# %%
# Summary
# -------
# * Autograd's engine schedules the backward graph by its dependencies: a
#   node runs only after every node that sends it gradients.
# * Compilers such as Inductor see the whole graph, and order (and fuse) the
#   code they generate from it.
# * To overlap independent work on a GPU, put it on a second stream and order
#   the streams with events (``wait_stream``, ``wait_event``), with
#   ``record_stream`` for memory used across streams.
#
# Exercises
# ---------
# 1. Which of the backward nodes of this page may run in either order, and
#    why?
# 2. In the two-stream code, what can go wrong if you leave out
#    ``main.wait_event(copied)``? And if you leave out ``record_stream``?
#
# Answers
# -------
# 1. The two ``AccumulateGrad`` nodes: both get their gradient from
#    ``MulBackward0`` and neither feeds the other, so the engine may run them
#    in either order. The line below prints the order of this run.
print(compperf.tr("accumulated last: {node}", node=ran[-1]))

# %%
# 2. Without the event, later work on ``main`` can read the copies while the
#    side stream is still writing them: the results are wrong, sometimes, and
#    nothing raises an error. Without ``record_stream``, the caching allocator
#    may give the copies' memory to a new tensor on ``side`` as soon as Python
#    drops them, while ``main`` still reads it.
