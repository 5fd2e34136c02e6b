"""What each finding kind means to a reader of the report: its severity, one sentence of
what it means and what to do, and the section of the documentation that says more. The
one vocabulary the report's files (:mod:`.report`) and its page (:mod:`.html`) take it
from; the reasons behind each grade are in docs/audit.rst ("How findings are graded")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..plural import counted, noun

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "DOCS_URL",
    "LEGEND",
    "SEVERITIES",
    "SEVERITY_MEANINGS",
    "Explanation",
    "by_severity",
    "verdict_line",
]

#: Where the documentation is published; setup.cfg's project_urls names the same base.
DOCS_URL = "https://scrapy-sitemapgen.readthedocs.io/en/latest/"

#: The grades, worst first, as the commercial crawlers grade their hints.
SEVERITIES = ("critical", "high", "medium", "notice")
SEVERITY_MEANINGS = {
    "critical": "An engine may refuse a whole sitemap file or its entries: fix first.",
    "high": "A listed URL that an engine will report as an error and not index from the "
    "sitemap: fix before the next submission.",
    "medium": "A mixed or stale signal that engines may ignore or hold against the "
    "sitemap's other hints: fix when you can.",
    "notice": "Worth a look; often intended.",
}


@dataclass(frozen=True, slots=True)
class Explanation:
    """One finding kind as the report explains it."""

    severity: str
    sentence: str
    #: The id of its section in the built docs/audit.rst.
    anchor: str

    @property
    def link(self) -> str:
        return f"{DOCS_URL}audit.html#{self.anchor}"


def _entry(name: str, severity: str, sentence: str) -> tuple[str, Explanation]:
    return name, Explanation(severity, sentence, "finding-" + name.replace("_", "-"))


#: Every finding kind of ``sitemaps/verdicts.py: FINDINGS`` (a test holds the two
#: together, and each anchor to a section of the built documentation).
LEGEND: Mapping[str, Explanation] = dict(
    (
        _entry(
            "listed_not_found",
            "high",
            "The sitemap lists a URL that answers 4xx or 5xx, or not at all: remove it "
            "from the sitemap, or restore the page.",
        ),
        _entry(
            "listed_redirected",
            "medium",
            "The sitemap lists a URL that redirects: list the redirect's target instead.",
        ),
        _entry(
            "listed_noindex",
            "high",
            "The sitemap lists a page that tells engines not to index it: remove it from "
            "the sitemap, or drop the noindex if the page should be found.",
        ),
        _entry(
            "listed_canonicalised",
            "medium",
            "The sitemap lists a page whose canonical is another URL: list the canonical "
            "URL instead, or make the page canonical to itself.",
        ),
        _entry(
            "listed_blocked_by_robots",
            "high",
            "The sitemap lists a URL that robots.txt forbids the crawler to fetch: remove "
            "it from the sitemap, or allow it in robots.txt.",
        ),
        _entry(
            "listed_disallowed",
            "high",
            "The sitemap lists a URL that a search engine's robots.txt group disallows: "
            "remove it from the sitemap, or allow it for that engine.",
        ),
        _entry(
            "listed_not_html",
            "notice",
            "The sitemap lists a URL whose content type the crawl does not list (a PDF, "
            "an image): keep it if engines should index that file, else remove it.",
        ),
        _entry(
            "listed_duplicate",
            "medium",
            "The sitemap lists the same page twice, or a page with the same content as "
            "another listed URL: keep only the URL that should rank.",
        ),
        _entry(
            "listed_unreachable",
            "notice",
            "The sitemap lists a page that no crawled page links to: link it from the "
            "site, or remove it if it is no longer wanted.",
        ),
        _entry(
            "missing_from_sitemap",
            "notice",
            "An indexable page the crawl reached is not in the sitemap: add it, unless it "
            "is left out on purpose.",
        ),
        _entry(
            "lastmod_mismatch",
            "medium",
            "The sitemap's lastmod disagrees with the page's own date: write the date of "
            "the page's last significant change, or engines stop trusting lastmod.",
        ),
        _entry(
            "hreflang_no_return",
            "high",
            "A page names another as its language version, which does not name it back: "
            "add the return link, or engines may ignore the pair.",
        ),
        _entry(
            "hreflang_target_not_listed",
            "medium",
            "A page names as its language version a URL that the crawl left out (404, "
            "noindex, redirect, canonical elsewhere): point it at the listed version.",
        ),
        _entry(
            "hreflang_missing_self",
            "notice",
            "A page's own hreflang links name its language versions but not the page "
            "itself: add its own entry, as every version must list itself and all the "
            "others (the sitemap supplies it when it knows the page's language).",
        ),
        _entry(
            "invalid_sitemap",
            "critical",
            "A live sitemap file (or robots.txt) breaks a rule of the protocol: fix the "
            "file, or engines may refuse it or the entries named.",
        ),
    )
)


def by_severity(counts: Mapping[str, int]) -> dict[str, int]:
    """Severity -> how many findings of ``counts`` (kind -> count) have it, every
    severity, worst first."""
    tally = dict.fromkeys(SEVERITIES, 0)
    for name, count in counts.items():
        tally[LEGEND[name].severity] += count
    return tally


def verdict_line(origin: str, counts: Mapping[str, int], urls_listed: int) -> str:
    """The one line a report opens with: ``origin`` (its root), how many findings of
    each severity present, and how many URLs its live sitemaps list."""
    graded = by_severity(counts)
    total = sum(graded.values())
    listed = f"{counted(urls_listed, 'URL', grouped=True)} listed"
    if not total:
        return f"{origin}: no findings; {listed}"
    present = ", ".join(f"{n:,} {severity}" for severity, n in graded.items() if n)
    return f"{origin}: {present} {noun(total, 'finding')}; {listed}"
