"""Check published sitemaps against the protocol: every rule a file can break, each
reported with its rule id."""

from __future__ import annotations

from .checker import *  # noqa: F403
from .checker import __all__  # noqa: F401
