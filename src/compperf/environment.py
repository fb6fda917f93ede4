"""A record of the hardware and software that produced a measurement."""

from __future__ import annotations

import dataclasses
import platform
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from compperf import records
from compperf.devices import as_device
from compperf.i18n import Text, paragraph, parts, tr, tr_plural

if TYPE_CHECKING:
    from compperf.ceilings import Ceilings

__all__ = ["Environment", "environment"]

_CPUINFO = Path("/proc/cpuinfo")
# The text form wraps here, so that it fits a page's output block (about 78 columns).
_TEXT_WIDTH = 76


@dataclasses.dataclass(frozen=True)
class Environment:
    """What produced a number: device, libraries, CPU and operating system.

    Attributes
    ----------
    device : str
        The device the measurements ran on, e.g. ``"cuda:0"`` or ``"cpu"``.
    device_name : str
        Its human name, e.g. the GPU model; for the CPU, the CPU model.
    accelerators : tuple of str
        Names of every accelerator torch sees (empty on a CPU-only machine).
    torch : str
        ``torch.__version__``.
    cuda, cudnn : str or None
        CUDA runtime and cuDNN versions torch was built with, when it was.
    cpu : str
        CPU model, as the operating system reports it.
    num_threads : int
        ``torch.get_num_threads()``: intra-op threads on the CPU.
    python : str
        Python version.
    platform : str
        Operating system and machine architecture.
    ceilings : Ceilings or None
        The device's measured ceilings (peak FLOP/s, bandwidth, overhead) when
        :func:`environment` was asked for them; their text follows the description.
    """

    device: str
    device_name: str
    accelerators: tuple[str, ...]
    torch: str
    cuda: str | None
    cudnn: str | None
    cpu: str
    num_threads: int
    python: str
    platform: str
    ceilings: Ceilings | None = None

    def __str__(self) -> Text:
        # One message, wrapped as a paragraph in the reader's language; the words inside
        # its values are messages too, and the names and versions stay as reported.
        with parts():
            libraries = f"PyTorch {self.torch}"
            if self.cuda:
                libraries = tr(
                    "PyTorch {torch} (CUDA {cuda}, cuDNN {cudnn})",
                    torch=self.torch,
                    cuda=self.cuda,
                    cudnn=self.cudnn or tr("not available"),
                )
            text = tr(
                "Measured on {device} ({device_name}) with {libraries}, Python {python} on "
                "{platform}. CPU: {cpu}, {threads}. Accelerators visible: {accelerators}.",
                device=self.device,
                device_name=self.device_name,
                libraries=libraries,
                python=self.python,
                platform=self.platform,
                cpu=self.cpu,
                threads=tr_plural("{n} torch thread", "{n} torch threads", self.num_threads),
                accelerators=", ".join(self.accelerators) if self.accelerators else tr("none"),
            )
            if self.ceilings is not None:
                description = paragraph(text, _TEXT_WIDTH)
                limits = str(self.ceilings)
        if self.ceilings is None:
            return paragraph(text, _TEXT_WIDTH)
        # Two paragraphs, recorded as one message so a docs build replaces both at once.
        return tr("{description}\n{ceilings}", description=description, ceilings=limits)


def _cpu_model() -> str:
    # /proc/cpuinfo names the model on Linux; platform.processor() is often
    # empty there but is the best portable answer elsewhere.
    try:
        for line in _CPUINFO.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _accelerator_names() -> tuple[str, ...]:
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("Apple MPS")
    return tuple(names)


def _device_name(device: torch.device, cpu: str) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "mps":
        return "Apple MPS"
    return cpu


def environment(
    device: str | torch.device | None = None, *, with_ceilings: bool = False
) -> Environment:
    """Describe this machine and the device that measurements will run on.

    Parameters
    ----------
    device : str, torch.device or None
        The device of interest; ``None`` means :func:`compperf.try_gpu`.
    with_ceilings : bool, default False
        Also measure (once per process, see :func:`compperf.ceilings`) the device's peak
        FLOP/s, bandwidth and per-call overhead in float32: a few seconds the first time.

    Returns
    -------
    Environment
        ``str()`` of it is a one-paragraph description for a page or a log,
        in the language chosen with ``compperf.use_language``, wrapped at 76
        columns.

    Raises
    ------
    ValueError
        If the device is not available (see :func:`compperf.as_device`).

    Notes
    -----
    Reads only what torch, :mod:`platform` and ``/proc/cpuinfo`` report: no
    environment variables, host names or user names.
    """
    target = as_device(device)
    cpu = _cpu_model()
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    found = Environment(
        device=str(target),
        device_name=_device_name(target, cpu),
        accelerators=_accelerator_names(),
        torch=torch.__version__,
        cuda=torch.version.cuda,
        cudnn=None if cudnn is None else str(cudnn),
        cpu=cpu,
        num_threads=torch.get_num_threads(),
        python=platform.python_version(),
        platform=f"{platform.system()} {platform.release()} ({platform.machine()})",
        ceilings=_measured_ceilings(target) if with_ceilings else None,
    )
    records.note_environment(found)  # where this run's key figures come from
    return found


def _measured_ceilings(device: torch.device) -> Ceilings:
    from compperf.ceilings import ceilings  # ceilings imports measure, which imports this

    return ceilings(device)
