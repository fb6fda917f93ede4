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
# (PyTorch's C++ operators and, on a GPU, the device) does the computing. The
# program below creates two tensors and combines them. ``make_fx`` runs it once
# and records every operator call that reaches the backend, as an FX graph. The
# code printed below is generated from that graph, not written by hand.


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
# Each operation depends on the operations that produce its inputs, and on
# theirs in turn. Two operations are independent when neither one needs the
# other's result: a scheduler that knew the graph could run them in either
# order, or at the same time. The level of an operation is the length of the
# longest chain of operations it waits for; operations on the same level never
# depend on each other.


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


def print_dependencies(graph_module):
    operations, inputs, level, independent_pairs = dependencies(graph_module)
    # The header is one message with its spaces, so that a translation can
    # line its words up with the columns below.
    print(
        compperf.tr("operation  operator             needs            level")
    )
    for node in operations:
        needs = ", ".join(arg.name for arg in inputs[node]) or "-"
        print(f"{node.name:<10} {node.target!s:<20} {needs:<16} {level[node]}")
    pairs = independent_pairs or compperf.tr("none")
    print(compperf.tr("independent pairs: {pairs}", pairs=pairs))


operations, inputs, level, independent_pairs = dependencies(graph_module)
print_dependencies(graph_module)

# %%
# The picture
# -----------
# Graphviz draws the same graph, one row per level, with the independent
# operations side by side on the top row. An arrow points from an operation to
# the one that uses its result. Drawing needs the ``graphviz`` Python package
# and the ``dot`` program; without them this cell says what is missing, and the
# table above remains the graph's text form.
independent = {name for pair in independent_pairs for name in pair}
edges = [(arg.name, node.name) for node in operations for arg in inputs[node]]
png = None
if graphviz is None:
    print(
        compperf.tr(
            "The graphviz Python package is not installed, so there is no "
            "picture."
        )
    )
    listed = ", ".join(f"{a} -> {b}" for a, b in edges)
    print(compperf.tr("The graph's edges: {edges}", edges=listed))
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
        print(
            compperf.tr(
                "Graphviz's `dot` program is not installed here, so there is no "
                "picture."
            )
        )
        print(compperf.tr("Its source, in the DOT language:"))
        print(drawing.source)

if png is not None:
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    height, width = image.shape[:2]
    fig, ax = plt.subplots(figsize=(width / 150, height / 150 + 0.7))
    ax.imshow(image)
    ax.set_axis_off()
    ax.set_title(compperf.tr("z = x * y + 2 as the backend sees it"))
    ax.text(
        0.5,
        0,
        compperf.tr("z is returned to Python"),
        transform=ax.transAxes,
        ha="center",
        va="top",
    )
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
# operators reached the backend.
with profile(activities=[ProfilerActivity.CPU]) as prof:
    z = program()
    compperf.synchronize(device)
recorded = [
    event
    for event in prof.events()
    if event.name in {"aten::ones", "aten::mul", "aten::add"}
]
recorded.sort(key=lambda event: event.time_range.start)
dispatched = [event.name.removeprefix("aten::") for event in recorded]
program_order = [str(node.target).split(".")[1] for node in operations]
print(compperf.tr("dispatched: {operators}", operators=", ".join(dispatched)))
if dispatched == program_order:
    compperf.say(
        "The operators reached the backend in program order, one call at a "
        "time, although the two ones calls do not depend on each other."
    )
else:
    print(
        compperf.tr(
            "The recorded order differs from the program order: {order}",
            order=program_order,
        )
    )

# %%
# A synchronization point is where Python waits for the queue: when it needs a
# value (``z.tolist()``, ``print(z)``, ``if z.sum() > 0:``) or asks for it
# (``torch.cuda.synchronize()``). Until then, on a GPU, Python runs ahead of
# the device. The page on barriers and blockers measures each of them.
print("z =", z.tolist())

# %%
# Who does schedule from a graph
# ------------------------------
# Two parts of PyTorch do. **Autograd's engine** runs the backward graph that
# the forward pass recorded (each result's ``grad_fn`` and its
# ``next_functions``). It counts, for every node, how many nodes feed it
# gradients, and runs a node only when all of them have run: a real dependency
# scheduler. On CUDA each backward kernel goes to the stream that its forward
# operator used. You can watch the engine: a hook on each node records the
# order in which it ran.
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
if topological:
    compperf.say(
        compperf.tr_plural(
            "The engine ran {n} node, each one after every node that feeds it "
            "gradients. Nothing orders the two AccumulateGrad nodes: they are "
            "independent.",
            "The engine ran {n} nodes, each one after every node that feeds it "
            "gradients. Nothing orders the two AccumulateGrad nodes: they are "
            "independent.",
            len(ran),
        )
    )

# %%
# **Compilers** see the whole graph before anything runs. ``torch.compile``
# hands it to Inductor, which fuses the multiplication and the addition of
# ``x * y + 2`` into one kernel and emits code in an order that respects the
# graph; on CUDA the generated code still launches its kernels on one stream.
# Run a script with the environment variable ``TORCH_LOGS=output_code`` to see
# that code. The chapter :doc:`/auto_examples/compilers/index` measures when
# compiling pays.
#
# Overlap is your job: a second stream and an event
# -------------------------------------------------
# Work overlaps on a GPU only when it sits on different streams (or devices).
# The code below copies data from pinned host memory to the GPU on a second
# stream while the current stream multiplies matrices. CUDA events time each
# task alone, and ``compperf.interleave`` times the two ways in turns, so
# that its verdict on the overlap survives a busy machine:
#
# * ``side.wait_stream(main)``: the side stream starts after the work queued
#   on ``main`` so far;
# * an event recorded on ``side`` after the copies, and ``main.wait_event``:
#   later work on ``main`` may use the copies only once they are done;
# * ``record_stream(main)``: the copies were allocated on ``side`` but are used
#   on ``main``, so the caching allocator must not reuse their memory before
#   ``main`` is done with them.

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
    for label, seconds in (
        (compperf.tr("compute alone"), compute_alone),
        (compperf.tr("copy alone"), copy_alone),
        (compperf.tr("one stream"), on_one_stream),
        (compperf.tr("two streams"), on_two_streams),
    ):
        print(
            compperf.tr(
                "{label:>14}: {time}",
                label=label,
                time=compperf.format_time(seconds),
            )
        )
    overlapped = streams.faster(
        "two streams", "one stream", subject="overlapped: two streams vs one"
    )
    hidden = on_one_stream - on_two_streams
    shorter = min(compute_alone, copy_alone)
    if overlapped.yes:
        compperf.say(
            "On {device} the second stream hid {hidden} of work: {share:.0%} of "
            "the shorter task ran while the other one did.",
            device=device,
            hidden=compperf.format_time(hidden),
            share=hidden / shorter,
        )
    elif overlapped.no:
        compperf.say(
            "On {device} the two streams did not overlap measurably: they took "
            "{two} against {one} on one stream.",
            device=device,
            two=compperf.format_time(on_two_streams),
            one=compperf.format_time(on_one_stream),
        )
    else:
        compperf.say(
            "On {device} it is unclear here whether the two streams overlapped: "
            "two streams over one stream is {ratio}.",
            device=device,
            ratio=streams.ratio("two streams", "one stream"),
        )
elif device.type == "mps":
    compperf.say(
        "PyTorch gives Python no second stream on Apple's MPS backend, so this "
        "page cannot show overlap there. On CUDA, this cell copies 512 MiB to "
        "the GPU on a second stream while the first one multiplies matrices."
    )
else:
    compperf.say(
        "This page runs on a CPU, which has no streams: each operator has "
        "finished when its call returns, so this cell does not run. On CUDA it "
        "copies 512 MiB from pinned host memory to the GPU on a second stream "
        "while the first stream multiplies matrices. The GPU's copy engines "
        "move the data while its cores compute, so two streams take about as "
        "long as the longer task; one stream takes the sum of both."
    )

# %%
# Summary
# -------
# * The dependency graph of a program says which operations need which
#   results; independent operations could run in any order.
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
