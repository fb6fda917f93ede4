"""
Ring against parameter server
=============================

You time an all-reduce between two ranks against the parameter-server
pattern (reduce to one rank, then broadcast), and check both against what
the cost model of one message predicts for them.

To run this example yourself, install PyTorch, then ``pip install
matplotlib numpy``, and compperf as :ref:`run-yourself` explains. It starts
its processes with PyTorch's launcher, ``torchrun``.
"""

# %%
# The machine
# -----------
# The first line says which device and software produced the numbers below.

import matplotlib.pyplot as plt
import numpy as np

import compperf
from compperf.i18n import parts, table

RANKS = 2
SIZES = [2**k for k in range(7, 23, 3)]  # float32 values: 512 B to 16 MB
ROUNDS = 6
# sphinx_gallery_start_ignore
# The tests set COMPPERF_FAST=1 to shrink the work; readers never see this block.
import os

if os.environ.get("COMPPERF_FAST") == "1":
    SIZES = [2**k for k in range(8, 21, 4)]
# sphinx_gallery_end_ignore
device = compperf.try_gpu()
backend = "nccl" if compperf.num_gpus() >= RANKS else "gloo"
print(compperf.environment(device))
print(compperf.tr("ranks: {n}, backend: {b}", n=RANKS, b=backend))

# %%
# Two ways to all-reduce
# ----------------------
# One message of ``S`` bytes costs ``α + S / β``, as
# :doc:`/auto_examples/distributed/plot_3_communication_costs` measures. An
# all-reduce over ``n`` ranks can be built from such messages in two ways:
#
# * **reduce, then broadcast** (the parameter server): every rank sends its
#   tensor to one rank, which adds them up and sends the sum back. That rank
#   receives and sends ``n - 1`` whole tensors: ``2 (n - 1) (α + S / β)``.
# * **ring all-reduce**: the tensor is cut into ``n`` chunks that travel
#   around a ring of ranks, first adding up (reduce-scatter), then spreading
#   the sums (all-gather). Every rank sends ``2 (n - 1)`` chunks of ``S / n``:
#   ``2 (n - 1) α + 2 (n - 1) / n · S / β``: the bandwidth term is nearly
#   independent of ``n``, the latency term grows with it.
#
# The rank code times three things per size, in rounds: a message there and
# back between rank 0 and rank 1 (for ``α`` and ``β``), ``all_reduce``, and
# ``reduce`` followed by ``broadcast``. With two ranks that pair moves the
# bytes of a parameter server; with more, the libraries build ``reduce`` in
# their own ways, and it stops being one.

RANK_CODE = """
import json
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

results, backend = Path(sys.argv[1]), sys.argv[2]
sizes = [int(size) for size in sys.argv[3].split(",")]
rounds = int(sys.argv[4])
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
if backend == "nccl":
    device = torch.device("cuda", dist.get_node_local_rank())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")
wait = torch.cuda.synchronize if device.type == "cuda" else lambda: None

def ping_pong(tensor):  # there and back: two messages
    if rank == 0:
        dist.send(tensor, dst=1)
        dist.recv(tensor, src=1)
    elif rank == 1:
        dist.recv(tensor, src=0)
        dist.send(tensor, dst=0)

def reduce_broadcast(tensor):
    dist.reduce(tensor, dst=0)
    dist.broadcast(tensor, src=0)

operations = {"ping-pong": ping_pong, "all_reduce": dist.all_reduce,
              "reduce+broadcast": reduce_broadcast}
seconds = {name: {size: [] for size in sizes} for name in operations}
tensors = {size: torch.ones(size, device=device) for size in sizes}
for round_number in range(rounds + 1):  # round 0 warms up
    for size in sizes:
        repeats = max(3, min(50, 2**22 // size))
        for name, operation in operations.items():
            dist.barrier()
            wait()
            start = time.perf_counter()
            for _ in range(repeats):
                operation(tensors[size])
            wait()
            if round_number:
                seconds[name][size].append((time.perf_counter() - start) / repeats)
report = {"rank": rank, "world": world, "sizes": sizes, "seconds": seconds}
(results / f"rank{rank}.json").write_text(json.dumps(report))
dist.destroy_process_group()
"""

# %%
# Launching the ranks
# -------------------
# The lines after the launch fit ``α + S / β`` to rank 0's median times of
# one message (``send``, half of the time there and back) and, alone, to
# the all-reduce, as the previous page does.
arguments = [backend, ",".join(map(str, SIZES)), str(ROUNDS)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
print(watched.disturbance)
rank0 = run[0]
n = rank0["world"]
nbytes = np.array(SIZES, dtype=float) * 4
one_way, ring, server = (
    np.array([np.median(rank0["seconds"][name][str(s)]) for s in SIZES])
    for name in ("ping-pong", "all_reduce", "reduce+broadcast")
)
one_way = one_way / 2  # there and back: two messages


def fit(times):
    """(α seconds, β bytes per second) of times ≈ α + bytes / β, on relative errors."""
    design = np.stack([np.ones_like(nbytes), nbytes], axis=1) / times[:, None]
    (alpha, inverse_beta), *_ = np.linalg.lstsq(
        design, np.ones_like(times), rcond=None
    )
    return float(alpha), float(1 / inverse_beta)


alpha, beta = fit(one_way)
ring_alpha, ring_beta = fit(ring)
fits = {"send/recv": (alpha, beta), "all_reduce": (ring_alpha, ring_beta)}
for op, (a, b) in fits.items():
    print(compperf.tr("{op}: α {a:time}, β {b:bytes}/s", op=op, a=a, b=b))

# %%
# The models against the measurements
# -----------------------------------
# With ``α`` and ``β`` from single messages, the two formulas predict both
# all-reduces without another free number. The table gives, for each message
# size, rank 0's median time per call of the all-reduce and of reduce
# followed by broadcast, each with its measured time over the model's. A
# ratio of 1 means that the model explains the measurement; above 1, the
# collective pays for more than its messages: the additions, gloo's own
# steps between them, and on a shared CPU the ranks waiting for a core. The
# figure shows the measured medians as points and each model as a line of
# the same colour.
ring_model = 2 * (n - 1) * alpha + 2 * (n - 1) / n * nbytes / beta
server_model = 2 * (n - 1) * (alpha + nbytes / beta)
rows = []
for row in zip(nbytes, ring, ring_model, server, server_model, strict=True):
    size, a, a_model, b, b_model = row
    rows.append((int(size), round(a * 1e6, 1), round(a / a_model, 2),
                 round(b * 1e6, 1), round(b / b_model, 2)))  # fmt: skip
with parts():  # S in bytes, as in the formulas and on the figure
    over, ring_us = compperf.tr("/ model"), compperf.tr("all_reduce (µs)")
    server_us = compperf.tr("reduce + broadcast (µs)")
print(table(["S", ring_us, over, server_us, over], rows))

fig, ax = plt.subplots(figsize=(7, 3.2), layout="constrained")
curves = {  # label: measured, model, marker and line, colour
    compperf.tr("all_reduce, ring model"): (ring, ring_model, "s--", "C0"),
    compperf.tr("reduce + broadcast, parameter server model"): (
        server, server_model, "^:", "C3"),
}  # fmt: skip
handles = []
for measured, model, style, color in curves.values():
    (points,) = ax.loglog(nbytes, measured * 1e6, style[0], color=color)
    (line,) = ax.loglog(nbytes, model * 1e6, style[1:], color=color)
    handles.append((points, line))
ax.set_xlabel(compperf.tr("message size S (bytes)"))
ax.set_ylabel(compperf.tr("time per call (µs)"))
ax.set_title(compperf.tr("Communication on {b}, {n} ranks", b=backend, n=n))
fig.legend(handles, list(curves), loc="outside upper center")
plt.show()

# %%
# For large messages, where the latency no longer counts, the model gives
# two ranks' ring half the parameter server's time: ``S / β`` against
# ``2 S / β``. The first line below prints the measured ratio of the two at
# the largest size, from the rounds, with the model's ratio. The verdict's
# line prints the claim "faster", its outcome and the interval, against the
# threshold 1 / 1.05: *yes* when the whole interval lies below it (the ring
# is faster, as the model says), *no* when it lies at or above it (the
# collective's extra steps, or ranks waiting for a core, outweighed the
# saved bytes), *unclear* when the interval straddles the threshold or the
# machine was disturbed.
largest = str(SIZES[-1])
rounds = zip(rank0["seconds"]["all_reduce"][largest],
             rank0["seconds"]["reduce+broadcast"][largest], strict=True)  # fmt: skip
ratio = compperf.Ratio.from_rounds(
    "all_reduce", "reduce+broadcast", [a / b for a, b in rounds]
)
predicted = float(ring_model[-1] / server_model[-1])
subject = compperf.tr("all_reduce vs reduce+broadcast")
faster = compperf.conclude("faster", subject, ratio.low, ratio.high,
                           below=1 / 1.05, disturbed=watched.disturbance.disturbed)  # fmt: skip
print(compperf.tr("measured: {r}; model: {m:.2f}×", r=ratio, m=predicted))
print(faster)

# %%
# Summary
# -------
# * A ring all-reduce makes every rank send ``2 (n - 1) / n`` times the
#   tensor, nearly the same for any number of ranks; a parameter server
#   makes one rank send and receive ``n - 1`` whole tensors, so it gets
#   slower as ranks are added.
# * The ``α`` and ``β`` of single messages predict both without another free
#   number; what a collective pays beyond them shows as a ratio above 1.
#
# Exercises
# ---------
# 1. With the ring model, how long would an all-reduce of 1 GB take over 64
#    ranks on this machine's link, and with a parameter server?
# 2. At which message size does the ring model, with this page's ``α`` and
#    ``β``, fit the measured all-reduce best, and at which worst?
#
# Answers
# -------
# 1. The ring's bandwidth term is ``2 · 63 / 64 · S / β``; the parameter
#    server's is ``2 · 63 · S / β``, 64 times larger. For 8 and 64 ranks on
#    this machine's ``β``:
print(compperf.tr("ranks, ring (s), parameter server (s)"))
for ranks in (8, 64):
    ring_time = 2 * (ranks - 1) / ranks * 1e9 / beta
    server_time = 2 * (ranks - 1) * 1e9 / beta
    print(f"{ranks:>5} {ring_time:>10.3g} {server_time:>10.3g}")

# %%
# 2. The best fit is the ratio nearest 1 in the table of measured over model
#    (on a logarithmic scale, so that twice too slow and twice too fast
#    count alike):
misfit = np.abs(np.log(ring / ring_model))
best, worst = nbytes[misfit.argmin()], nbytes[misfit.argmax()]
print(compperf.tr("best: {b:bytes}, worst: {w:bytes}", b=best, w=worst))
