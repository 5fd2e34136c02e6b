"""Sphinx configuration of the scrapy-sitemapgen documentation.

The documentation builds without importing the package or Scrapy: the version is read from
``scrapy_sitemapgen/__init__.py`` as text, and the reference pages are written by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

project = "scrapy-sitemapgen"
author = "scrapy-sitemapgen maintainers"
copyright = "scrapy-sitemapgen maintainers"  # Sphinx's own name

_INIT = (ROOT / "scrapy_sitemapgen" / "__init__.py").read_text(encoding="utf-8")
_VERSION = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', _INIT, re.MULTILINE)
if _VERSION is None:
    raise RuntimeError("no __version__ in scrapy_sitemapgen/__init__.py")
release = _VERSION.group(1)
version = ".".join(release.split(".")[:2])

# No extension that imports the package: the reference is written from the code by hand.
extensions: list[str] = []

root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
nitpicky = False
highlight_language = "python"
pygments_style = "sphinx"

try:
    import furo  # noqa: F401
except ImportError:
    html_theme = "alabaster"
else:
    html_theme = "furo"
html_title = f"{project} {release}"
html_static_path: list[str] = []


def setup(app):  # type: ignore[no-untyped-def]
    """Cross-reference types, as Scrapy's documentation has them: ``.. setting::`` marks
    where a setting is described and ``:setting:`` links to it; ``.. stat::`` and
    ``:stat:`` do the same for stats keys."""
    app.add_crossref_type(
        directivename="setting", rolename="setting", indextemplate="pair: %s; setting"
    )
    app.add_crossref_type(directivename="stat", rolename="stat", indextemplate="pair: %s; stat")
