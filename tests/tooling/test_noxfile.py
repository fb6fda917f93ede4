"""The noxfile: what a bare ``nox`` runs, the torch build check, the lowest-version pins."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nox = pytest.importorskip("nox", reason="the test dependency group installs nox")

NOXFILE = Path(__file__).resolve().parents[2] / "noxfile.py"


@pytest.fixture(scope="module")
def noxfile():
    spec = importlib.util.spec_from_file_location("compperf_noxfile", NOXFILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bare_nox_runs_lint_and_tests_only(noxfile) -> None:
    assert sorted(noxfile.nox.options.sessions) == ["lint", "tests"]


def test_languages_come_from_the_project(noxfile) -> None:
    import compperf_project

    assert compperf_project.load().codes == noxfile.DOCS_LANGUAGES


@pytest.mark.parametrize(
    ("wanted", "installed", "nvidia", "problem"),
    [
        ("torch==2.13.0", "2.13.0+cpu", False, None),
        ("torch==2.13.0", "2.13.0", True, None),
        ("torch==2.13.0", "2.13.0+cpu", True, "is a CPU build, but this machine has an NVIDIA"),
        ("torch==2.13.0+cpu --index-url https://x", "2.13.0+cpu", True, None),
        ("torch==2.13.0+cu128 --index-url https://x", "2.13.0+cpu", True, "asks for"),
        ("torch==2.14.0", "2.13.0+cpu", False, "torch 2.13.0+cpu is installed, but"),
        ("torch==2.13.0", "", False, "torch is not installed"),
        ("/wheels/torch-2.13.0-cp311.whl", "2.13.0", False, None),
    ],
)
def test_torch_mismatch(noxfile, wanted, installed, nvidia, problem) -> None:
    found = noxfile.torch_mismatch(wanted, installed, nvidia=nvidia)
    if problem is None:
        assert found is None
    else:
        assert problem in found


def test_lowest_constraints_pin_lower_bounds(noxfile) -> None:
    pins = noxfile.lowest_constraints(
        ["torch>=2.4", "numpy>=1.24", "sphinx==9.0.4", "tomli>=1.1; python_version < '3.0'"]
    )
    assert pins == ["numpy==1.24"]  # torch is chosen per machine; exact pins stay


def test_claimed_pythons_start_at_requires_python_and_leave_no_gap(noxfile) -> None:
    classifiers = [f"Programming Language :: Python :: 3.{m}" for m in (11, 12, 13)]
    project = {"requires-python": ">=3.11", "classifiers": classifiers}
    assert noxfile.claimed_pythons(project) == ["3.11", "3.12", "3.13"]
    with pytest.raises(ValueError, match="not every minor version"):
        noxfile.claimed_pythons({**project, "requires-python": ">=3.10"})
    with pytest.raises(ValueError, match="not every minor version"):
        noxfile.claimed_pythons({**project, "classifiers": [classifiers[0], classifiers[2]]})


def test_the_project_claims_what_its_floors_allow(noxfile) -> None:
    import nox.project

    project = nox.project.load_toml(str(NOXFILE.with_name("pyproject.toml")))["project"]
    assert noxfile.claimed_pythons(project)[0] == "3.11"  # sphinx 9 needs 3.11


def test_markers_are_evaluated_for_the_target_python(noxfile) -> None:
    wanted = ["numpy>=1.25; python_version < '3.12'", "numpy>=2.3.2; python_version >= '3.14'"]
    assert noxfile.for_python(wanted, "3.11") == ["numpy>=1.25"]
    assert noxfile.for_python(wanted, "3.14") == ["numpy>=2.3.2"]
    assert noxfile.lowest_pins(["torch>=2.9", "sphinx==9.0.4"]) == ["torch==2.9", "sphinx==9.0.4"]


def test_source_only_packages_resolve_alone_without_only_binary(noxfile) -> None:
    commands = noxfile.resolution_commands("py", "3.12", ["jieba==0.42.1", "furo==1"], "/t")
    assert commands[0][-2:] == ["--only-binary=:all:", "furo==1"]
    assert commands[1][-2:] == ["--no-deps", "jieba==0.42.1"]
    assert all(command[command.index("--python-version") + 1] == "3.12" for command in commands)
    assert not any(noxfile.FAST_DEPS in command for command in commands)


def test_fast_deps_reads_metadata_only_and_resolves_the_same_set(noxfile) -> None:
    """fast-deps changes how pip reads a wheel's dependencies, not what it resolves."""
    plain = noxfile.resolution_commands("py", "3.12", ["jieba==0.42.1", "furo==1"], "/t")
    fast = noxfile.resolution_commands(
        "py", "3.12", ["jieba==0.42.1", "furo==1"], "/t", fast_deps=True
    )
    assert all(noxfile.FAST_DEPS in command for command in fast)
    assert [[a for a in c if a != noxfile.FAST_DEPS] for c in fast] == plain


def test_a_deep_checkout_keeps_socket_folders_short(noxfile, tmp_path) -> None:
    deep = tmp_path / ("d" * (150 - len(str(tmp_path)) - 1))
    assert len(str(deep)) == 150
    env = noxfile.docs_cache_env(deep / "docs" / "_build" / ".cache")
    for name in noxfile.SOCKET_FOLDERS:
        # room for multiprocessing's pymp-XXXXXXXX/listener-XXXXXXXX under it (107 bytes)
        assert len(env[name]) + len("/pymp-abcdefgh/listener-abcdefgh") < 107, env[name]
        assert Path(env[name]).is_dir()
    assert env["MPLCONFIGDIR"].startswith(str(deep))  # the others stay in the checkout
    import tempfile

    with tempfile.TemporaryDirectory(prefix="c", dir="/tmp") as short_root:
        short = noxfile.docs_cache_env(Path(short_root) / "d")
        assert short["TMPDIR"] == f"{short_root}/d/tmp"  # short enough: stays


class _Session:
    """What provide_dot and font_config use of a nox session."""

    def __init__(self, location: Path, printed: str = "") -> None:
        self.virtualenv = type("Venv", (), {"location": str(location)})()
        self.bin = str(location / "bin")
        self.printed = printed

    def run(self, *args: object, **kwargs: object) -> str:
        return self.printed

    def error(self, message: str) -> None:
        raise RuntimeError(message)


def test_provide_dot_links_graphviz_pure_as_dot(noxfile, tmp_path) -> None:
    session = _Session(tmp_path)
    with pytest.raises(RuntimeError, match="installs graphviz-pure"):
        noxfile.provide_dot(session)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "graphviz-pure").write_text("#!/bin/sh\n")
    noxfile.provide_dot(session)
    noxfile.provide_dot(session)  # again: replaces its own link
    dot = tmp_path / "bin" / "dot"
    assert dot.resolve() == (tmp_path / "bin" / "graphviz-pure").resolve()


def test_font_config_adds_the_font_wheels_folders_to_the_systems(noxfile, tmp_path) -> None:
    env = noxfile.font_config(_Session(tmp_path, printed="/fonts/a\n/fonts/a\n"))
    text = Path(env["FONTCONFIG_FILE"]).read_text(encoding="utf-8")
    assert text.count("<dir>/fonts/a</dir>") == 1
    assert '<include ignore_missing="yes">/etc/fonts/fonts.conf</include>' in text
