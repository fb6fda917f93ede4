"""
The frontend, the backend and the dependency graph
==================================================

You record the operations that the program ``z = x * y + 2`` hands to PyTorch's
backend and find out which of them depend on each other. Then you see who uses
that graph in PyTorch (not a CUDA stream, which runs kernels in queue order)
and how you make independent work overlap yourself, with a second stream.

To run this example yourself, install PyTorch, then ``pip install matplotlib
graphviz``, and compperf as :ref:`run-yourself` explains. The picture also
needs Graphviz's ``dot`` program (``apt-get install graphviz`` or ``brew
install graphviz``); without it the page prints the graph as text.
"""

# %%
# The machine and the device
# --------------------------
# The first lines say which device and software produced the outputs on this page.
import io

import matplotlib.image
import matplotlib.pyplot as plt
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.profiler import ProfilerActivity, profile

import compperf

try:
    import graphviz
except ImportError:  # It is optional: only the picture needs it.
    graphviz = None

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# The program
# -----------
# Your Python code is the frontend: it decides what to compute. The backend
# (PyTorch's C++ operators and, on a GPU, the device) does the computing.
# ``make_fx`` runs the program below once and records every operator call
# that reaches the backend, as an FX graph; the code printed below is
# generated from that graph.


def program():
    x = torch.ones((1, 2), device=device)
    y = torch.ones((1, 2), device=device)
    z = x * y + 2
    return z


graph_module = make_fx(program)()
print(graph_module.code.strip())

# %%
# Who depends on whom
# -------------------
# Two operations are independent when neither one needs the other's result,
# directly or through others: a scheduler that knew the graph could run them
# in either order, or at the same time. The level of an operation is the
# length of the longest chain of operations it waits for. The table gives
# each operation's operator, the operations it needs and its level; the line
# after it lists the independent pairs ("-" where there are none).


def dependencies(graph_module):
    """The operations of an FX graph, their inputs, levels and independent pairs."""
    operations = [
        node for node in graph_module.graph.nodes if node.op == "call_function"
    ]
    inputs = {
        node: [arg for arg in node.all_input_nodes if arg in operations]
        for node in operations
    }
    ancestors, level = {}, {}
    # FX keeps the nodes in an order where inputs come first.
    for node in operations:
        ancestors[node] = set().union(
            *(ancestors[arg] | {arg} for arg in inputs[node])
        )
        level[node] = max((level[arg] + 1 for arg in inputs[node]), default=0)
    independent_pairs = [
        (first.name, second.name)
        for i, first in enumerate(operations)
        for second in operations[i + 1 :]
        if first not in ancestors[second] and second not in ancestors[first]
    ]
    return operations, inputs, level, independent_pairs


header = compperf.tr("operation  operator             needs            level")


def print_dependencies(graph_module):
    operations, inputs, level, independent_pairs = dependencies(graph_module)
    print(header)
    for node in operations:
        needs = ", ".join(arg.name for arg in inputs[node]) or "-"
        print(f"{node.name:<10} {node.target!s:<20} {needs:<16} {level[node]}")
    pairs = independent_pairs or "-"
    print(compperf.tr("independent pairs: {pairs}", pairs=pairs))


operations, inputs, level, independent_pairs = dependencies(graph_module)
print_dependencies(graph_module)

# %%
# The picture
# -----------
# Graphviz draws the same graph, one row per level, with the independent
# operations side by side on the top row. An arrow points from an operation to
# the one that uses its result. Without the ``graphviz`` package or the
# ``dot`` program this cell says which is missing and prints the graph as
# text instead: its edges, or its source in Graphviz's DOT language.
independent = {name for pair in independent_pairs for name in pair}
edges = [(arg.name, node.name) for node in operations for arg in inputs[node]]
png = None
if graphviz is None:
    print(compperf.tr("no picture: the graphviz package is not installed"))
    listed = ", ".join(f"{a} -> {b}" for a, b in edges)
    print(compperf.tr("edges: {edges}", edges=listed))
else:
    drawing = graphviz.Digraph(graph_attr={"rankdir": "TB", "dpi": "150"})
    drawing.attr(
        "node", shape="box", style="rounded,filled", fontname="Helvetica"
    )
    for node in operations:
        colour = "#cfe8ff" if node.name in independent else "#eeeeee"
        drawing.node(
            node.name, f"{node.name}\n{node.target}", fillcolor=colour
        )
    for start, end in edges:
        drawing.edge(start, end)
    drawing.node("z", "z", shape="plaintext", style="")
    drawing.edge(operations[-1].name, "z")
    try:
        png = drawing.pipe(format="png")
    except graphviz.ExecutableNotFound:
        print(compperf.tr("no picture: dot is not installed; the DOT source:"))
        print(drawing.source)

if png is not None:
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    height, width = image.shape[:2]
    fig, ax = plt.subplots(figsize=(width / 150, height / 150 + 0.7))
    ax.imshow(image)
    ax.set_axis_off()
    ax.set_title(compperf.tr("z = x * y + 2 as the backend sees it"))
    returned = compperf.tr("z is returned to Python")
    ax.text(0.5, 0, returned, transform=ax.transAxes, ha="center", va="top")
    fig.tight_layout()
    plt.show()

# %%
# What eager PyTorch does with the graph: nothing
# -----------------------------------------------
# In eager mode no scheduler looks at this graph. Each Python call hands its
# operator to the backend at once, in program order. On a CPU the operator runs
# before the call returns. On CUDA it launches a kernel on the *current
# stream*, and a stream runs its kernels one after another, in the order they
# were launched: the two independent ``ones`` kernels run one after the other,
# never at the same time. ``torch.profiler`` records the order in which the
# operators reached the backend; the two lines below compare it with the
# program's order.
with profile(activities=[ProfilerActivity.CPU]) as prof:
    z = program()
    compperf.synchronize(device)
names = {"aten::ones", "aten::mul", "aten::add"}
recorded = [event for event in prof.events() if event.name in names]
recorded.sort(key=lambda event: event.time_range.start)
dispatched = [event.name.removeprefix("aten::") for event in recorded]
program_order = [str(node.target).split(".")[1] for node in operations]
print(compperf.tr("dispatched: {ops}", ops=", ".join(dispatched)))
print(compperf.tr("program order: {ops}", ops=", ".join(program_order)))

# %%
# Python waits for the queue only where it needs a value (``z.tolist()``,
# ``print(z)``) or asks for it (``torch.cuda.synchronize()``); until then, on
# a GPU, it runs ahead of the device.
print("z =", z.tolist())

# %%
# Who does schedule from a graph
# ------------------------------
# Two parts of PyTorch do. **Autograd's engine** runs the backward graph that
# the forward pass recorded (each result's ``grad_fn`` and its
# ``next_functions``). It counts, for every node, how many nodes feed it
# gradients, and runs a node only when all of them have run: a real dependency
# scheduler. A hook on each node records the order in which it ran; the
# second line says whether each one ran after every node that feeds it
# gradients (``True``). Nothing orders the two ``AccumulateGrad`` nodes, which
# write ``x.grad`` and ``y.grad``: either may come first.
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
# * Eager PyTorch does not schedule from that graph: each call reaches the
#   backend in program order, and a CUDA stream runs its kernels in the order
#   they were queued.
# * Autograd's engine schedules the backward graph by its dependencies, and
#   compilers such as Inductor order (and fuse) the code they generate from
#   the graph.
# * To overlap independent work on a GPU, put it on a second stream and order
#   the streams with events (``wait_stream``, ``wait_event``), with
#   ``record_stream`` for memory used across streams.
#
# Exercises
# ---------
# 1. Which operations of ``z = x * y + 2`` are independent, and in which order
#    does a CUDA stream run them?
# 2. Draw the dependencies of ``c = (x + 1) @ (y * 2)``. Which operations are
#    independent, and what are their levels?
# 3. In the two-stream code, what can go wrong if you leave out
#    ``main.wait_event(copied)``? And if you leave out ``record_stream``?
#
# Answers
# -------
# 1. The two ``ones`` calls. A stream runs them in the order Python launched
#    them: first ``x``'s, then ``y``'s.
# 2. The code below records the program with ``make_fx`` and reuses the
#    functions above.


def second_program():
    x = torch.ones((2, 2), device=device)
    y = torch.ones((2, 2), device=device)
    return (x + 1) @ (y * 2)


print_dependencies(make_fx(second_program)())

# %%
# 3. Without the event, later work on ``main`` can read the copies while the
#    side stream is still writing them: the results are wrong, sometimes, and
#    nothing raises an error. Without ``record_stream``, the caching allocator
#    may give the copies' memory to a new tensor on ``side`` as soon as Python
#    drops them, while ``main`` still reads it.
