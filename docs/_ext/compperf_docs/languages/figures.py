"""Figures in the page's language: pickled when the example runs, drawn again per language.

The English build executes the examples; :func:`scraper` (sphinx-gallery's matplotlib
scraper, configured by :func:`compperf_docs.execute.gallery.gallery_conf`) also pickles every
figure beside its PNG. A zh_CN or ru build executes nothing: :func:`draw_languages`
unpickles each figure, replaces every text that is a recorded message's English
rendering with its translation (titles, axis labels, legends, annotations, and the tick
labels formatters make), draws it with the language's font and saves
``images/sphx_glr_<stem>_NNN.<lang>.png`` (and the chapter thumbnail
``images/thumb/sphx_glr_<stem>_thumb.<lang>.png``, which Sphinx finds through
``figure_language_filename``). :class:`FigureLanguage` points the page's figures there.

A figure is drawn again only when its pickle, the example's records, their translations
or the font changed (a key kept in the PNG). Each PNG carries the texts it shows in its
metadata (``compperf-texts``, a JSON list), so that tests can read what a figure says.

Why one module of about 600 lines: pickling (English build), finding and replacing a
figure's texts, drawing it again and pointing the page at it are one round trip whose
parts share the figure's key and the PNG's text chunk; split, each part would import
the others' private helpers. A split along the round trip (scrape / translate / draw)
is the next step if it grows further.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import re
import struct
import time
import warnings
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.errors import SphinxError
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from compperf_docs import order, workarounds
from compperf_docs.execute import recorded

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = [
    "FONTS_KEY",
    "TEXTS_KEY",
    "FigureLanguage",
    "FigureTextError",
    "check_font",
    "draw_languages",
    "font_files",
    "font_hint",
    "forget_example",
    "has_words",
    "language_path",
    "last_gallery",
    "png_texts",
    "scraper",
    "translations",
]

logger = logging.getLogger(__name__)

# PNG text chunks: the texts a figure shows (JSON list) and what it was drawn from.
TEXTS_KEY = "compperf-texts"
_KEY = "compperf-key"
_ALT_KEY = "compperf-alt"
# The font file of each family the figure was drawn with (JSON: family -> path).
FONTS_KEY = "compperf-fonts"
# Bump when drawing changes in a way the key does not see.
_DRAWING_VERSION = "2"
# Settings in force when sphinx-gallery saved the figure; the copy is saved with them.
_SAVE_RC = ("savefig.", "figure.facecolor", "figure.edgecolor")
# Where the scraper saw each example's gallery folder, by example file name.
_GALLERIES: dict[str, Path] = {}


class FigureTextError(SphinxError):
    category = "Figure language error"


def forget_example(name: str) -> None:
    """The example ``name`` is about to run: its first scraped block starts afresh."""
    _GALLERIES.pop(name, None)


def last_gallery(name: str) -> Path | None:
    """The gallery folder that the scraper last saved figures of example ``name`` into."""
    return _GALLERIES.get(name)


def _payload(fig: Any) -> bytes:
    import matplotlib

    rc = {k: v for k, v in matplotlib.rcParams.items() if k.startswith(_SAVE_RC)}
    return pickle.dumps({"figure": fig, "rc": rc}, protocol=pickle.HIGHEST_PROTOCOL)


def _titles(fig: Any) -> list[str]:
    """The figure's title and its axes' titles: sphinx-gallery's alt text for its image."""
    suptitle = getattr(fig, "_suptitle", None)  # as sphinx-gallery reads it
    titles = [suptitle.get_text()] if suptitle is not None else []
    titles += [ax.get_title(loc=loc) for ax in fig.axes for loc in ("left", "center", "right")]
    return [title for title in titles if title.strip()]


def scraper(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    """sphinx-gallery's matplotlib scraper, pickling each figure beside the PNG it saves.

    Raises
    ------
    RuntimeError
        If a figure has no title (sphinx-gallery's alt text would be its file name), or
        if it cannot be pickled (a function defined in the example, e.g. for a
        ``FuncFormatter``): the other languages could not draw it.
    """
    import matplotlib.pyplot as plt
    from sphinx_gallery.scrapers import matplotlib_scraper

    target = Path(block_vars["target_file"])
    if _GALLERIES.get(target.name) != target.parent:  # the first block of this example
        _GALLERIES[target.name] = target.parent
        for old in (target.parent / "images").glob(f"sphx_glr_{target.stem}_*.pickle"):
            old.unlink()
    iterator = block_vars["image_path_iterator"]
    before = len(iterator.paths)
    payloads = []
    for number in plt.get_fignums():
        if not _titles(plt.figure(number)):
            raise RuntimeError(
                f"figure {number} of {target.stem}.py has no title, so sphinx-gallery would "
                "describe it to screen readers by its file name: give it one "
                "(fig.suptitle(...) or ax.set_title(...), through compperf.tr)"
            )
        try:
            payloads.append(_payload(plt.figure(number)))
        except Exception as error:
            raise RuntimeError(
                f"figure {number} of {target.stem}.py cannot be pickled, so the other "
                f"languages cannot draw it with translated labels: {error}. Use "
                "matplotlib's own formatters and artists, not functions defined in the "
                "example"
            ) from error
    rst = matplotlib_scraper(block, block_vars, gallery_conf)
    for path, payload in zip(iterator.paths[before:], payloads, strict=False):
        recorded.pickle_path(Path(path)).write_bytes(payload)
    return rst


def language_path(png: Path, language: str) -> Path:
    """``sphx_glr_x_001.png`` -> ``sphx_glr_x_001.<language>.png``."""
    return png.with_name(f"{png.stem}.{language}{png.suffix}")


# -- PNG text chunks -------------------------------------------------------------------


def _itxt(key: str, text: str) -> bytes:
    data = key.encode("latin-1") + b"\0\0\0\0\0" + text.encode("utf-8")
    body = b"iTXt" + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def _with_texts(png: bytes, texts: Mapping[str, str]) -> bytes:
    """``png`` with iTXt chunks inserted after its header chunk (IHDR, 25 bytes in)."""
    head = 8 + 4 + 4 + 13 + 4
    if png[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    return png[:head] + b"".join(_itxt(k, v) for k, v in texts.items()) + png[head:]


def png_texts(path: Path) -> dict[str, str]:
    """The text chunks of a PNG file (tEXt and iTXt without compression)."""
    data = path.read_bytes()
    found, offset = {}, 8
    while offset + 8 <= len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IDAT":
            break
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            if rest[:1] == b"\0":  # not compressed
                _lang, _, rest = rest[2:].partition(b"\0")
                _translated, _, value = rest.partition(b"\0")
                found[key.decode("latin-1")] = value.decode("utf-8")
        offset += 12 + length
    return found


# -- Which texts translate to what -------------------------------------------------------

_MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$", re.DOTALL)
_NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?(?:e[-+−]?\d+)?", re.IGNORECASE)


def has_words(text: str) -> bool:
    """Whether ``text`` has letters outside ``$math$`` and numbers such as ``1e6``."""
    plain = _NUMBER.sub("", _MATH.sub("", text))
    return any(char.isalpha() for char in plain)


@dataclass
class Translations:
    """One example's recorded messages in one language.

    Attributes
    ----------
    example : str
        The example's source path, for error messages.
    texts : dict of str to str
        Each record's English rendering -> its rendering in the language.
    problems : list of str
        Records that have no translation (or a broken one), one sentence each.
    """

    example: str
    texts: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def key(self) -> str:
        return json.dumps(sorted(self.texts.items()), ensure_ascii=False)


def translations(recording: recorded.Recorded, language: str) -> Translations:
    """Every recorded message of an example, rendered strictly in ``language``."""
    from compperf import i18n

    found = Translations(recording.example)
    for record in recorded.records_in(recording.records):
        english = i18n.render(record, i18n.SOURCE_LANGUAGE)
        if english in found.texts:
            continue
        try:
            found.texts[english] = i18n.render(record, language, strict=True)
        except i18n.MissingTranslation as error:
            found.problems.append(
                f"{recording.example}: the message {record['message']!r} has no {language} "
                f"translation ({error}); translate it in compperf's catalogs "
                f"(src/compperf/locales/{language}/, `nox -s translations`)"
            )
        except (KeyError, ValueError, IndexError) as error:
            found.problems.append(f"{recording.example}: {error}")
    return found


# -- Drawing ---------------------------------------------------------------------------


def _is_code(text: Any) -> bool:
    """Whether a Text is drawn in a monospace family: code (an API name), which stays as is."""
    import matplotlib

    monospace = {"monospace", *matplotlib.rcParams["font.monospace"]}
    return any(family in monospace for family in text.get_fontfamily())


def _axes_axes(fig: Any) -> Iterator[Any]:
    for ax in fig.get_axes():
        for name in ("xaxis", "yaxis", "zaxis"):
            axis = getattr(ax, name, None)
            if axis is not None:
                yield axis


def _translating_formatter(inner: Any, translate: Callable[[str], str]) -> Any:
    from matplotlib.ticker import Formatter

    class Translated(Formatter):
        """``inner``'s tick labels, translated (categorical and fixed labels too)."""

        def __call__(self, x: float, pos: int | None = None) -> str:
            return translate(inner(x, pos))

        def format_ticks(self, values: Any) -> list[str]:
            return [translate(label) for label in inner.format_ticks(values)]

        def set_locs(self, locs: Any) -> None:
            inner.set_locs(locs)

        def get_offset(self) -> str:
            return translate(inner.get_offset())

        def format_data(self, value: float) -> str:
            return inner.format_data(value)

        def format_data_short(self, value: float) -> str:
            return inner.format_data_short(value)

    return Translated()


@dataclass
class _Drawn:
    png: bytes
    texts: list[str]
    alt: str
    problems: list[str]
    missing_glyphs: list[str]
    # sphinx-gallery's image_srcset copies (factor -> PNG), drawn at factor x the dpi.
    hidpi: dict[float, bytes] = field(default_factory=dict)
    # Legends over data and figures squeezed on the page (compperf.figure_layout): the
    # tests fail on them; the build leaves them to the tests, since they depend on data.
    layout: list[str] = field(default_factory=list)


def _hidpi_path(png: Path, factor: float) -> Path:
    """``x_001.png`` -> ``x_001_2_00x.png``, as sphinx-gallery names a srcset copy."""
    return png.with_name(f"{png.stem}_{f'{factor:.2f}'.replace('.', '_')}x{png.suffix}")


def _draw(
    payload: bytes,
    table: Translations,
    where: str,
    fonts: list[str],
    hidpi: Sequence[float] = (),
) -> _Drawn:
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.text import Text
    from sphinx_gallery.scrapers import _matplotlib_fig_titles

    from compperf.figure_layout import (
        legends_over_data,
        squeezed,
        texts_outside,
        tick_labels_overlapping,
    )

    produced: set[str] = set()

    def translate(text: str) -> str:
        # Silent here: what is drawn is checked once the figure has been drawn.
        if text in table.texts:
            produced.add(table.texts[text])
            return table.texts[text]
        return text

    data = pickle.loads(payload)
    fig, rc = data["figure"], data["rc"]
    try:
        for artist in fig.findobj(Text):
            artist.set_text(translate(artist.get_text()))
            # matplotlib falls back from one font to the next only along an explicit
            # list, not along a generic family's (font.sans-serif).
            family = artist.get_fontfamily()
            if family and all(name in ("sans-serif", "sans") for name in family):
                artist.set_fontfamily(fonts)
        for axis in _axes_axes(fig):
            axis.set_major_formatter(_translating_formatter(axis.get_major_formatter(), translate))
            axis.set_minor_formatter(_translating_formatter(axis.get_minor_formatter(), translate))
        settings = {**rc, "font.family": fonts, "font.sans-serif": fonts}
        buffer = io.BytesIO()
        with matplotlib.rc_context(settings), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kwargs = {}
            to_rgba = matplotlib.colors.to_rgba
            for attr in ("facecolor", "edgecolor"):  # as sphinx-gallery's scraper saves
                value = getattr(fig, f"get_{attr}")()
                if to_rgba(value) != to_rgba(matplotlib.rcParams[f"figure.{attr}"]):
                    kwargs[attr] = value
            fig.savefig(buffer, format="png", **kwargs)
            dpi = matplotlib.rcParams["savefig.dpi"]
            dpi = fig.dpi if dpi == "figure" else dpi
            copies = {}
            for factor in hidpi:
                copy = io.BytesIO()
                fig.savefig(copy, format="png", **{**kwargs, "dpi": factor * dpi})
                copies[factor] = copy.getvalue()
            cut = [
                f"{table.example}: {where}: {text}"
                for text in texts_outside(fig) + tick_labels_overlapping(fig)
            ]
            layout = legends_over_data(fig) + squeezed(fig)
        drawn = [
            t
            for t in fig.findobj(Text)
            if t.get_visible() and t.get_text() and (t.axes is None or t.axes.get_visible())
        ]
        shown = [t.get_text() for t in drawn]
        code = {t.get_text() for t in drawn if _is_code(t)}
        problems = [
            f"{table.example}: {where} shows {text!r}, "
            + (
                "which is drawn by an artist whose text compperf_docs.languages.figures cannot replace"
                if text in table.texts
                else "which is no message the example recorded; make it with "
                "compperf.tr(...) so that it can be translated"
            )
            for text in dict.fromkeys(shown)
            if text not in produced and text not in code and has_words(text)
        ] + cut
        missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
        alt = _matplotlib_fig_titles(fig).replace("\n", " ")
    finally:
        plt.close(fig)
    shown = list(dict.fromkeys(shown))
    return _Drawn(buffer.getvalue(), shown, alt, problems, missing, copies, layout)


def font_hint(language: Any) -> str:
    """The commands that install the language's font, for an error message."""
    ways = []
    if language.font_wheel:
        ways.append(f"python -m pip install {language.font_wheel} (nox's sessions install it)")
    if language.font_package:
        ways.append(f"Debian: apt-get install {language.font_package}")
    return "install it: " + ", or ".join(ways) if ways else "install it"


def check_font(language: Any) -> list[str]:
    """Fonts for ``font.sans-serif``; raises if the language's font is not installed.

    The language's ``font-wheel``, when installed, is made known to matplotlib first.
    """
    from matplotlib import font_manager

    from compperf import i18n

    if language.font_wheel:
        i18n.add_wheel_fonts(language.code, language.font_wheel)
    fonts = list(dict.fromkeys(["DejaVu Sans", language.font]))
    for font in fonts:
        try:
            font_manager.findfont(
                font_manager.FontProperties(family=font), fallback_to_default=False
            )
        except ValueError as error:
            raise FigureTextError(
                f"the {language.code} figures need the font {font!r}, which matplotlib "
                f"cannot find ({error}); {font_hint(language)}; if it is installed, delete "
                "matplotlib's font cache (fontlist-*.json under matplotlib.get_cachedir())"
            ) from error
    return fonts


def font_files(fonts: list[str]) -> dict[str, str]:
    """The file matplotlib draws each font family with (kept in each PNG: ``FONTS_KEY``)."""
    from matplotlib import font_manager

    return {
        font: font_manager.findfont(
            font_manager.FontProperties(family=font), fallback_to_default=False
        )
        for font in fonts
    }


@dataclass(frozen=True)
class _Example:
    gallery: Path
    stem: str
    source: Path
    recording: recorded.Recorded | None
    figures: list[Path]


def _examples(app: Sphinx) -> Iterator[_Example]:
    conf = app.config.sphinx_gallery_conf
    srcdir = Path(app.srcdir)
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        gallery = Path(gallery)
        for source in sorted(Path(examples).glob("plot_*.py")):
            page = gallery / f"{source.stem}.rst"
            figures = recorded.figure_paths(srcdir, page)
            executed = figures or (
                page.is_file() and "sphx-glr-script-out" in page.read_text("utf-8")
            )
            recording = recorded.load(gallery, source.stem)
            if executed or recording is not None:
                yield _Example(gallery, source.stem, source, recording, figures)


def _thumbnail_number(source: Path, figures: int) -> int | None:
    """Which figure sphinx-gallery made the thumbnail from (1-based), if one."""
    from sphinx_gallery.py_source_parser import extract_file_config

    conf = extract_file_config(source.read_text(encoding="utf-8"))
    if conf.get("thumbnail_path") is not None and conf.get("thumbnail_number") is None:
        return None
    number = conf.get("thumbnail_number", 1)
    if not isinstance(number, int):
        return None
    return number + figures + 1 if number < 0 else number


def _project_language(app: Sphinx) -> Any:
    import compperf_project

    pyproject = Path(app.srcdir).parent / "pyproject.toml"
    project = compperf_project.load(pyproject if pyproject.is_file() else None)
    return project.language(app.config.language)


def draw_languages(app: Sphinx) -> None:
    """In a zh_CN or ru build, draw each example's figures in the language if they are stale.

    Runs at ``builder-inited``, after sphinx-gallery has written its pages and before
    Sphinx decides which pages to read again: a figure drawn anew makes its page (which
    depends on the PNG) be read and written again. Every recorded message of every
    example must have a translation, and every figure text with letters must be one.

    Raises
    ------
    FigureTextError
        Naming each example file and message or text that cannot be shown in the language.
    """
    language = app.config.language
    if language == "en" or app.builder.name == "gettext":
        return
    conf = app.config.sphinx_gallery_conf
    problems: list[str] = []
    fonts: list[str] | None = None
    drawn, start = 0, time.perf_counter()
    for example in _examples(app):
        name = f"{Path(example.source).parent.name}/{example.source.name}"
        if example.recording is None:
            problems.append(
                f"{name}: its page shows outputs but the build that executed it recorded no "
                f"messages ({recorded.messages_path(example.gallery, example.stem)} is "
                "missing); build English again (it executes the example)"
            )
            continue
        table = translations(example.recording, language)
        problems += table.problems
        if table.problems:
            continue
        thumbnail = _thumbnail_number(example.source, len(example.figures))
        for index, png in enumerate(example.figures, start=1):
            source = recorded.pickle_path(png)
            if not source.is_file():
                problems.append(
                    f"{example.recording.example}: figure {png.name} has no pickle "
                    f"({source.name}); build English again (it executes the example)"
                )
                continue
            if fonts is None:
                fonts = check_font(_project_language(app))
            payload = source.read_bytes()
            key = hashlib.sha256(
                b"\0".join(
                    [
                        _DRAWING_VERSION.encode(),
                        hashlib.sha256(payload).digest(),
                        table.key().encode(),
                        json.dumps(font_files(fonts)).encode(),
                    ]
                )
            ).hexdigest()
            target = language_path(png, language)
            # The image_srcset copies that the English build saved beside the PNG.
            hidpi = [f for f in conf.get("image_srcset", []) if _hidpi_path(png, f).is_file()]
            copies = {f: language_path(_hidpi_path(png, f), language) for f in hidpi}
            current = all(path.is_file() for path in copies.values())
            if current and target.is_file() and png_texts(target).get(_KEY) == key:
                if index == thumbnail:
                    _thumbnail(target, example, language, conf, only_if_missing=True)
                continue
            try:
                result = _draw(payload, table, f"figure {png.name}", fonts, hidpi)
            except (pickle.UnpicklingError, AttributeError, ImportError, EOFError) as error:
                problems.append(
                    f"{example.recording.example}: cannot read the pickled figure "
                    f"{source.name} ({error!r}); build English again (it executes the example)"
                )
                continue
            problems += result.problems
            if result.missing_glyphs:
                lang = _project_language(app)
                problems.append(
                    f"{example.recording.example}: figure {png.name} has characters that "
                    f"no font of {fonts} draws ({'; '.join(sorted(set(result.missing_glyphs)))})"
                    + f"; {font_hint(lang)}"
                )
            if result.problems or result.missing_glyphs:
                target.unlink(missing_ok=True)
                continue
            texts = {
                TEXTS_KEY: json.dumps(result.texts, ensure_ascii=False),
                _ALT_KEY: result.alt,
                _KEY: key,
                FONTS_KEY: json.dumps(font_files(fonts)),
            }
            target.write_bytes(_with_texts(result.png, texts))
            for factor, path in copies.items():
                path.write_bytes(_with_texts(result.hidpi[factor], texts))
            drawn += 1
            if index == thumbnail:
                _thumbnail(target, example, language, conf)
    logger.info(
        "compperf: %d figure(s) drawn in %s, %.2f s (the others were current)",
        drawn,
        language,
        time.perf_counter() - start,
    )
    if problems:
        raise FigureTextError(
            f"{len(problems)} problem(s) showing the examples' outputs in {language}:\n  "
            + "\n  ".join(problems)
        )


def _thumbnail(
    figure: Path, example: _Example, language: str, conf: dict, *, only_if_missing: bool = False
) -> None:
    """The chapter page's thumbnail, scaled from the figure as sphinx-gallery does."""
    from sphinx_gallery.utils import scale_image

    thumb = example.gallery / "images" / "thumb" / f"sphx_glr_{example.stem}_thumb.png"
    target = language_path(thumb, language)
    if not thumb.is_file() or (only_if_missing and target.is_file()):
        return
    scale_image(str(figure), str(target), *conf["thumbnail_size"])


class FigureLanguage(SphinxTransform):
    """Point an example page's figures at the ones drawn in the page's language.

    sphinx-gallery's ``image-sg`` node is no image node, so Sphinx's
    ``figure_language_filename`` does not reach it: its ``uri``, ``srcset`` and ``alt``
    are rewritten here, and the page depends on the language's PNG.
    """

    default_priority = order.FIGURE_LANGUAGE

    def apply(self, **kwargs: Any) -> None:
        if self.config.language == "en":
            return
        from sphinx_gallery.directives import imgsgnode

        srcdir = Path(self.env.srcdir)
        for node in self.document.findall(imgsgnode):
            uri = node.get("uri", "")
            target = language_path(srcdir / uri.lstrip("/"), self.config.language)
            if not target.is_file():
                workarounds.slipped(
                    "figure-language",
                    f"no {self.config.language} figure {target.name} for {uri}",
                    location=node,
                )
                continue
            self.env.note_dependency(str(target))
            node["uri"] = _language_uri(uri, self.config.language)
            if node.get("srcset"):
                entries = [entry.split() for entry in node["srcset"].split(",") if entry.strip()]
                node["srcset"] = ", ".join(
                    " ".join([_language_uri(entry[0], self.config.language), *entry[1:]])
                    for entry in entries
                    if len(entry) == 1  # the 1x entry, and each copy drawn in the language
                    or language_path(srcdir / entry[0].lstrip("/"), self.config.language).is_file()
                )
            alt = png_texts(target).get(_ALT_KEY)
            if alt:
                node["alt"] = alt


def _language_uri(uri: str, language: str) -> str:
    stem, dot, suffix = uri.rpartition(".")
    return f"{stem}.{language}{dot}{suffix}"
