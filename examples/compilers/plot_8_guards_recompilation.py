"""
Guards and recompilation
========================

A compiled graph is only valid for inputs like the ones it was made for.
You see the checks (guards) that ``torch.compile`` attaches to each graph,
watch a new shape, dtype or Python constant trigger a recompile in the
compiler's own log, choose between ``dynamic=True`` and
``torch._dynamo.mark_dynamic``, and hit the recompile limit.

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
# Dynamo traces and compiles again. A model that sees a new sequence length on
# every batch compiles again at the second length; Dynamo then makes that
# size a symbol (automatic dynamic shapes, below), and later lengths usually
# reuse the graph. A value that cannot become a symbol, such as a Python
# number that the code loops or branches on, recompiles at every new value:
# such a function can spend more time compiling than running, and past a
# limit Dynamo gives up and runs it in eager mode. The first line says which
# device and software produced the outputs below.

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


def torch_loggers_with_handlers():
    """The loggers of the ``torch`` hierarchy that have handlers of their own."""
    names = [
        name
        for name in logging.root.manager.loggerDict
        if name == "torch" or name.startswith("torch.")
    ]
    return [
        logger for logger in map(logging.getLogger, names) if logger.handlers
    ]


@contextlib.contextmanager
def compiler_log(**artifacts):
    """Switch on torch log artifacts (e.g. recompiles=True); collect their messages.

    Yields a list that fills with the messages logged inside the block, those
    of the artifacts and any warning or error of the ``torch`` loggers. The
    usual handlers, which write to standard error, are set aside meanwhile and
    put back afterwards, with the default log settings.
    """
    messages = []

    class Collect(logging.Handler):
        def emit(self, record):
            messages.append(readable(record.getMessage()))

    before = {
        logger: list(logger.handlers)
        for logger in torch_loggers_with_handlers()
    }
    torch._logging.set_logs(**artifacts)
    collect = Collect()
    loggers = torch_loggers_with_handlers()
    for logger in loggers:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(collect)
    try:
        yield messages
    finally:
        torch._logging.set_logs()  # the default levels (it adds fresh handlers)
        for logger in {*loggers, *torch_loggers_with_handlers()}:
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
        for logger, handlers in before.items():
            for handler in handlers:
                logger.addHandler(handler)


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
# ``dynamic=True`` against ``mark_dynamic``
# -----------------------------------------
# When you know a dimension varies, say so before the first call instead of
# paying for a recompile. Two ways:
#
# * ``torch.compile(fn, dynamic=True)`` treats every size (and every Python
#   number) as a symbol from the first compile on;
# * ``torch._dynamo.mark_dynamic(x, 0)`` marks one dimension of one input. If
#   the code forces that dimension to a fixed value, Dynamo raises an error
#   instead of quietly specializing it.
#
# ``dynamic=False`` goes the other way: a new graph for every new size, and
# ``dynamic=None``, the default, is the automatic way seen above. The cell
# runs the same five batch sizes through each choice and counts graphs; the
# last line names the choices that made the fewest.
# Sizes 0 and 1 are special cases in PyTorch (they get graphs of their own),
# so the sizes start at 2.

SIZES = [2, 3, 5, 8, 13]


def batch_sum(x):
    return (torch.sin(x) * 2).sum(dim=1)


def graphs_for_sizes(compiled_fn, mark=False):
    """Call compiled_fn at each batch size; return the number of graphs made."""
    fresh_start()
    for size in SIZES:
        x = torch.randn(size, 8, device=device)
        if mark:
            torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled_fn(x), batch_sum(x))
    return len(graphs)


choices = {
    "dynamic=False": graphs_for_sizes(
        torch.compile(batch_sum, backend=recording_backend, dynamic=False)
    ),
    "dynamic=None": graphs_for_sizes(
        torch.compile(batch_sum, backend=recording_backend)
    ),
    "dynamic=True": graphs_for_sizes(
        torch.compile(batch_sum, backend=recording_backend, dynamic=True)
    ),
    "mark_dynamic(x, 0)": graphs_for_sizes(
        torch.compile(batch_sum, backend=recording_backend), mark=True
    ),
}
print(compperf.tr("batch sizes: {s}", s=SIZES))
for choice, count in choices.items():
    print(compperf.tr("{c}: graphs: {n}", c=choice, n=count))
fewest = min(choices.values())
best = ", ".join(c for c, count in choices.items() if count == fewest)
print(compperf.tr("fewest graphs: {c}", c=best))

# %%
# The difference between the two shows when the code needs a fixed size.
# ``add_offsets`` adds a tensor of four numbers, so the batch must be 4. With
# ``mark_dynamic`` Dynamo stops with an error that names the marked dimension
# and says what to do. ``dynamic=True`` only asks for sizes to be symbols
# where possible: it compiles without a word and fixes the size to 4 in the
# graph, as the shape of its input shows (a dash on the first line would mean
# no error). The last line shows ``batch_sum`` under ``dynamic=True`` for
# comparison, where both sizes stay symbols.


def add_offsets(x):
    return x + torch.arange(4.0, device=x.device)


def input_shapes(graph_module):
    """The shapes Dynamo recorded for the graph's tensor inputs (symbols where dynamic)."""
    values = [
        node.meta["example_value"]
        for node in graph_module.graph.nodes
        if node.op == "placeholder"
    ]
    return [str(tuple(v.shape)) for v in values if isinstance(v, torch.Tensor)]


fresh_start()
marked = torch.randn(4, device=device)
torch._dynamo.mark_dynamic(marked, 0)
with (
    compiler_log()
):  # keeps Dynamo's own report of the error off standard error
    try:
        torch.compile(add_offsets, backend=recording_backend)(marked)
    except RuntimeError as error:  # a ConstraintViolationError in torch 2.13
        lines = [line.strip(" -") for line in str(error).splitlines()]
        mark_dynamic_error = (
            f"{type(error).__name__}: {lines[0]}\n  {lines[1]}"
        )
    else:
        mark_dynamic_error = None
print(compperf.tr("mark_dynamic: {e}", e=mark_dynamic_error or "-"))
fresh_start()
torch.compile(add_offsets, backend=recording_backend, dynamic=True)(
    torch.randn(4, device=device)
)
dynamic_true_shapes = input_shapes(graphs[0])
shapes = ", ".join(dynamic_true_shapes)
print(compperf.tr("dynamic=True, graph input shape: {s}", s=shapes))
fresh_start()
torch.compile(batch_sum, backend=recording_backend, dynamic=True)(
    torch.randn(4, 8, device=device)
)
batch_sum_shapes = input_shapes(graphs[0])
shapes = ", ".join(batch_sum_shapes)
print(compperf.tr("batch_sum, graph input shape: {s}", s=shapes))

# %%
# The recompile limit
# -------------------
# Dynamo keeps at most ``torch._dynamo.config.recompile_limit`` graphs per
# function (the default is printed below). ``repeat`` runs a loop whose length
# is a Python argument: the loop is unrolled into the graph, so every new
# length is a new graph, with no way to make it dynamic. The cell lowers the
# limit to 4 to keep the page short and calls ``repeat`` with lengths 1 to 6.
# Look at the warning Dynamo logs when it reaches the limit, and at what
# happens to the calls after it: they still return the right result
# (``assert_close`` checks it), but in eager mode. The line after the
# graph counts names the loop lengths whose call made no new graph and so
# ran in eager mode (a dash where every call got a graph).


def repeat(x, steps):
    for _ in range(steps):
        x = torch.sin(x)
    return x


limit = torch._dynamo.config.recompile_limit
print(compperf.tr("default recompile_limit: {n}", n=limit))
LIMIT = 4
fresh_start()
compiled_repeat = torch.compile(repeat, backend=recording_backend)
x = torch.randn(4, device=device)
graphs_after = {}
with (
    torch._dynamo.config.patch(recompile_limit=LIMIT),
    compiler_log() as messages,
):
    for steps in range(1, 7):
        torch.testing.assert_close(compiled_repeat(x, steps), repeat(x, steps))
        graphs_after[steps] = len(graphs)
limit_warnings = [
    m.splitlines()[0] for m in messages if "recompile_limit" in m
]
for warning in limit_warnings:
    print(compperf.tr("logged: {w}", w=warning))
counts = ", ".join(f"steps={s}: {n}" for s, n in graphs_after.items())
print(compperf.tr("graphs after each call: {c}", c=counts))
uncompiled = [
    steps
    for steps, count in graphs_after.items()
    if count == graphs_after.get(steps - 1)
]
eager = ", ".join(map(str, uncompiled)) or "-"
print(compperf.tr("no graph, ran in eager mode: steps {s}", s=eager))

# %%
# In production you often want a recompile to be loud instead. The public
# ``torch.compiler.set_stance("fail_on_recompile")`` raises at the first
# recompile, naming the guard that failed (a dash would mean it did not):

fresh_start()
compiled_repeat = torch.compile(repeat, backend=recording_backend)
compiled_repeat(x, 1)
try:
    with torch.compiler.set_stance("fail_on_recompile"):
        compiled_repeat(x, 2)
except RuntimeError as error:
    stance_error = (
        f"{type(error).__name__}: {readable(str(error).splitlines()[0])}"
    )
else:
    stance_error = None
print(compperf.tr("fail_on_recompile: {e}", e=stance_error or "-"))

# %%
# Summary
# -------
# * Every compiled graph carries guards: the type, dtype, device, shape and
#   stride of each tensor, the value of each Python number it used, and global
#   state such as the thread count and grad mode.
# * A failed guard means a recompile; ``torch._logging.set_logs(recompiles=True)``
#   (or ``TORCH_LOGS="recompiles"``) says which guard failed.
# * After a first change, Dynamo makes a size or number dynamic by itself;
#   ``dynamic=True`` does it for everything from the start, ``mark_dynamic``
#   for one dimension, with an error if the code fixes that dimension.
# * Past ``recompile_limit`` graphs per function, Dynamo stops compiling and
#   runs it in eager mode; ``set_stance("fail_on_recompile")`` turns any
#   recompile into an error.
#
# Exercises
# ---------
# 1. Call ``compiled`` (the ``scaled`` function) with ``requires_grad=True`` on
#    its input. Which guard fails?
# 2. Change the thread count with ``torch.set_num_threads`` between two calls
#    of a compiled function. Does it recompile?
# 3. Rewrite ``repeat`` so that the number of steps is a tensor and the loop
#    becomes one graph for every length. Hint: ``torch.cond`` handles
#    branches, not loops; think about what you can compute without a loop.


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


# 3. sin applied n times has no closed form, but many loops do: for
#    example, multiplying n times by 2 is multiplying once by 2**n.
def times_two(x, steps):
    return x * torch.pow(2.0, steps)


fresh_start()
compiled_times_two = torch.compile(times_two, backend=recording_backend)
for steps in range(1, 7):
    compiled_times_two(x, torch.tensor(float(steps)))
print(compperf.tr("graphs for steps 1 to 6 as a tensor: {n}", n=len(graphs)))
