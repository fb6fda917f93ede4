"""What a build lacks is said in its first seconds; our errors print as ours (issue 19)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import compperf_project
import pytest
from compperf_docs import preflight
from compperf_docs.languages import figures

ROOT = Path(__file__).resolve().parents[2]
BUILD_LANGUAGES = ROOT / "docs" / "_ext" / "build_languages.py"
CHINESE = compperf_project.load().language("zh_CN")
SPHINX_TRAILER = "To report this error to the developers"


def test_the_chinese_font_comes_from_the_wheel_the_sessions_install() -> None:
    assert CHINESE.font_wheel == "noto-cjk-sans-otc"
    fonts = figures.check_font(CHINESE)
    drawn_with = figures.font_files(fonts)
    assert drawn_with[CHINESE.font]  # found, by the wheel or the system


def test_a_missing_font_is_a_problem_naming_the_pip_command(monkeypatch) -> None:
    from matplotlib import font_manager

    manager = font_manager.fontManager
    monkeypatch.setattr(manager, "ttflist", [e for e in manager.ttflist if "DejaVu" in e.name])
    manager._findfont_cached.cache_clear()
    absent = CHINESE.__class__(**{**CHINESE.__dict__, "font_wheel": "no-such-font-wheel"})
    try:
        report = preflight.Preflight()
        preflight._check_fonts([absent], report)
    finally:
        manager._findfont_cached.cache_clear()
    (problem,) = report.problems
    assert "python -m pip install no-such-font-wheel" in problem
    assert "apt-get install fonts-noto-cjk" in problem


def test_without_dot_the_problem_says_how_to_get_one(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    report = preflight.Preflight()
    preflight._check_dot(report)
    (problem,) = report.problems
    assert "no `dot` program on PATH" in problem
    assert "pip install graphviz-pure" in problem


def test_an_unreadable_catalog_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    broken = folder / "index.po"
    broken.write_text('msgid "a"\nmsgstr "b"\ngarbage line\n', encoding="utf-8")
    report = preflight.Preflight()
    preflight._check_catalogs(["zh_CN"], tmp_path, report)
    assert any(str(broken) in problem for problem in report.problems), report.problems


def test_the_cxx_compiler_is_a_note_not_a_problem(monkeypatch) -> None:
    monkeypatch.setenv("CXX", "no-such-compiler-42")
    report = preflight.check(ROOT / "docs", ["en"], executes=True)
    assert not any("C++" in problem for problem in report.problems)
    assert any("no C++ compiler" in note for note in report.notes)


# A tiny site, never the real docs/: a build of that, even one stopped by its configuration,
# would rewrite the notebooks of the site built there (their install cell's address).
EXAMPLE = {"plot_a.py": '"""\nA\n=\n\nOne line.\n"""\n\nprint(1)\n'}


def _build(tiny_sites, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    site = tiny_sites.make("preflight", examples=EXAMPLE)
    out = site.docs / "_build"
    result = subprocess.run(
        [sys.executable, str(BUILD_LANGUAGES), str(site.docs), str(out / "html"),
         str(out / "doctrees"), "en", "-q", *args],
        capture_output=True, text=True, timeout=300, check=False, env=site.env(**env),
    )  # fmt: skip
    return result, out / "html"


def test_a_missing_piece_stops_the_build_before_anything_runs(tiny_sites) -> None:
    result, html = _build(tiny_sites, PATH="/nonexistent")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "nothing was executed" in result.stderr
    assert "no `dot` program on PATH" in result.stderr
    assert not html.exists()


def test_our_error_is_one_message_without_sphinxs_crash_report(tiny_sites) -> None:
    # shards.py raises a ConfigError for an unknown chapter at config-inited.
    result, _ = _build(
        tiny_sites, "-D", "plot_gallery=0", "-D", "compperf_chapters=no_such_chapter"
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "compperf_chapters: no chapter named no_such_chapter" in output
    assert SPHINX_TRAILER not in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("where", "ours"),
    [(str(ROOT / "docs" / "_ext" / "compperf_docs" / "x.py"), True), ("/elsewhere/x.py", False)],
)
def test_own_message_is_given_only_for_errors_raised_in_docs_ext(where: str, ours: bool) -> None:
    sys.path.insert(0, str(BUILD_LANGUAGES.parent))
    import build_languages
    from sphinx.errors import ExtensionError

    code = compile("raise ExtensionError('the font is missing')", where, "exec")
    try:
        exec(code, {"ExtensionError": ExtensionError})  # noqa: S102 (a frame in docs/_ext)
    except ExtensionError as error:
        message = build_languages.own_message(error)
    assert (message is not None) == ours
    if ours:
        assert "the font is missing" in message
