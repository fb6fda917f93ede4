"""[tool.compperf]: the one place for languages, chapters and the site URL, and its errors."""

from __future__ import annotations

from pathlib import Path

import compperf_project
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_repository_table_is_complete() -> None:
    project = compperf_project.load()
    assert project.codes, "no languages"
    assert len(set(project.codes)) == len(project.codes)
    for chapter in project.chapters:
        assert (ROOT / "examples" / chapter / "GALLERY_HEADER.rst").is_file(), chapter
    for language in project.languages[1:]:
        assert (ROOT / "docs" / "locales" / language.code / "LC_MESSAGES").is_dir()
    assert compperf_project.chapters() == list(project.chapters)


def test_the_site_and_a_downloaded_script_draw_with_the_same_fonts() -> None:
    # compperf cannot read pyproject.toml on a learner's machine, so it keeps its own list
    # (compperf.i18n.FONTS, with macOS and Windows fallbacks); the site's font comes first.
    from compperf import i18n

    for language in compperf_project.load().languages[1:]:
        if language.font != "DejaVu Sans":  # matplotlib's own, nothing to choose
            assert i18n.FONTS[language.code][0] == language.font, language.code


def test_round_trip_through_toml(tmp_path: Path) -> None:
    project = compperf_project.load()
    assert compperf_project.load(_write(tmp_path, project.to_toml())) == project


HEAD = "[tool.compperf]\nsite-url = 'https://x/'\n"
ENGLISH = "[[tool.compperf.languages]]\ncode = 'en'\nname = 'E'\ntag = 'en'\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[project]\nname = 'x'\n", "has no \\[tool.compperf\\] table"),
        (
            "[tool.compperf]\nsite-url = 'ftp://x/'\nchapters = ['a']\nlanguages = []\n",
            "not an absolute http\\(s\\) URL",
        ),
        (HEAD + "languages = []\n", "'chapters' is missing"),
        (HEAD + "chapters = ['a']\n" + ENGLISH, "languages\\[0\\]: 'search' is missing"),
        (HEAD + "chapters = ['a']\n" + ENGLISH + "search = 'en'\nflag = 'x'\n", "unknown key"),
        (HEAD + "chapters = ['a', 'a']\n" + ENGLISH + "search = 'en'\n", "listed twice"),
        (HEAD + "chapters = [1]\n" + ENGLISH + "search = 'en'\n", "must list folder names"),
    ],
)
def test_malformed_tables_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(compperf_project.ProjectError, match=message):
        compperf_project.load(_write(tmp_path, text))


def test_unknown_language_lists_the_known_ones() -> None:
    project = compperf_project.load()
    with pytest.raises(compperf_project.ProjectError, match=project.codes[0]):
        project.language("xx")


def test_environment_overrides_the_site_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compperf_project.SITE_URL_VARIABLE, "https://example.org/a")
    assert compperf_project.site_url() == "https://example.org/a/"
    monkeypatch.setenv(compperf_project.SITE_URL_VARIABLE, "example.org")
    with pytest.raises(compperf_project.ProjectError, match="COMPPERF_SITE_URL"):
        compperf_project.site_url()
