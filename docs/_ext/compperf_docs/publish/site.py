"""Where the site lives: its URL, its languages and their links, the wheel and the root page."""

from __future__ import annotations

import html
import importlib.metadata
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import compperf_project
from compperf_project import Language, Project
from sphinx.errors import ConfigError
from sphinx.locale import _
from sphinx.util import logging

from compperf_docs import workarounds
from compperf_docs.languages import i18n

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

__all__ = [
    "ROOT_PROMPT",
    "SITE_URL_VARIABLE",
    "WHEEL_FOLDER",
    "add_language_links",
    "derive_urls",
    "forget_removed_pages",
    "move_notebook_outputs",
    "not_found_context",
    "project",
    "site_url",
    "wheel_filename",
    "wheel_url",
    "write_root_files",
    "write_root_index",
    "write_root_sitemap",
]

logger = logging.getLogger(__name__)

SITE_URL_VARIABLE = compperf_project.SITE_URL_VARIABLE
# Beside the language folders, so that every language's notebooks share one wheel.
WHEEL_FOLDER = "wheels"


def _pyproject(srcdir: str | Path) -> Path:
    return Path(srcdir).resolve().parent / "pyproject.toml"


def project(app: Sphinx) -> Project:
    """The site's ``[tool.compperf]`` table, from the pyproject.toml beside ``docs/``.

    Built languages sit side by side under the deployable root, ``html/<code>/``. The
    first one is built first (it executes the examples; the others reuse its outputs)
    and is where the root page sends everyone else.
    """
    try:
        return compperf_project.load(_pyproject(app.srcdir))
    except compperf_project.ProjectError as error:
        raise ConfigError(str(error)) from error


def site_url(srcdir: str | Path | None = None) -> str:
    """The deployable root's public URL, ending in ``/``.

    ``$COMPPERF_SITE_URL`` when set, else ``site-url`` in ``[tool.compperf]`` of the
    pyproject.toml beside ``srcdir`` (default: the repository's).
    """
    try:
        return compperf_project.site_url(_pyproject(srcdir) if srcdir else None)
    except compperf_project.ProjectError as error:
        raise ConfigError(str(error)) from error


def wheel_filename() -> str:
    """Name of the compperf wheel that the docs build publishes (pure Python)."""
    version = importlib.metadata.version("compperf")
    return f"compperf-{version}-py3-none-any.whl"


def wheel_url(root_url: str) -> str:
    """Absolute URL from which a downloaded notebook installs compperf."""
    return f"{root_url}{WHEEL_FOLDER}/{wheel_filename()}"


def derive_urls(app: Sphinx, config: Config) -> None:
    """Set the per-language URLs and 404 text once ``-D language=...`` has been applied.

    The deployable root holds one folder per language, so the canonical base,
    the Open Graph URL and the 404 page's link prefix all end in ``<language>/``.
    """
    root = config.compperf_site_url
    if not root.endswith("/"):
        root += "/"
    language = config.language
    if app is not None:
        # Unknown codes stop here, naming the languages the site has.
        try:
            config.html_search_language = project(app).language(language).search
        except compperf_project.ProjectError as error:
            raise ConfigError(str(error)) from error
    config.html_baseurl = f"{root}{language}/"
    config.ogp_site_url = config.html_baseurl
    # sphinx-sitemap: root + "<language>/" + page, with hreflang alternates.
    config.site_url = root
    config.sitemap_url_scheme = "{lang}{link}"
    config.notfound_urls_prefix = f"{urlsplit(root).path}{language}/"
    # Sphinx has loaded the language's catalogs by now (config-inited).
    config.notfound_context = not_found_context()


def move_notebook_outputs(app: Sphinx) -> None:
    """Keep myst-nb's executed notebooks beside the doctrees, out of the deployable root.

    myst-nb writes them to ``<outdir>/../jupyter_execute``, which for ``html/<language>/``
    is inside the published site.
    """
    if "myst_nb" not in app.extensions:
        return
    config = getattr(app.env, "mystnb_config", None)
    folder = Path(app.doctreedir) / "jupyter_execute"
    try:
        app.env.mystnb_config = config.copy(output_folder=str(folder.resolve()))
    except (AttributeError, TypeError) as error:
        # Executed notebooks would land in the published folder.
        workarounds.slipped(
            "mystnb-output-folder",
            f"env.mystnb_config is {type(config).__name__} and cannot be copied with a "
            f"new output_folder ({error})",
        )


def forget_removed_pages(
    app: Sphinx, env: object, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Delete the published page of each source removed since the last build.

    Sphinx leaves them in the output folder; this lets ``nox -s docs`` rebuild
    incrementally (nothing read or written again when nothing changed) instead of
    emptying ``html/<language>/`` before each build.
    """
    if app.builder.format == "html":
        for docname in sorted(removed):
            page = Path(app.outdir, app.builder.get_target_uri(docname))
            if page.is_file():
                logger.info("compperf: %s is gone, removing %s", docname, page)
                page.unlink()
    return []


# Sends the reader on to the first of their browser's languages that the site has; the
# list of links below works without it. Any Chinese variant gets the simplified site.
_CHOOSE_LANGUAGE_SCRIPT = """\
  <script>
    (function () {
      var built = %s;
      var wanted = navigator.languages || [navigator.language || ""];
      for (var i = 0; i < wanted.length; i++) {
        var tag = String(wanted[i]).toLowerCase().replace("_", "-");
        for (var j = 0; j < built.length; j++) {
          var code = built[j].toLowerCase().replace("_", "-");
          if (tag === code || tag.split("-")[0] === code.split("-")[0]) {
            window.location.replace(built[j] + "/index.html");
            return;
          }
        }
      }
      window.location.replace(built[0] + "/index.html");
    })();
  </script>
"""


def N_(message: str) -> str:
    """Mark ``message`` for the UI catalog; it is translated later, per language."""
    return message


# The root page speaks to every reader at once: this line, in each built language.
ROOT_PROMPT = N_("Choose a language:")


def write_root_index(
    root: Path,
    languages: Sequence[Language],
    prompts: dict[str, str] | None = None,
    root_url: str | None = None,
) -> Path:
    """Write ``root/index.html``: plain links to each built language.

    With one built language the page redirects there at once (no script). With several,
    a small script picks the first of the browser's preferred languages that was built,
    the first built language otherwise; without JavaScript the reader picks from the list.
    ``prompts`` maps a language code to ``ROOT_PROMPT`` in that language. With
    ``root_url`` (the root's public URL), the head names it as the ``x-default`` version
    of the home page and each built language's home page as an alternate.
    """
    built = [lang for lang in languages if (root / lang.code / "index.html").exists()]
    if not built:
        raise FileNotFoundError(
            f"no built language under {root} (looked for {[lang.code for lang in languages]})"
        )
    prompts = prompts or {}
    items = "\n".join(
        f'      <li lang="{lang.tag}">{html.escape(prompts.get(lang.code, ROOT_PROMPT))} '
        f'<a href="{lang.code}/index.html" hreflang="{lang.tag}">{html.escape(lang.name)}</a></li>'
        for lang in built
    )
    if len(built) == 1:
        redirect = f'  <meta http-equiv="refresh" content="0; url={built[0].code}/index.html">\n'
        script = ""
    else:
        redirect = ""
        script = _CHOOSE_LANGUAGE_SCRIPT % json.dumps([lang.code for lang in built])
    alternates = ""
    if root_url is not None:
        hrefs = [(lang.tag, f"{root_url}{lang.code}/index.html") for lang in built]
        alternates = "".join(
            f'  <link rel="alternate" hreflang="{tag}" href="{html.escape(href)}">\n'
            for tag, href in [*hrefs, ("x-default", root_url)]
        )
    page = root / "index.html"
    page.write_text(
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n'
        '  <meta charset="utf-8">\n'
        '  <meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"{redirect}"
        "  <title>compperf</title>\n"
        f"{alternates}"
        "  <style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;"
        "padding:0 1rem;line-height:1.5}@media(prefers-color-scheme:dark)"
        "{body{background:#131416;color:#cfd0d0}a{color:#79b8ff}}</style>\n"
        f"{script}"
        "</head>\n<body>\n"
        "  <h1>compperf</h1>\n"
        # No English aria-label: the page speaks to every reader, each item in its language.
        f"  <nav>\n    <ul>\n{items}\n    </ul>\n  </nav>\n"
        "</body>\n</html>\n",
        encoding="utf-8",
    )
    return page


def write_root_sitemap(root: Path, root_url: str, languages: Sequence[Language]) -> Path:
    """Write ``root/sitemap.xml``: a sitemap index of each built language's sitemap."""
    entries = "".join(
        f"  <sitemap><loc>{html.escape(root_url)}{lang.code}/sitemap.xml</loc></sitemap>\n"
        for lang in languages
        if (root / lang.code / "sitemap.xml").exists()
    )
    path = root / "sitemap.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{entries}</sitemapindex>\n",
        encoding="utf-8",
    )
    return path


def add_language_links(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """Give templates ``compperf_languages``: this page in every language, for the switcher.

    Each entry is ``(code, tag, name, url, current)``. Every language is built from the
    same sources, so the page has the same name in each; the 404 page is served at any
    depth, so its links are absolute. ``<html lang>`` gets the language's own tag.
    """
    if app.builder.format != "html":
        return
    languages = project(app).languages
    target = app.builder.get_target_uri(pagename)
    if pagename == getattr(app.config, "notfound_pagename", "404"):
        prefix = urlsplit(app.config.compperf_site_url).path
        urls = {lang.code: f"{prefix}{lang.code}/index.html" for lang in languages}
    else:
        up = "../" * (pagename.count("/") + 1)  # from html/<language>/<page> to html/
        urls = {lang.code: f"{up}{lang.code}/{target}" for lang in languages}
    context["compperf_languages"] = [
        (lang.code, lang.tag, lang.name, urls[lang.code], lang.code == app.config.language)
        for lang in languages
    ]
    context["language"] = project(app).language(app.config.language).tag


def not_found_context() -> dict[str, str]:
    """The 404 page's title and body, in the language being built."""
    title = str(_("Page not found"))
    text = str(
        _(
            "This page does not exist, or it moved. Search for it with the box in the "
            "menu, or start again from the title at the top."
        )
    )
    return {
        "title": title,
        "body": f"<h1>{html.escape(title)}</h1>\n<p>{html.escape(text)}</p>",
    }


def write_root_files(app: Sphinx, exception: Exception | None) -> None:
    """After an HTML build into ``<root>/<language>/``, refresh the root's index and 404."""
    outdir = Path(app.outdir)
    if exception is not None or app.builder.format != "html":
        return
    if outdir.name != app.config.language:
        logger.info("compperf: %s is not a language folder; no root page written", outdir)
        return
    root = outdir.parent
    languages = project(app).languages
    prompts = {
        lang.code: i18n.ui_translation(app.srcdir, app.config, lang.code, ROOT_PROMPT)
        for lang in languages
    }
    write_root_index(root, languages, prompts=prompts, root_url=app.config.compperf_site_url)
    write_root_sitemap(root, app.config.compperf_site_url, languages)
    default_language = languages[0].code
    not_found = outdir / "404.html"
    if app.config.language == default_language and not_found.exists():
        # Its links carry an absolute /<path>/<language>/ prefix, so it works from the root.
        shutil.copyfile(not_found, root / "404.html")
    wheel = root / WHEEL_FOLDER / wheel_filename()
    if not wheel.exists():
        logger.warning(
            "compperf: notebooks install compperf from %s, but %s does not exist; "
            "`nox -s docs` builds it (pip wheel --no-deps -w %s .)",
            wheel_url(app.config.compperf_site_url),
            wheel,
            root / WHEEL_FOLDER,
            type="compperf",
            subtype="wheel",
        )
