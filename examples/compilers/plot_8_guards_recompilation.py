"""
Guards and recompilation
========================

A compiled graph is only valid for inputs like the ones it was made for.
You see the checks (guards) that ``torch.compile`` attaches to each graph,
and watch a new shape, dtype or Python constant trigger a recompile in the
compiler's own log.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. Nothing else is needed: the graphs on this page
are captured but never turned into machine code.
"""

# %%
# Why it matters
# --------------
# Dynamo traces your function with the inputs of the first call and assumes
# what it saw: the shapes, the dtypes, the value of every Python number. Each
# assumption becomes a guard, checked before each call. When a guard fails,
# Dynamo traces and compiles again, and a function that recompiles often can
# spend more time compiling than running. How to tell Dynamo in advance that
# a size varies is the subject of the next lesson,
# :doc:`/auto_examples/compilers/plot_8b_dynamic_shapes`. The first line
# says which device and software produced the outputs below.

import contextlib
import logging
import re

import matplotlib.pyplot as plt
import torch
from torch._dynamo.utils import counters

import compperf
from compperf.i18n import parts, table

device = compperf.try_gpu()
print(compperf.environment(device))

# %%
# Two helpers
# -----------
# The first is a ``torch.compile`` backend that records each graph Dynamo
# hands it and runs it unchanged: graphs are what you count here, and no code
# generation (and no C++ compiler) is needed. The second switches on some of
# the compiler's logs with ``torch._logging.set_logs``, the API behind the
# ``TORCH_LOGS`` environment variable, and collects their messages so that
# the page can print them, without the timestamps and file paths of the usual
# log lines. ``fresh_start`` gives each experiment a clean state:
# ``torch.compiler.reset()`` forgets compiled code but not Dynamo's counters,
# so it clears ``torch._dynamo.utils.counters`` as well.

graphs = []


def recording_backend(graph_module, example_inputs):
    """A torch.compile backend that keeps each graph and runs it unchanged."""
    graphs.append(graph_module)
    return graph_module.forward


def fresh_start():
    """Forget compiled code, recorded graphs and Dynamo's counters."""
    torch.compiler.reset()
    counters.clear()
    graphs.clear()


def readable(message):
    """A log message with each file path shortened to the file name."""
    return re.sub(r"(?:[^\s\"']*/)+([^\s/\"']+\.py)", r"\1", message)


@contextlib.contextmanager
def compiler_log(**artifacts):
    """Switch on torch log artifacts (e.g. recompiles=True); collect their messages.

    The torch loggers' own handlers, which write to standard error, are set aside
    meanwhile; the default log settings come back afterwards.
    """
    messages = []
    collect = logging.Handler()
    collect.emit = lambda r: messages.append(readable(r.getMessage()))
    torch._logging.set_logs(**artifacts)
    saved = {}
    for name in list(logging.root.manager.loggerDict):
        log = logging.getLogger(name)
        if name.split(".")[0] == "torch" and log.handlers:
            saved[log], log.handlers = log.handlers, [collect]
    try:
        yield messages
    finally:
        for log, handlers in saved.items():
            log.handlers = handlers
        torch._logging.set_logs()  # the default levels


# %%
# The guards of one graph
# -----------------------
# ``scaled`` multiplies a tensor by a Python number. The ``guards`` log prints
# the full guard tree of each new graph; the cell keeps the guards on the two
# arguments. Look for ``TENSOR_MATCH`` (dtype, device, size and stride of
# ``x``) and ``EQUALS_MATCH`` (the value of ``scale``, baked into the graph as
# a constant). The first line counts the graphs compiled; the guards follow,
# one a line.


def scaled(x, scale):
    return torch.sin(x) * scale + 1


def argument_guards(messages):
    """Guard lines about the function's arguments, without the source comments."""
    lines = []
    for message in messages:
        for line in message.splitlines():
            kind, _, rest = line.strip(" |+-").partition(": ")
            if "L['" in rest and kind.endswith("MATCH"):
                lines.append(f"{kind}: {rest.split('  #')[0].strip()}")
    return lines


fresh_start()
compiled = torch.compile(scaled, backend=recording_backend)
x4 = torch.randn(4, device=device)
with compiler_log(guards=True) as messages:
    compiled(x4, 2.0)
first_guards = argument_guards(messages)
print(compperf.tr("graphs compiled: {n}", n=len(graphs)))
for line in first_guards:
    print(" ", line)

# %%
# What triggers a recompile
# -------------------------
# Now a series of calls, each changing one thing, named by its arguments:
# the same input again, a new shape (8), another shape (16), a new dtype
# (float64), a new constant (3.0) and another one (4.0). The ``recompiles``
# log says which guard failed every time Dynamo compiles again; the table
# after it counts the graphs from the recording backend call by call. Look at
# the two shape changes: after the first one Dynamo recompiles with the size
# as a symbol (*automatic dynamic shapes*), so the next new size needs no new
# graph. A new value of ``scale`` does the same for the number. The last line
# counts the calls (the first one above included), the graphs, the recompiles
# in the log, and the unique graphs in Dynamo's counter.

x8 = torch.randn(8, device=device)
x16 = torch.randn(16, device=device)
calls = {
    "x4, 2.0": (x4, 2.0),
    "x8, 2.0": (x8, 2.0),
    "x16, 2.0": (x16, 2.0),
    "x16.double(), 2.0": (x16.double(), 2.0),
    "x16, 3.0": (x16, 3.0),
    "x16, 4.0": (x16, 4.0),
}
recompiled = {}
with compiler_log(recompiles=True) as messages:
    for change, (x, scale) in calls.items():
        before = len(graphs)
        torch.testing.assert_close(compiled(x, scale), scaled(x, scale))
        recompiled[change] = len(graphs) - before
recompile_messages = [m for m in messages if m.startswith("Recompiling")]
for message in recompile_messages:
    for line in message.splitlines():
        if (
            "User stack trace" in line
        ):  # the source lines that follow repeat the code
            break
        print(line.split("  #")[0].rstrip())
print()
with parts():
    header = [compperf.tr("call"), compperf.tr("new graphs")]
print(table(header, [(f"compiled({c})", n) for c, n in recompiled.items()]))
n, g, r = len(calls) + 1, len(graphs), len(recompile_messages)
u = counters["stats"]["unique_graphs"]
print(compperf.tr("calls: {n}, graphs: {g}", n=n, g=g))
print(compperf.tr("recompiles in the log: {r}, unique graphs: {u}", r=r, u=u))

# %%
# The same count as a figure: a bar is a call that compiled a new graph.

fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
labels = [f"compiled({c})" for c in recompiled]
ax.barh(labels, list(recompiled.values()))
ax.set_yticks(range(len(labels)), labels, fontfamily="monospace")
ax.invert_yaxis()
ax.xaxis.get_major_locator().set_params(integer=True)
ax.set_xlabel(compperf.tr("new graphs"))
ax.set_title(compperf.tr("Graphs Dynamo compiled, call by call"))
plt.show()

# %%
# Summary
# -------
# * Every compiled graph carries guards: the type, dtype, device, shape and
#   stride of each tensor, the value of each Python number it used, and global
#   state such as the thread count and grad mode.
# * A failed guard means a recompile; ``torch._logging.set_logs(recompiles=True)``
#   (or ``TORCH_LOGS="recompiles"``) says which guard failed.
# * After a first change of size or number, Dynamo makes it a symbol by
#   itself (automatic dynamic shapes), so later changes reuse the graph.
#
# Exercises
# ---------
# 1. Call ``compiled`` (the ``scaled`` function) with ``requires_grad=True`` on
#    its input. Which guard fails?
# 2. Change the thread count with ``torch.set_num_threads`` between two calls
#    of a compiled function. Does it recompile?


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. TENSOR_MATCH on x: requires_grad changed (the log line says so).
fresh_start()
with compiler_log(recompiles=True) as messages:
    compiled(torch.randn(4), 2.0)
    compiled(torch.randn(4, requires_grad=True), 2.0)
print([m for m in messages if m.startswith("Recompiling")])

# 2. Yes: the thread count is part of the global-state guard. The cell
#    switches to another count than the current one (2 where the process
#    runs one thread, as under OMP_NUM_THREADS=1, else 1).
fresh_start()
threads = torch.get_num_threads()
compiled(torch.randn(4), 2.0)
torch.set_num_threads(2 if threads == 1 else 1)
compiled(torch.randn(4), 2.0)
torch.set_num_threads(threads)
n = len(graphs)
print(compperf.tr("graphs, one thread count and then another: {n}", n=n))
