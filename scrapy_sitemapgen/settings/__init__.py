"""The settings: every ``SITEMAPGEN_*`` name and default (:mod:`.defaults`), the kinds of
value and their checks (:mod:`.readers`), and :class:`Config`, the settings read and
checked once (:mod:`.config`)."""

from .config import ALTERNATES_CHECKS, Config, StoreBackend, is_enabled
from .defaults import DEFAULTS, FORMATS, LASTMOD_SOURCES, PREFIX
from .readers import Rule

__all__ = [
    "ALTERNATES_CHECKS",
    "DEFAULTS",
    "FORMATS",
    "LASTMOD_SOURCES",
    "PREFIX",
    "Config",
    "Rule",
    "StoreBackend",
    "is_enabled",
]
