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


def test_messages_need_no_torch_and_the_rest_comes_when_used():
    """A docs build that executes nothing (another language, a rebuild) renders messages
    without paying torch's import; every other public name arrives on first use."""
    code = (
        "import sys, compperf\n"
        "compperf.tr('x')\n"
        "assert 'torch' not in sys.modules, 'import compperf imported torch'\n"
        "import compperf.ceilings, compperf.environment\n"
        "assert callable(compperf.ceilings) and callable(compperf.environment)\n"
        "assert compperf.verdicts.conclude is compperf.conclude\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert sorted(set(compperf.__all__) - set(dir(compperf))) == []
