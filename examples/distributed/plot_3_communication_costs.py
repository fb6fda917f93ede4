"""
What communication costs
========================

You time messages between two ranks from a kilobyte to many megabytes, fit the
cost of one message to a latency plus size over bandwidth, and compare an
all-reduce with the parameter-server pattern (reduce to one rank, then
broadcast) against what the cost model predicts.

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
# The cost model
# --------------
# Sending one message of ``S`` bytes costs ``α + S / β``: a latency ``α``
# (software, the trip through the kernel or the wire) and the bytes over the
# link's bandwidth ``β``. An all-reduce over ``n`` ranks can be built from
# such messages in two ways:
#
# * **reduce, then broadcast** (the parameter server): every rank sends its
#   tensor to one rank, which adds them up and sends the sum back. That rank
#   receives and sends ``n - 1`` whole tensors: ``2 (n - 1) (α + S / β)``.
# * **ring all-reduce**: the tensor is cut into ``n`` chunks that travel
#   around a ring of ranks, first adding up (reduce-scatter), then spreading
#   the sums (all-gather). Every rank sends ``2 (n - 1)`` chunks of ``S / n``:
#   ``2 (n - 1) α + 2 (n - 1) / n · S / β``, nearly independent of ``n``.
#
# The rank code times three things per size, in rounds: a message there and
# back between rank 0 and rank 1 (half of it is one message), ``all_reduce``,
# and ``reduce`` followed by ``broadcast``.

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


def wait():
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def one_message(tensor):  # there and back: two messages
    if rank == 0:
        dist.send(tensor, dst=1)
        dist.recv(tensor, src=1)
    elif rank == 1:
        dist.recv(tensor, src=0)
        dist.send(tensor, dst=0)


def reduce_broadcast(tensor):
    dist.reduce(tensor, dst=0)
    dist.broadcast(tensor, src=0)


operations = {"ping-pong": one_message, "all_reduce": dist.all_reduce,
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
# The table after the launch gives rank 0's median time per call for each
# message size: one message (``send``, half of the time there and back),
# the all-reduce, and reduce followed by broadcast.
arguments = [backend, ",".join(map(str, SIZES)), str(ROUNDS)]
with compperf.watch() as watched:
    run = compperf.run_ranks(RANK_CODE, RANKS, args=arguments, timeout=150)
print(run)
print(watched.disturbance)
rank0 = run[0]
n = rank0["world"]
nbytes = np.array(SIZES, dtype=float) * 4


def medians(name):
    return np.array(
        [np.median(rank0["seconds"][name][str(size)]) for size in SIZES]
    )


one_way = medians("ping-pong") / 2
ring = medians("all_reduce")
server = medians("reduce+broadcast")
print(f"{'bytes':>10} {'send (s)':>12} {'all_reduce (s)':>14}", end=" ")
print(f"{'reduce+bcast (s)':>16}")
for row in zip(nbytes, one_way, ring, server, strict=True):
    print(f"{row[0]:>10.0f} {row[1]:>12.2e} {row[2]:>14.2e} {row[3]:>16.2e}")

# %%
# Latency and bandwidth
# ---------------------
# A least-squares fit of ``α + S / β`` to the one-way times gives this
# machine's latency and bandwidth between two processes (through gloo and
# the loopback interface on a CPU). The fit weighs relative errors, so that
# small and large messages count alike. The table gives ``α`` and ``β`` for
# single messages (``send``) and, fitted alone, for the all-reduce.


def fit(times):
    """(α seconds, β bytes per second) of times ≈ α + bytes / β, on relative errors."""
    design = np.stack([np.ones_like(nbytes), nbytes], axis=1) / times[:, None]
    (alpha, inverse_beta), *_ = np.linalg.lstsq(
        design, np.ones_like(times), rcond=None
    )
    return float(alpha), float(1 / inverse_beta)


alpha, beta = fit(one_way)
ring_alpha, ring_beta = fit(ring)
print(compperf.tr("latency α (µs), bandwidth β (GB/s):"))
print(f"{'send':>10} {alpha * 1e6:>8.1f} {beta / 1e9:>8.3f}")
print(f"{'all_reduce':>10} {ring_alpha * 1e6:>8.1f} {ring_beta / 1e9:>8.3f}")

# %%
# The models against the measurements
# -----------------------------------
# With ``α`` and ``β`` from single messages, the two formulas predict both
# all-reduces without another free number. The table gives, for each message
# size, the measured time over the model's, for both.
ring_model = 2 * (n - 1) * alpha + 2 * (n - 1) / n * nbytes / beta
server_model = 2 * (n - 1) * (alpha + nbytes / beta)
print(compperf.tr("measured / model: bytes, all_reduce, reduce+broadcast"))
for row in zip(nbytes, ring / ring_model, server / server_model, strict=True):
    print(f"{row[0]:>10.0f} {row[1]:>12.2f} {row[2]:>12.2f}")

# %%
# A ratio of 1 means that the model, with the ``α`` and ``β`` of single
# messages, explains the measurement. Above 1, the collective pays for more
# than its messages: the additions, gloo's own steps between them, and on a
# shared CPU the ranks waiting for a core. The figure shows the measured
# medians as points and each model as a line of the same colour.
fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
curves = {  # label: measured, model, marker and line, colour
    compperf.tr("one message, fit α + S/β"): (
        one_way, alpha + nbytes / beta, "o-", "C2"),
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
# Ring against parameter server
# -----------------------------
# For large messages, where the latency no longer counts, the model gives
# two ranks' ring half the parameter server's time: ``S / β`` against
# ``2 S / β``. The first line below prints the measured ratio of the two at
# the largest size, from the rounds, with the model's ratio.
#
# The verdict's line prints the claim "faster", its outcome and the interval,
# against the threshold 1 / 1.05: *yes* when the whole interval lies below it
# (the ring is faster than sending through one rank, as the model says), *no*
# when it lies at or above it (not faster here: the collective's extra steps,
# or ranks waiting for a core, outweighed the saved bytes), *unclear* when
# the interval straddles the threshold or the machine was disturbed.
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
# Faster links, not measured here
# -------------------------------
# The same formulas, with bandwidths from datasheets instead of a
# measurement, say what a GPU cluster changes; these lines are arithmetic,
# not measurements.
# NVIDIA gives 900 GB/s of NVLink bandwidth per H100 SXM GPU (both
# directions together, so 450 GB/s each way), and 400 Gb/s (50 GB/s) per NDR
# InfiniBand port (ConnectX-7). The rows give one all-reduce of 1 GB of
# gradients over 8 ranks, bandwidth term only, at this machine's measured
# ``β``, then at NVLink 4's and InfiniBand NDR's.
gradient_bytes, ranks = 1e9, 8
links = [beta, 450e9, 50e9]  # bytes per second: measured, NVLink 4, NDR
print(compperf.tr("β (GB/s; rows 2, 3: datasheet), ring (ms), server (ms)"))
for bandwidth in links:
    ring_ms = 2 * (ranks - 1) / ranks * gradient_bytes / bandwidth * 1e3
    server_ms = 2 * (ranks - 1) * gradient_bytes / bandwidth * 1e3
    print(f"{bandwidth / 1e9:>8.3g} {ring_ms:>10.1f} {server_ms:>10.1f}")

# %%
# Summary
# -------
# * A message costs a latency plus its size over the bandwidth; small
#   messages pay mostly latency, large ones mostly bandwidth.
# * A ring all-reduce makes every rank send ``2 (n - 1) / n`` times the
#   tensor, nearly the same for any number of ranks; a parameter server
#   makes one rank send and receive ``n - 1`` whole tensors, so it gets
#   slower as ranks are added.
# * The fitted ``α`` and ``β`` above are this machine's, between processes
#   sharing its CPU; NVLink and InfiniBand change ``β`` by orders of
#   magnitude, which is why the numbers on a GPU cluster differ so much.
#
# Exercises
# ---------
# 1. From this page's ``α`` and ``β``, from what message size on does the
#    bandwidth term outweigh the latency?
# 2. With the ring model, how long would an all-reduce of 1 GB take over 64
#    ranks on this machine's link, and with a parameter server?
# 3. DDP's default bucket is 25 MB. On this machine, what share of the time
#    of reducing one such bucket is latency?
#
# Answers
# -------
# 1. The two terms are equal at ``S = α β``; larger messages pay mostly
#    bandwidth, smaller ones mostly latency:
print(compperf.tr("S = α β = {b:bytes}", b=alpha * beta))

# %%
# 2. The ring's bandwidth term is ``2 · 63 / 64 · S / β``; the parameter
#    server's is ``2 · 63 · S / β``, 64 times larger. For 8 and 64 ranks on
#    this machine's ``β``:
print(compperf.tr("ranks, ring (s), parameter server (s)"))
for ranks in (8, 64):
    ring_time = 2 * (ranks - 1) / ranks * 1e9 / beta
    server_time = 2 * (ranks - 1) * 1e9 / beta
    print(f"{ranks:>5} {ring_time:>10.3g} {server_time:>10.3g}")

# %%
# 3. For two ranks, the ring model gives latency ``2 α`` and bandwidth time
#    ``S / β``:
bucket = 25 * 2**20
latency_share = 2 * alpha / (2 * alpha + bucket / beta)
print(compperf.tr("latency share of a 25 MB bucket: {s:.1%}", s=latency_share))
