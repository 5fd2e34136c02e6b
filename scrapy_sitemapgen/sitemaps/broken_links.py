"""Broken links: what makes a URL the crawl reached through links a broken one, and how
its reason is worded.

Pure: the stores read the pages that link to each URL (``store.link_sources``) beside this run's
verdicts, and hand :class:`BrokenLink` values to the close log and the audit's report.
"""

from __future__ import annotations

from dataclasses import dataclass

from .evidence import FAILED_PREFIX

__all__ = ["BROKEN_PREFIXES", "MAX_LINK_SOURCES", "BrokenLink", "broken_why", "relative"]

#: The most sources SITEMAPGEN_LINK_SOURCES may keep per URL: each is a URL in the
#: target's row, and a row is read whole.
MAX_LINK_SOURCES = 100

#: The verdicts of a broken link's target, by their beginning: an HTTP 4xx or 5xx status
#: (``excluded/status/404``), or a request that got no answer (``failed/connection``).
#: The one place that says so; the SQLite store's query is built from it.
BROKEN_PREFIXES = ("excluded/status/4", "excluded/status/5", FAILED_PREFIX)
_STATUS = "excluded/status/"


@dataclass(frozen=True, slots=True)
class BrokenLink:
    """A URL that pages link to and that answered with an error or not at all:
    ``verdict`` is this run's (:data:`BROKEN_PREFIXES`), ``inlinks`` how many distinct
    pages link to it, ``sources`` the first of them (``SITEMAPGEN_LINK_SOURCES``)."""

    url: str
    verdict: str
    inlinks: int
    sources: tuple[str, ...]

    @property
    def why(self) -> str:
        return broken_why(self.verdict) or self.verdict


def broken_why(verdict: str) -> str | None:
    """Why a target with ``verdict`` is broken (``404``, ``connection failed``), or None
    when the verdict is no broken link's (a page listed, left out by a rule, a redirect)."""
    if verdict.startswith(BROKEN_PREFIXES[:2]):
        return verdict[len(_STATUS) :]
    if verdict.startswith(FAILED_PREFIX):
        kind = verdict[len(FAILED_PREFIX) :]
        return "timed out" if kind == "timeout" else f"{kind} failed"
    return None


def relative(url: str, root: str) -> str:
    """``url`` without ``root`` (an origin's ``https://example.com/``) when it is on that
    origin, so a line of many URLs of one site stays readable; else the URL whole."""
    return url[len(root) - 1 :] if url.startswith(root) else url
