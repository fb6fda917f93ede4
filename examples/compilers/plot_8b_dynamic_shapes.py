"""
Dynamic shapes and the recompile limit
======================================

A model that sees a new size on every batch must not compile on every batch.
You choose between ``dynamic=True`` and ``torch._dynamo.mark_dynamic`` by
counting the graphs each one makes, see what each does when the code needs a
fixed size, and hit the recompile limit, where Dynamo stops compiling.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. Nothing else is needed: the graphs on this page
are captured but never turned into machine code.
"""

# %%
# Why it matters
# --------------
# A failed guard means a recompile (the previous lesson). A value that cannot
# become a symbol, such as a Python number that the code loops on,
# recompiles at every new value, and past a limit Dynamo gives up and runs
# the function in eager mode. Two helpers follow the first line (which says
# which device and software produced the outputs below): a ``torch.compile``
# backend that keeps each graph and runs it unchanged (graphs are what you
# count here), and ``dynamo_log``, which collects what the ``torch`` loggers
# write so that the page can print it.

import contextlib
import logging

import matplotlib.pyplot as plt
import torch

import compperf

device = compperf.try_gpu()
print(compperf.environment(device))
graphs = []


def recording_backend(graph_module, example_inputs):
    """A torch.compile backend that keeps each graph and runs it unchanged."""
    graphs.append(graph_module)
    return graph_module.forward


def fresh_start():
    """Forget compiled code and recorded graphs."""
    torch.compiler.reset()
    graphs.clear()


@contextlib.contextmanager
def dynamo_log():
    """Collect the messages of the torch loggers instead of writing them out."""
    messages = []
    collect = logging.Handler()
    collect.emit = lambda r: messages.append(r.getMessage())
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
# ``dynamic=False`` makes a new graph for every new size; ``dynamic=None``,
# the default, makes a size a symbol after its first change. The cell runs
# five batch sizes through each choice and counts graphs. Sizes 0 and 1 get
# graphs of their own in PyTorch, so the sizes start at 2.

SIZES = [2, 3, 5, 8, 13]


def batch_sum(x):
    return (torch.sin(x) * 2).sum(dim=1)


def graphs_for_sizes(mark=False, **options):
    """Compile batch_sum with options, call it at each size; count the graphs."""
    fresh_start()
    compiled_fn = torch.compile(
        batch_sum, backend=recording_backend, **options
    )
    for size in SIZES:
        x = torch.randn(size, 8, device=device)
        if mark:
            torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled_fn(x), batch_sum(x))
    return len(graphs)


choices = {
    "dynamic=False": graphs_for_sizes(dynamic=False),
    "dynamic=None": graphs_for_sizes(),
    "dynamic=True": graphs_for_sizes(dynamic=True),
    "mark_dynamic(x, 0)": graphs_for_sizes(mark=True),
}
print(compperf.tr("batch sizes: {s}", s=SIZES))
for choice, count in choices.items():
    print(compperf.tr("{c}: graphs: {n}", c=choice, n=count))
fewest = min(choices.values())
best = ", ".join(c for c, count in choices.items() if count == fewest)
print(compperf.tr("fewest graphs: {c}", c=best))

# %%
# The same counts as a figure: a shorter bar is fewer compiles.

fig, ax = plt.subplots(figsize=(7, 2.2), layout="constrained")
ax.barh(list(choices), list(choices.values()))
ax.set_yticks(range(len(choices)), list(choices), fontfamily="monospace")
ax.invert_yaxis()
ax.xaxis.get_major_locator().set_params(integer=True)
ax.set_xlabel(compperf.tr("graphs compiled"))
ax.set_title(compperf.tr("Graphs for five batch sizes, by compile choice"))
plt.show()

# %%
# The two differ when the code needs a fixed size: ``add_offsets`` adds four
# numbers, so the batch must be 4. ``mark_dynamic`` stops with an error that
# says what to do (a dash would mean no error); ``dynamic=True`` compiles
# without a word and fixes the size to 4, as the graph's input shape shows.
# The last line is ``batch_sum`` under ``dynamic=True``: both sizes stay
# symbols.


def add_offsets(x):
    return x + torch.arange(4.0, device=x.device)


def input_shapes(graph_module):
    """The shapes of the graph's tensor inputs (symbols where dynamic)."""
    nodes = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    values = [node.meta["example_value"] for node in nodes]
    return [str(tuple(v.shape)) for v in values if isinstance(v, torch.Tensor)]


fresh_start()
marked = torch.randn(4, device=device)
torch._dynamo.mark_dynamic(marked, 0)
with dynamo_log():  # keeps Dynamo's own report of the error off standard error
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
# function. ``repeat`` loops a Python number of times: the loop is unrolled
# into the graph, so every new length is a new graph. The cell lowers the
# limit to 4 and calls ``repeat`` with lengths 1 to 6. Look at the warning
# Dynamo logs at the limit, and at the calls after it: still right
# (``assert_close`` checks), but in eager mode. The last line names the
# lengths whose call made no new graph (a dash: every call got one).


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
    dynamo_log() as messages,
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
same = [s for s, n in graphs_after.items() if n == graphs_after.get(s - 1)]
eager = ", ".join(map(str, same)) or "-"
print(compperf.tr("no graph, ran in eager mode: steps {s}", s=eager))

# %%
# In production you may want a recompile to be loud instead:
# ``torch.compiler.set_stance("fail_on_recompile")`` raises at the first one
# (a dash would mean it did not).

fresh_start()
compiled_repeat = torch.compile(repeat, backend=recording_backend)
compiled_repeat(x, 1)
try:
    with torch.compiler.set_stance("fail_on_recompile"):
        compiled_repeat(x, 2)
except RuntimeError as error:
    first = str(error).split(" filename:")[0]  # then the path of this file
    stance_error = f"{type(error).__name__}: {first}"
else:
    stance_error = None
print(compperf.tr("fail_on_recompile: {e}", e=stance_error or "-"))

# %%
# Summary
# -------
# * After a first change, Dynamo makes a size or number dynamic by itself;
#   ``dynamic=True`` does it for everything from the start, ``mark_dynamic``
#   for one dimension, with an error if the code fixes that dimension.
# * Past ``recompile_limit`` graphs per function, Dynamo stops compiling and
#   runs it in eager mode; ``set_stance("fail_on_recompile")`` turns any
#   recompile into an error.
#
# Exercises
# ---------
# 1. Mark the input of ``add_offsets`` with
#    ``torch._dynamo.maybe_mark_dynamic(x, 0)`` instead of ``mark_dynamic``.
#    Does Dynamo still raise?
# 2. Rewrite ``repeat`` so that the number of steps is a tensor and the loop
#    becomes one graph for every length. Hint: ``torch.cond`` handles
#    branches, not loops; think about what you can compute without a loop.


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. No: maybe_mark_dynamic is a hint, and Dynamo fixes the size to 4 as
#    dynamic=True does.
fresh_start()
hinted = torch.randn(4, device=device)
torch._dynamo.maybe_mark_dynamic(hinted, 0)
torch.compile(add_offsets, backend=recording_backend)(hinted)
shapes = ", ".join(input_shapes(graphs[0]))
print(compperf.tr("maybe_mark_dynamic, graph input shape: {s}", s=shapes))


# 2. sin applied n times has no closed form, but many loops do: for
#    example, multiplying n times by 2 is multiplying once by 2**n.
def times_two(x, steps):
    return x * torch.pow(2.0, steps)


fresh_start()
compiled_times_two = torch.compile(times_two, backend=recording_backend)
for steps in range(1, 7):
    compiled_times_two(x, torch.tensor(float(steps)))
print(compperf.tr("graphs for steps 1 to 6 as a tensor: {n}", n=len(graphs)))
