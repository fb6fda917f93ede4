"""Find accelerators (CUDA, Apple MPS), fall back to the CPU, and wait for queued work."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

__all__ = [
    "as_device",
    "num_gpus",
    "synchronize",
    "synchronizer",
    "try_all_gpus",
    "try_gpu",
]


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def _available() -> list[torch.device]:
    """Every device this process can run on, accelerators first, the CPU last."""
    devices = [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
    if _mps_available():
        devices.append(torch.device("mps", 0))
    return [*devices, torch.device("cpu")]


def _describe_available() -> str:
    return ", ".join(str(d) for d in _available())


def num_gpus() -> int:
    """Count the accelerators this process can use.

    Returns
    -------
    int
        The number of CUDA devices; otherwise 1 if Apple's MPS backend is
        available; otherwise 0.

    Notes
    -----
    Named after ``d2l.num_gpus``, which counts CUDA devices only; MPS is
    counted here so that the examples pick a Mac's GPU too.
    """
    count = torch.cuda.device_count()
    if count:
        return count
    return 1 if _mps_available() else 0


def try_gpu(i: int = 0) -> torch.device:
    """Return accelerator ``i`` if it exists, else the CPU.

    Parameters
    ----------
    i : int, default 0
        Index of the accelerator. MPS has a single device, index 0.

    Returns
    -------
    torch.device
        ``cuda:i`` when CUDA has more than ``i`` devices; ``mps`` when
        ``i == 0`` and MPS is available; ``cpu`` otherwise.

    Raises
    ------
    ValueError
        If ``i`` is negative.

    Notes
    -----
    Semantics of ``d2l.try_gpu`` (Dive into Deep Learning, section 6.7),
    extended to Apple MPS.
    """
    if i < 0:
        raise ValueError(f"device index must be >= 0, got {i}")
    if i < torch.cuda.device_count():
        return torch.device("cuda", i)
    if i == 0 and not torch.cuda.is_available() and _mps_available():
        return torch.device("mps", 0)
    return torch.device("cpu")


def try_all_gpus() -> list[torch.device]:
    """Return every accelerator, or ``[cpu]`` when there is none (never empty).

    Notes
    -----
    Semantics of ``d2l.try_all_gpus``, extended to Apple MPS.
    """
    accelerators = [d for d in _available() if d.type != "cpu"]
    return accelerators or [torch.device("cpu")]


def as_device(device: str | torch.device | None = None) -> torch.device:
    """Check that ``device`` exists here and return it as a :class:`torch.device`.

    Parameters
    ----------
    device : str, torch.device or None
        For example ``"cpu"``, ``"cuda:1"``, ``"mps"``. ``None`` means
        :func:`try_gpu`, the best device available. ``"cuda"`` without an
        index means the current CUDA device.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If torch cannot parse the string, the index is negative, or the
        device is not available on this machine. The message names the
        device and lists the ones that are available.
    TypeError
        If ``device`` is neither a string, a torch.device nor None.
    """
    if device is None:
        return try_gpu()
    if isinstance(device, str):
        try:
            parsed = torch.device(device)
        except RuntimeError as err:
            raise ValueError(
                f"device {device!r} is not a device torch understands "
                f"(available here: {_describe_available()})"
            ) from err
    elif isinstance(device, torch.device):
        parsed = device
    else:
        raise TypeError(f"device must be a str, torch.device or None, got {type(device).__name__}")
    if parsed.index is not None and parsed.index < 0:
        raise ValueError(f"device {str(device)!r} has a negative index")
    if parsed.type == "cuda" and parsed.index is None and torch.cuda.is_available():
        parsed = torch.device("cuda", torch.cuda.current_device())
    if parsed.type == "mps" and parsed.index is None:
        parsed = torch.device("mps", 0)
    if parsed.type == "cpu" or parsed in _available():
        return torch.device("cpu") if parsed.type == "cpu" else parsed
    raise ValueError(
        f"device {str(device)!r} is not available here (found: {_describe_available()})"
    )


def synchronize(device: str | torch.device | None = None) -> None:
    """Block until all work queued on ``device`` has finished.

    Parameters
    ----------
    device : str, torch.device or None
        The device to wait for; ``None`` means :func:`try_gpu`. Checked with
        :func:`as_device`.

    Raises
    ------
    ValueError
        If the device is not available (see :func:`as_device`).

    Notes
    -----
    CUDA: ``torch.cuda.synchronize(device)`` waits for every stream on that
    device. MPS: ``torch.mps.synchronize()``. CPU: returns at once, because
    torch's CPU operators finish before they return.
    """
    wait = synchronizer(as_device(device))
    if wait is not None:
        wait()


def synchronizer(device: torch.device) -> Callable[[], None] | None:
    """The call that waits for ``device``'s queued work, decided once; ``None`` on the CPU.

    Parameters
    ----------
    device : torch.device
        A device already checked with :func:`as_device`; it is not checked again.

    Returns
    -------
    callable or None
        ``torch.cuda.synchronize`` bound to the device, ``torch.mps.synchronize``,
        or ``None`` when there is nothing to wait for (the CPU).

    Notes
    -----
    Timers call this before they start the clock, so that between two clock reads
    there is only the device's own synchronization: no parsing, no availability query.
    """
    if device.type == "cuda":
        return functools.partial(torch.cuda.synchronize, device)
    if device.type == "mps":
        return torch.mps.synchronize
    return None
