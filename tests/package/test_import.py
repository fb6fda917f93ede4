from __future__ import annotations

import subprocess
import sys

import compperf


def test_import_raises_no_deprecation_warning():
    # A fresh interpreter, so that earlier imports in this session cannot hide a warning.
    subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", "import compperf"], check=True
    )


def test_every_public_name_is_exported_and_documented():
    for name in compperf.__all__:
        obj = getattr(compperf, name)
        assert (obj.__doc__ or "").strip(), f"{name} has no docstring"


def test_no_private_helpers_leak_into_all():
    assert not [name for name in compperf.__all__ if name.startswith("_")]
