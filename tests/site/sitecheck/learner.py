"""A learner's machine: a fresh virtual environment that runs downloaded examples."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat

__all__ = [
    "LearnerError",
    "create_venv",
    "first_cell_install",
    "first_cell_installs",
    "learner_env",
    "pip_install",
    "run_notebook",
    "run_script",
]

# What a learner has before the notebook's first cell runs: torch and Jupyter's kernel.
KERNEL_PACKAGES = ("ipykernel", "nbclient")
# The first cell's install line, as compperf_docs.execute.gallery.first_notebook_cell writes it.
_PIP_MAGIC = re.compile(r"^%pip install (.+)$", re.MULTILINE)
# IPython colours its tracebacks; the test report shows them as plain text.
_ANSI_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
# Variables that would leak the test run's own environment into the learner's.
_NOT_INHERITED = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "COMPPERF_FAST", "MPLBACKEND")


class LearnerError(AssertionError):
    """A downloaded example failed to run; the message holds its output."""


def learner_env(venv: Path, home: Path) -> dict[str, str]:
    """Environment of a learner's shell with ``venv`` activated and a bare home folder.

    Package-index settings (``PIP_*``) carry over; the test run's own virtual environment,
    ``COMPPERF_FAST`` and Jupyter/IPython/matplotlib settings do not.
    """
    env = {key: value for key, value in os.environ.items() if key not in _NOT_INHERITED}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    for name, folder in {
        "HOME": "",
        "IPYTHONDIR": ".ipython",
        "MPLCONFIGDIR": ".matplotlib",
        "JUPYTER_CONFIG_DIR": ".jupyter",
        "JUPYTER_DATA_DIR": ".local/share/jupyter",
        "JUPYTER_RUNTIME_DIR": ".local/share/jupyter/runtime",
    }.items():
        env[name] = str(home / folder)
    return env


def _run(command: list[str], env: dict[str, str], cwd: Path, timeout: float, what: str) -> str:
    try:
        done = subprocess.run(
            command, env=env, cwd=cwd, timeout=timeout, capture_output=True, text=True, check=False
        )
    except subprocess.TimeoutExpired as error:
        raise LearnerError(f"{what} did not finish within {timeout:.0f} s") from error
    output = _ANSI_COLOURS.sub("", done.stdout + done.stderr)
    if done.returncode != 0:
        raise LearnerError(f"{what} failed (exit {done.returncode}):\n{output[-6000:]}")
    return output


def create_venv(venv: Path, torch: str, env: dict[str, str], timeout: float = 900) -> Path:
    """Create ``venv`` with only ``torch`` (a pip requirement) and the kernel; return its python."""
    _run([sys.executable, "-m", "venv", str(venv)], env, venv.parent, timeout, "python -m venv")
    python = venv / "bin" / "python"
    pip_install(python, [*shlex.split(torch), *KERNEL_PACKAGES], env, timeout)
    return python


def pip_install(python: Path, requirements: list[str], env: dict[str, str], timeout: float) -> None:
    """``python -m pip install`` the requirements (names, URLs, options) into its environment."""
    command = [str(python), "-m", "pip", "install", "--quiet", *requirements]
    _run(command, env, python.parent, timeout, f"pip install {' '.join(requirements)}")


def first_cell_installs(notebook: Path) -> list[list[str]]:
    """The arguments of each ``%pip install`` in the notebook's first code cell, in order.

    Raises
    ------
    LearnerError
        If the first code cell installs nothing.
    """
    nb = nbformat.read(notebook, as_version=4)
    first = next((cell for cell in nb.cells if cell.cell_type == "code"), None)
    found = _PIP_MAGIC.findall(first.source) if first else []
    if not found:
        raise LearnerError(f"{notebook.name}: its first code cell has no `%pip install` line")
    return [shlex.split(line) for line in found]


def first_cell_install(notebook: Path) -> list[str]:
    """Every argument of the first code cell's ``%pip install`` lines, one list."""
    return [arg for args in first_cell_installs(notebook) for arg in args]


def run_notebook(python: Path, notebook: Path, env: dict[str, str], timeout: float) -> Path:
    """Execute ``notebook`` top to bottom with nbclient on ``python``'s kernel.

    Returns the executed copy (``executed-<name>.ipynb`` beside it). Raises
    :class:`LearnerError` naming the failing cell when one raises, or when the whole run
    takes longer than ``timeout`` seconds.
    """
    # jupyter-execute adds ".ipynb" to the base name, replacing anything after a dot.
    executed = notebook.with_name(f"executed-{notebook.stem}.ipynb")
    command = [
        str(python.with_name("jupyter-execute")),
        f"--timeout={int(timeout)}",
        f"--output={executed.stem}",
        notebook.name,
    ]
    _run(command, env, notebook.parent, timeout, f"notebook {notebook.name}")
    return executed


def run_script(python: Path, script: Path, env: dict[str, str], timeout: float) -> str:
    """Run ``python script`` as a learner would; return what it printed."""
    return _run([str(python), script.name], env, script.parent, timeout, f"script {script.name}")
