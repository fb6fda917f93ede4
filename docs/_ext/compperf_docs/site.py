"""Where the site lives: its URL, its languages and their links, the wheel and the root page."""

from __future__ import annotations

import html
import importlib.metadata
import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from sphinx.errors import ConfigError
from sphinx.locale import _
from sphinx.util import logging

from compperf_docs import i18n

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

__all__ = [
    "DEFAULT_SITE_URL",
    "LANGUAGES",
    "ROOT_PROMPT",
    "SITE_URL_VARIABLE",
    "WHEEL_FOLDER",
    "add_language_links",
    "derive_urls",
    "move_notebook_outputs",
    "not_found_context",
    "site_url",
    "wheel_filename",
    "wheel_url",
    "write_root_files",
    "write_root_index",
    "write_root_sitemap",
]

logger = logging.getLogger(__name__)

SITE_URL_VARIABLE = "COMPPERF_SITE_URL"
DEFAULT_SITE_URL = "https://compperf.github.io/compperf/"
# Built languages sit side by side under the deployable root: html/<code>/, each name
# written in its own language. The first one is built first (it executes the examples;
# the others reuse its outputs) and is where the root page sends everyone else.
LANGUAGES = {"en": "English", "zh_CN": "中文", "ru": "Русский"}
# Beside the language folders, so that every language's notebooks share one wheel.
WHEEL_FOLDER = "wheels"


def site_url() -> str:
    """The deployable root's public URL, from ``$COMPPERF_SITE_URL``, ending in ``/``."""
    url = os.environ.get(SITE_URL_VARIABLE, "").strip() or DEFAULT_SITE_URL
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"{SITE_URL_VARIABLE}={url!r} is not an absolute http(s) URL; "
            f"expected something like {DEFAULT_SITE_URL!r}"
        )
    return url if url.endswith("/") else url + "/"


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
    config = getattr(app.env, "mystnb_config", None)
    if config is not None:
        folder = Path(app.doctreedir) / "jupyter_execute"
        app.env.mystnb_config = config.copy(output_folder=str(folder.resolve()))


def _language_tag(code: str) -> str:
    """BCP 47 tag of a Sphinx language code, as ``<html lang>`` and ``hreflang`` want it."""
    return code.replace("_", "-")


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
    languages: dict[str, str] = LANGUAGES,
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
    built = [
        (code, name) for code, name in languages.items() if (root / code / "index.html").exists()
    ]
    if not built:
        raise FileNotFoundError(f"no built language under {root} (looked for {list(languages)})")
    prompts = prompts or {}
    items = "\n".join(
        f'      <li lang="{_language_tag(code)}">{html.escape(prompts.get(code, ROOT_PROMPT))} '
        f'<a href="{code}/index.html" hreflang="{_language_tag(code)}">{html.escape(name)}</a></li>'
        for code, name in built
    )
    if len(built) == 1:
        redirect = f'  <meta http-equiv="refresh" content="0; url={built[0][0]}/index.html">\n'
        script = ""
    else:
        redirect = ""
        script = _CHOOSE_LANGUAGE_SCRIPT % json.dumps([code for code, _ in built])
    alternates = ""
    if root_url is not None:
        hrefs = [(_language_tag(code), f"{root_url}{code}/index.html") for code, _ in built]
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
        f'  <nav aria-label="Languages">\n    <ul>\n{items}\n    </ul>\n  </nav>\n'
        "</body>\n</html>\n",
        encoding="utf-8",
    )
    return page


def write_root_sitemap(root: Path, root_url: str, languages: dict[str, str] = LANGUAGES) -> Path:
    """Write ``root/sitemap.xml``: a sitemap index of each built language's sitemap."""
    entries = "".join(
        f"  <sitemap><loc>{html.escape(root_url)}{code}/sitemap.xml</loc></sitemap>\n"
        for code in languages
        if (root / code / "sitemap.xml").exists()
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
    depth, so its links are absolute.
    """
    if app.builder.format != "html":
        return
    target = app.builder.get_target_uri(pagename)
    if pagename == getattr(app.config, "notfound_pagename", "404"):
        prefix = urlsplit(app.config.compperf_site_url).path
        urls = {code: f"{prefix}{code}/index.html" for code in LANGUAGES}
    else:
        up = "../" * (pagename.count("/") + 1)  # from html/<language>/<page> to html/
        urls = {code: f"{up}{code}/{target}" for code in LANGUAGES}
    context["compperf_languages"] = [
        (code, _language_tag(code), name, urls[code], code == app.config.language)
        for code, name in LANGUAGES.items()
    ]


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
    prompts = {
        code: i18n.ui_translation(app.srcdir, app.config, code, ROOT_PROMPT) for code in LANGUAGES
    }
    write_root_index(root, prompts=prompts, root_url=app.config.compperf_site_url)
    write_root_sitemap(root, app.config.compperf_site_url)
    default_language = next(iter(LANGUAGES))
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
