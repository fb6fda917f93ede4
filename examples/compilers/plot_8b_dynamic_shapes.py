"""
Dynamic shapes and the recompile limit
======================================

A model that sees a new size on every batch must not compile on every batch.
You count the graphs of ``dynamic=True`` and ``torch._dynamo.mark_dynamic``,
see each meet code that needs a fixed size, and hit the recompile limit.

To run this example yourself, install PyTorch (``pip install torch``), and
compperf as :ref:`run-yourself` explains. Nothing else is needed: the graphs on this page
are captured but never turned into machine code.
"""

# %%
# Why it matters
# --------------
# A failed guard means a recompile (the previous lesson), at every new value
# of a Python number the code loops on, up to a limit. The helpers: a backend
# that keeps each graph, ``compiled``, and ``dynamo_log`` for the logs.

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


def compiled(fn, **options):
    """Forget compiled code and graphs; compile fn with the recording backend."""
    torch.compiler.reset()
    graphs.clear()
    return torch.compile(fn, backend=recording_backend, **options)


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
# Declare a varying dimension before the first call: ``torch.compile(fn,
# dynamic=True)`` makes every size and Python number a symbol;
# ``torch._dynamo.mark_dynamic(x, 0)`` one dimension, and raises if the code
# fixes it. ``dynamic=False`` compiles every size; ``dynamic=None`` (default)
# makes a size a symbol once it changes. Sizes start at 2 (0 and 1 get graphs
# of their own).

SIZES = [2, 3, 5, 8, 13]


def batch_sum(x):
    return (torch.sin(x) * 2).sum(dim=1)


def graphs_for_sizes(mark=False, **options):
    """Compile batch_sum with options, call it at each size; count the graphs."""
    compiled_fn = compiled(batch_sum, **options)
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
for choice, count in choices.items():
    print(compperf.tr("{c}: graphs: {n}", c=choice, n=count))
fewest = min(choices.values())
best = ", ".join(c for c, count in choices.items() if count == fewest)
print(compperf.tr("fewest graphs: {c}", c=best))

# %%
# The same counts as a figure: a shorter bar is fewer compiles.

fig, ax = plt.subplots(figsize=(7, 2), layout="constrained")
ax.barh(list(choices), list(choices.values()))
ax.set_yticks(range(len(choices)), list(choices), fontfamily="monospace")
ax.invert_yaxis()
ax.xaxis.get_major_locator().set_params(integer=True)
ax.set_xlabel(compperf.tr("graphs compiled"))
ax.set_title(compperf.tr("Graphs for five batch sizes, by compile choice"))
plt.show()

# %%
# ``add_offsets`` needs a batch of 4: ``mark_dynamic`` stops with an error
# that says what to do (a dash: none), ``dynamic=True`` silently fixes the
# size (the graph's input shape); ``batch_sum``'s sizes stay symbols.


def add_offsets(x):
    return x + torch.arange(4.0, device=x.device)


def input_shapes(graph_module):
    """The shapes of the graph's tensor inputs (symbols where dynamic)."""
    nodes = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    values = [node.meta["example_value"] for node in nodes]
    return [str(tuple(v.shape)) for v in values if isinstance(v, torch.Tensor)]


marked = torch.randn(4, device=device)
torch._dynamo.mark_dynamic(marked, 0)
with dynamo_log():  # keeps Dynamo's own report of the error off standard error
    try:
        compiled(add_offsets)(marked)
    except RuntimeError as error:  # a ConstraintViolationError in torch 2.13
        lines = [line.strip(" -") for line in str(error).splitlines()]
        name = type(error).__name__
        mark_dynamic_error = f"{name}: {lines[0]}\n  {lines[1]}"
    else:
        mark_dynamic_error = None
print(compperf.tr("mark_dynamic: {e}", e=mark_dynamic_error or "-"))
compiled(add_offsets, dynamic=True)(torch.randn(4, device=device))
dynamic_true_shapes = input_shapes(graphs[0])
shapes = ", ".join(dynamic_true_shapes)
print(compperf.tr("dynamic=True, graph input shape: {s}", s=shapes))
compiled(batch_sum, dynamic=True)(torch.randn(4, 8, device=device))
batch_sum_shapes = input_shapes(graphs[0])
shapes = ", ".join(batch_sum_shapes)
print(compperf.tr("batch_sum, graph input shape: {s}", s=shapes))

# %%
# The recompile limit
# -------------------
# Dynamo keeps at most ``torch._dynamo.config.recompile_limit`` graphs per
# function; ``repeat`` unrolls its loop, a graph per length. With the limit at
# 4, see Dynamo's warning, then calls that run right, but in eager mode.


def repeat(x, steps):
    for _ in range(steps):
        x = torch.sin(x)
    return x


limit = torch._dynamo.config.recompile_limit
print(compperf.tr("default recompile_limit: {n}", n=limit))
LIMIT = 4
compiled_repeat = compiled(repeat)
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
# ``set_stance("fail_on_recompile")`` makes a recompile raise (a dash: none).

compiled_repeat = compiled(repeat)
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
# * A size turns dynamic after its first change; ``dynamic=True`` makes all
#   dynamic at once, ``mark_dynamic`` one dimension, checked.
# * Past ``recompile_limit`` graphs, Dynamo runs the function in eager mode;
#   ``set_stance("fail_on_recompile")`` makes a recompile an error.
#
# Exercises
# ---------
# 1. Mark the input of ``add_offsets`` with
#    ``torch._dynamo.maybe_mark_dynamic(x, 0)`` instead of ``mark_dynamic``.
#    Does Dynamo still raise?
# 2. Rewrite ``repeat`` so that the number of steps is a tensor and one graph
#    serves every length. Hint: what can you compute without a loop?


# %%
# Answers
# -------
# Each part answers the exercise with the same number and prints what it
# asks for.

# 1. No: maybe_mark_dynamic is a hint, and Dynamo fixes the size to 4 as
#    dynamic=True does.
hinted = torch.randn(4, device=device)
torch._dynamo.maybe_mark_dynamic(hinted, 0)
compiled(add_offsets)(hinted)
shapes = ", ".join(input_shapes(graphs[0]))
print(compperf.tr("maybe_mark_dynamic, graph input shape: {s}", s=shapes))


# 2. sin applied n times has no closed form, but many loops do: for
#    example, multiplying n times by 2 is multiplying once by 2**n.
def times_two(x, steps):
    return x * torch.pow(2.0, steps)


compiled_times_two = compiled(times_two)
for steps in range(1, 7):
    compiled_times_two(x, torch.tensor(float(steps)))
print(compperf.tr("graphs for steps 1 to 6 as a tensor: {n}", n=len(graphs)))
