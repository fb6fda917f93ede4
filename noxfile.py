"""The project's verbs: tests, lint, docs. Run ``nox -l`` to list them."""

from __future__ import annotations

import os
import shlex

import nox

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "venv"

# The torch release the site is measured and tested with. On a CPU-only machine with a
# local CPU wheel this takes that wheel; on Linux with NVIDIA GPUs PyPI serves the CUDA
# build; on macOS the MPS-capable build. Override with COMPPERF_TORCH (see README).
TORCH = os.environ.get("COMPPERF_TORCH", "torch==2.13.0")


def install_torch(session: nox.Session) -> None:
    """Install the chosen torch build, with a pip that knows dependency groups."""
    session.install("--upgrade", "pip>=25.1")
    session.install(*shlex.split(TORCH))


@nox.session(default=True, reuse_venv=True)
def tests(session: nox.Session) -> None:
    """Run the test suite; extra arguments go to pytest."""
    install_torch(session)
    session.install("-e", ".", "--group", "test")
    session.run("pytest", *session.posargs)


@nox.session(default=True, reuse_venv=True)
def lint(session: nox.Session) -> None:
    """Check style with ruff."""
    session.install("--upgrade", "pip>=25.1")
    session.install("--group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


if __name__ == "__main__":
    nox.main()
