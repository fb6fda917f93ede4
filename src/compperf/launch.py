"""Run a script on several ranks under PyTorch's launcher (``torchrun``) and collect what each rank reports."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["RankResults", "run_ranks"]

# Lines of the launcher's output quoted when a run fails.
_TAIL_LINES = 40
# Seconds a timed-out launcher gets after SIGTERM before its process group is killed.
_GRACE_SECONDS = 5.0
_SCRIPT_NAME = "ranks.py"


@dataclasses.dataclass(frozen=True)
class RankResults:
    """What every rank of one launch wrote, in rank order.

    Attributes
    ----------
    ranks : tuple of dict
        Rank ``r``'s JSON object, read from ``rank<r>.json`` in the launch's results folder.
    nproc : int
        Number of ranks (processes) the launcher started.
    threads_per_rank : int
        ``OMP_NUM_THREADS`` each rank ran with.
    seconds : float
        Wall-clock seconds of the whole launch: start-up, rendezvous, work and exit.
    command : tuple of str
        The command line that was run (the script under a temporary folder).
    """

    ranks: tuple[dict[str, Any], ...]
    nproc: int
    threads_per_rank: int
    seconds: float
    command: tuple[str, ...]

    def __getitem__(self, rank: int) -> dict[str, Any]:
        return self.ranks[rank]

    def __len__(self) -> int:
        return len(self.ranks)

    def __repr__(self) -> str:
        return (
            f"RankResults(nproc={self.nproc}, threads_per_rank={self.threads_per_rank}, "
            f"seconds={self.seconds:.2f}, keys={sorted(self.ranks[0]) if self.ranks else []})"
        )

    def __str__(self) -> str:
        # What a reader of a page wants from print(run): how many ranks ran, how, how long.
        from compperf.i18n import parts, tr, tr_plural

        with parts():
            ranks = tr_plural("{n} rank", "{n} ranks", self.nproc)
            threads = tr_plural("{n} thread", "{n} threads", self.threads_per_rank)
        return tr(
            "launch: {ranks} with {threads} each, {seconds:.1f} s from start to exit",
            ranks=ranks,
            threads=threads,
            seconds=self.seconds,
        )


def _caller_file() -> str | None:
    """The file of the code that called :func:`run_ranks` (the page), where Python knows it."""
    frame = sys._getframe(2)
    name = frame.f_globals.get("__file__")
    return str(name) if name else None


def _loopback_environment() -> dict[str, str]:
    """Keep gloo's and NCCL's sockets on the loopback interface where it exists (Linux ``lo``)."""
    if Path("/sys/class/net/lo").exists():
        return {"GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo"}
    return {}


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _rank_output(logs: Path, launcher: str) -> str:
    """The last lines each rank wrote to stderr (torchrun's ``--redirects`` files), then the
    launcher's own last lines."""
    parts = []
    for path in sorted(logs.rglob("stderr.log"), key=lambda p: p.parent.name):
        text = _tail(path.read_text(encoding="utf-8", errors="replace"))
        if text:
            parts.append(f"--- local rank {path.parent.name}, stderr:\n{text}")
    parts.append(f"--- torchrun:\n{_tail(launcher, _TAIL_LINES // 4)}")
    return "\n".join(parts)


def _stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    """End the launcher and every rank it started (one process group), then collect output."""
    for sig, wait in ((signal.SIGTERM, _GRACE_SECONDS), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            return process.communicate(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return "", ""  # pragma: no cover - communicate() without a timeout returns


def _read_ranks(folder: Path, nproc: int) -> tuple[list[dict[str, Any]], list[int]]:
    """Each rank's JSON object, and the ranks that wrote none."""
    found, missing = [], []
    for rank in range(nproc):
        path = folder / f"rank{rank}.json"
        if path.is_file():
            found.append(json.loads(path.read_text(encoding="utf-8")))
        else:
            missing.append(rank)
    return found, missing


def run_ranks(
    code: str,
    nproc: int,
    *,
    args: Sequence[str] = (),
    timeout: float = 60.0,
    threads_per_rank: int = 1,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
) -> RankResults:
    """Run ``code`` as a script on ``nproc`` ranks with ``python -m torch.distributed.run``.

    Parameters
    ----------
    code : str
        The rank's program (Python source). It is written to a fresh temporary folder and
        run as ``ranks.py RESULTS *args``: its first argument is a folder where rank ``r``
        writes its JSON object to ``rank<r>.json``.
    nproc : int
        Ranks (processes) on this machine: ``--nproc-per-node``.
    args : sequence of str
        Further command-line arguments for the script.
    timeout : float, default 60.0
        Seconds the whole launch may take; then the launcher and its ranks are ended.
    threads_per_rank : int, default 1
        ``OMP_NUM_THREADS`` for each rank (torchrun would set 1 and warn).
    env : mapping of str to str, optional
        Extra environment variables for the ranks.
    name : str, optional
        What to call the caller in error messages; defaults to the calling file (the page).

    Returns
    -------
    RankResults

    Raises
    ------
    ValueError
        If ``nproc``, ``threads_per_rank`` or ``timeout`` is not positive.
    RuntimeError
        If the launcher exits with an error or a rank wrote no results; the message names
        the caller and quotes the last lines of the ranks' output.
    TimeoutError
        If the launch runs past ``timeout``; every process of it is ended first.

    Notes
    -----
    ``--standalone`` makes the launcher run its own rendezvous on a free port of this
    machine, so concurrent launches never share a port; gloo and NCCL are kept on the
    loopback interface (``GLOO_SOCKET_IFNAME``/``NCCL_SOCKET_IFNAME=lo`` where Linux has
    ``lo``). Each launch gets a new folder, deleted afterwards, so results of a failed run
    are never read by a later one. The launcher starts in a process group of its own,
    which a timeout ends as a whole (SIGTERM, then SIGKILL after 5 s).
    """
    if nproc < 1 or threads_per_rank < 1 or not timeout > 0:
        raise ValueError(
            f"need nproc >= 1, threads_per_rank >= 1 and timeout > 0, got nproc={nproc}, "
            f"threads_per_rank={threads_per_rank}, timeout={timeout}"
        )
    who = name or _caller_file() or "run_ranks"
    with tempfile.TemporaryDirectory(prefix="compperf-ranks-") as folder:
        script, results = Path(folder, _SCRIPT_NAME), Path(folder, "results")
        logs = Path(folder, "logs")
        results.mkdir()
        script.write_text(code, encoding="utf-8")
        command = (
            sys.executable, "-m", "torch.distributed.run", "--standalone",
            f"--nproc-per-node={nproc}", "--max-restarts=0", "--monitor-interval=0.1",
            f"--log-dir={logs}", "--redirects=3", str(script), str(results), *args,
        )  # fmt: skip
        environ = {
            **os.environ,
            **_loopback_environment(),
            "OMP_NUM_THREADS": str(threads_per_rank),
            **(env or {}),
        }
        start = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=folder,
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            output, _ = _stop(process)
            raise TimeoutError(
                f"{who}: {nproc} ranks under torchrun did not finish within {timeout:g} s "
                f"and were ended.\n{_rank_output(logs, output or '')}"
            ) from None
        seconds = time.perf_counter() - start
        if process.returncode != 0:
            raise RuntimeError(
                f"{who}: {nproc} ranks under torchrun failed (exit {process.returncode}).\n"
                f"{_rank_output(logs, output)}"
            )
        ranks, missing = _read_ranks(results, nproc)
        if missing:
            raise RuntimeError(
                f"{who}: ranks {missing} exited without writing rank<r>.json into the "
                f"results folder (their first argument).\n{_rank_output(logs, output)}"
            )
    return RankResults(tuple(ranks), nproc, threads_per_rank, seconds, command)
