"""hreflang clusters written whole and reciprocal (issue 40, item 2; G6).

Crawled for real: a two-origin site whose clusters are whole, missing a return link,
pointing at a 404, a noindex page, a page canonicalised elsewhere, a redirected page and a
meta refresh, missing the self entry (with and without ``<html lang>``), with a conflicting
value, across the two origins, and naming a site never crawled. Every written ``<url>``'s
alternates are written out by hand below; the counters, the close log, the audit's rows and
``"as_declared"`` (today's output) are checked too. The index itself (SQL) is held to a
plain-Python reading of the same rules on synthetic sources, one of 50,000 entries.
"""

from __future__ import annotations

import logging
import random
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import lxml.html
import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.sitemap import Sitemap

from scrapy_sitemapgen.features.hreflang_clusters import build_clusters
from scrapy_sitemapgen.features.hreflang_rules import (
    conflicts,
    drop_reason,
    html_language,
    self_language,
)
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.facts import Alternate, UrlFacts
from scrapy_sitemapgen.sitemaps.urls import Origin, origin_of
from scrapy_sitemapgen.sitemaps.verdicts import FINDINGS, Verdict

from .helpers import Route, SiteServer, assert_valid, read_entries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from scrapy.crawler import Crawler

# --- the pure rules -----------------------------------------------------------------------

#: (a verdict, the reason an alternate naming that URL is dropped for; None: kept)
DROP_CASES = [
    ("excluded/noindex", "noindex"),
    ("excluded/canonical_elsewhere", "canonical_elsewhere"),
    ("redirected", "redirected"),
    ("excluded/meta_refresh", "redirected"),
    ("excluded/status/404", "status"),
    ("excluded/status/500", "status"),
    ("fetch_failed", "status"),
    ("blocked_by_robots", "robots_txt"),
    ("excluded/robots_txt/googlebot", "robots_txt"),
    ("excluded/duplicate_content", "duplicate_content"),
    ("excluded/content_type", "excluded"),
    ("excluded/dont_sitemap", "excluded"),
    ("skipped/url_too_long", "excluded"),
    ("listed", None),
]


@pytest.mark.parametrize(("verdict", "reason"), DROP_CASES)
def test_drop_reason(verdict: str, reason: str | None) -> None:
    assert drop_reason(verdict) == reason


def test_conflicts_keep_the_first_in_document_order() -> None:
    declared = [
        Alternate("en", "http://a/en"),
        Alternate("fr", "http://a/fr"),
        Alternate("fr", "http://a/fr2"),
        Alternate("de", "http://a/fr"),  # another value for a URL: no conflict
        Alternate("fr", "http://a/fr3"),
    ]
    assert conflicts(declared) == [False, False, True, False, True]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("en", "en"),
        ("EN-gb", "en-GB"),
        ("x-default", None),
        ("en_US", None),
        ("", None),
        (None, None),
    ],
)
def test_html_language(value: str | None, expected: str | None) -> None:
    assert html_language(value) == expected


def test_self_language_order() -> None:
    # The values the returning pages give it come first, then its own, then <html lang>.
    assert self_language(["de", "en"], ["fr"], "it") == "de"
    assert self_language([], ["fr"], "it") == "fr"
    assert self_language([], [], "it") == "it"
    assert self_language([], [], None) is None
    # x-default names no language; a value naming another page of the cluster is taken.
    assert self_language(["x-default"], ["x-default"], None) is None
    assert self_language(["fr", "en"], [], None, taken=["fr"]) == "en"


# --- the index against a plain-Python reading of the rules -------------------------------


@dataclass
class MemorySource:
    """A FactSource in memory: entries by loc, each origin's in loc order."""

    rows: dict[str, UrlFacts] = field(default_factory=dict)
    has_content: bool = True

    def origins(self) -> list[Origin]:
        return sorted({origin_of(loc) for loc in self.rows})

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        for loc in sorted(self.rows):
            if origin_of(loc) == origin:
                yield self.rows[loc]

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return iter(())

    def canonical_targets(self, origin: Origin) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return len(self.rows)

    def close(self) -> None:
        pass


#: The detail of ``hreflang_missing_self`` when no language is known for the page.
NO_LANGUAGE = "no language known: the sitemap lists its pairs without it"


def reference(
    source: MemorySource, verdicts: dict[str, str]
) -> tuple[dict[str, list[tuple[str, str]]], dict[str, int], set[tuple[str, str, str]]]:
    """The rules of docs/media-and-alternates.rst read plainly, all in memory: each
    source's written alternates, the counts of the pairs by outcome, the findings."""
    rows = source.rows
    pairs = {
        loc: [a for a, c in zip(f.alternates, conflicts(f.alternates)) if not c]
        for loc, f in rows.items()
    }
    written: dict[str, list[tuple[str, str]]] = {}
    counts: dict[str, int] = {}
    findings: set[tuple[str, str, str]] = set()
    for loc, facts in rows.items():
        if not facts.alternates:
            continue
        counts["conflict"] = counts.get("conflict", 0) + sum(conflicts(facts.alternates))
        kept: list[tuple[str, str]] = []
        declared: list[str] = []
        own_at = 0
        for a in pairs[loc]:
            if a.href == loc:
                if a.hreflang == "x-default":
                    kept.append((a.hreflang, a.href))
                else:
                    if not declared:
                        own_at = len(kept)
                    declared.append(a.hreflang)
                continue
            if a.href in rows:
                if any(b.href == loc for b in pairs[a.href]):
                    outcome = "kept"
                else:
                    outcome = "no_return"
                    findings.add((loc, "hreflang_no_return", f"{a.hreflang} {a.href}"))
            else:
                reason = drop_reason(verdicts[a.href]) if a.href in verdicts else None
                outcome = reason or "unverified"
                if reason:
                    findings.add(
                        (loc, "hreflang_target_not_listed", f"{a.hreflang} {a.href} ({reason})")
                    )
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome in ("kept", "unverified"):
                kept.append((a.hreflang, a.href))
        if not any(href != loc for _, href in kept):
            continue
        returned = [
            b.hreflang
            for target in sorted(h for _, h in kept if h in rows and h != loc)
            for b in pairs[target]
            if b.href == loc
        ]
        own = self_language(returned, declared, facts.language, [h for h, _ in kept])
        if own is None:
            findings.add((loc, "hreflang_missing_self", NO_LANGUAGE))
            written[loc] = kept
        else:
            if not any(a.href == loc for a in pairs[loc]):  # the page does not name itself
                detail = f'the sitemap supplies it as hreflang="{own}"'
                findings.add((loc, "hreflang_missing_self", detail))
            written[loc] = [*kept[:own_at], (own, loc), *kept[own_at:]]
    return written, {k: v for k, v in counts.items() if v}, findings


def synthetic(pages: int, seed: int) -> tuple[MemorySource, dict[str, str]]:
    """Clusters of 1 to 4 language versions over two origins, with a broken pair now and
    then (no return, a target judged and not listed, one never crawled, a conflict)."""
    rng = random.Random(seed)
    langs = ["en", "fr", "de", "es", "x-default"]
    source = MemorySource()
    verdicts: dict[str, str] = {}
    bad = ["excluded/noindex", "excluded/status/404", "redirected", "excluded/canonical_elsewhere"]
    n = 0
    while n < pages:
        size = rng.randint(1, 4)
        locs = [f"http://{rng.choice('ab')}.example/p{n + i}" for i in range(size)]
        n += size
        for i, loc in enumerate(locs):
            alternates = []
            for j, other in enumerate(locs):
                if other != loc and rng.random() < 0.1:
                    continue  # no return from this side
                if other == loc and rng.random() < 0.3:
                    continue  # no self entry
                alternates.append(Alternate(langs[j], other))
            roll = rng.random()
            if roll < 0.1:
                target = f"http://a.example/gone{n}-{i}"
                verdicts[target] = rng.choice(bad)
                alternates.append(Alternate("it", target))
            elif roll < 0.15:
                alternates.append(Alternate("nl", f"http://elsewhere.example/{n}-{i}"))
            elif roll < 0.2 and alternates:
                alternates.append(Alternate(alternates[0].hreflang, f"http://a.example/c{n}"))
            lang = rng.choice([None, "en", "pt"]) if size > 1 else None
            source.rows[loc] = UrlFacts(loc, alternates=tuple(alternates), language=lang)
    return source, verdicts


def index_result(
    source: MemorySource, verdicts: dict[str, str]
) -> tuple[dict[str, list[tuple[str, str]]], dict[str, int], set[tuple[str, str, str]]]:
    config = Config.from_settings(Settings({"SITEMAPGEN_URI": "/tmp/unused"}))

    def verdict_of(url: str) -> Verdict | None:
        return Verdict(url, verdicts[url]) if url in verdicts else None

    index = build_clusters(source, config, verdict_of)
    assert index is not None
    try:
        db = sqlite3.connect(index.path)
        written: dict[str, list[tuple[str, str]]] = {}
        for src, hreflang, href in db.execute(
            "SELECT src, hreflang, href FROM written ORDER BY src, seq"
        ):
            written.setdefault(src, []).append((hreflang, href))
        db.close()
        counts = {k: v for k, v in index.counts().items() if v}
        findings = {
            (f.url, f.finding, f.detail)
            for origin in source.origins()
            for f in index.findings(origin.root)
        }
    finally:
        index.close()
    return written, counts, findings


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_index_agrees_with_the_plain_rules_on_small_sources(seed: int) -> None:
    source, verdicts = synthetic(300, seed)
    assert index_result(source, verdicts) == reference(source, verdicts)


def test_staging_reads_the_index_read_only() -> None:
    from scrapy_sitemapgen.features.hreflang_clusters import ClusterLookup, clustered

    source, verdicts = synthetic(300, 4)
    written, _, _ = reference(source, verdicts)
    config = Config.from_settings(Settings({"SITEMAPGEN_URI": "/tmp/unused"}))
    index = build_clusters(source, config, lambda url: None)
    assert index is not None
    try:
        # What a build's worker process does with the path it is sent.
        lookup = ClusterLookup(index.path)
        entries = [f for origin in source.origins() for f in source.entries(origin)]
        for facts in clustered(entries, lookup):
            if source.rows[facts.loc].alternates:
                assert facts.alternates == tuple(
                    Alternate(h, href) for h, href in index_lookup(index.path, facts.loc)
                )
            else:
                assert facts.alternates == ()
        with pytest.raises(sqlite3.OperationalError):
            lookup._db.execute("DELETE FROM written")
        lookup.close()
    finally:
        index.close()
    assert written  # the synthetic source has clusters to write


def index_lookup(path: str, loc: str) -> list[tuple[str, str]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(
            "SELECT hreflang, href FROM written WHERE src = ? ORDER BY seq", (loc,)
        ).fetchall()
    finally:
        db.close()


def test_index_of_50000_entries_is_bounded_and_agrees() -> None:
    source, verdicts = synthetic(50_000, 7)
    written, counts, findings = index_result(source, verdicts)
    expected = reference(source, verdicts)
    assert (written, counts, findings) == expected
    # Every written cluster between two listed pages is reciprocal.
    for loc, links in written.items():
        for _, href in links:
            if href != loc and href in source.rows:
                assert any(h == loc for _, h in written.get(href, [])), (loc, href)


# --- the crawled site -----------------------------------------------------------------------


def page(lang: str | None, *alternates: tuple[str, str], head: str = "", text: str = "") -> Route:
    """An HTML page declaring ``alternates`` (hreflang, absolute href) in its head."""
    links = "".join(
        f'<link rel="alternate" hreflang="{h}" href="{href}">' for h, href in alternates
    )
    attr = f' lang="{lang}"' if lang else ""
    body = f"<p>{text or 'a page of its own'}</p>"
    return Route(
        body=f"<!DOCTYPE html><html{attr}><head>{links}{head}</head><body>{body}</body></html>"
    )


@dataclass
class ClusterSite:
    a: SiteServer
    b: SiteServer
    #: loc -> its declared alternates, as the page writes them (what "as_declared" writes).
    declared: dict[str, list[tuple[str, str]]]
    #: loc -> what "listed" writes, by hand.
    expected: dict[str, list[tuple[str, str]]]


def build(a: SiteServer, b: SiteServer) -> ClusterSite:
    u, v = a.url, b.url
    never = "http://never-crawled.invalid/ja"
    declared = {
        # A whole cluster: each names every other and itself.
        u("/en"): [("en", u("/en")), ("fr", u("/fr")), ("de", u("/de"))],
        u("/fr"): [("en", u("/en")), ("fr", u("/fr")), ("de", u("/de"))],
        u("/de"): [("en", u("/en")), ("fr", u("/fr")), ("de", u("/de"))],
        # /p/de does not name /p/fr back.
        u("/p/en"): [("en", u("/p/en")), ("fr", u("/p/fr")), ("de", u("/p/de"))],
        u("/p/fr"): [("fr", u("/p/fr")), ("en", u("/p/en")), ("de", u("/p/de"))],
        u("/p/de"): [("de", u("/p/de")), ("en", u("/p/en"))],
        # Targets the crawl judged and did not list, and one it never fetched.
        u("/t/en"): [
            ("en", u("/t/en")),
            ("fr", u("/t/missing")),
            ("de", u("/t/noindex")),
            ("es", u("/t/canon")),
            ("it", u("/t/old")),
            ("nl", u("/t/refresh")),
            ("pt", u("/t/engines-only")),
            ("ja", never),
        ],
        # No self entry: its language from <html lang> (the other side's is x-default).
        u("/s/a"): [("fr", u("/s/b"))],
        u("/s/b"): [("fr", u("/s/b")), ("x-default", u("/s/a"))],
        # No self entry and no language anywhere.
        u("/m/a"): [("de", u("/m/b"))],
        u("/m/b"): [("x-default", u("/m/a"))],
        # fr names two URLs: the first wins, the second is a conflict.
        u("/c/en"): [("en", u("/c/en")), ("fr", u("/c/fr")), ("fr", u("/c/fr2"))],
        u("/c/fr"): [("fr", u("/c/fr")), ("en", u("/c/en"))],
        u("/c/fr2"): [("fr", u("/c/fr2")), ("en", u("/c/en"))],
        # Across the two origins.
        u("/x/en"): [("en", u("/x/en")), ("de", v("/x/de"))],
        v("/x/de"): [("de", v("/x/de")), ("en", u("/x/en"))],
    }
    langs = {u("/s/a"): "en-GB", u("/s/b"): "fr"}
    for loc, alternates in declared.items():
        server = a if loc.startswith(a.root) else b
        server.routes[loc.removeprefix(server.root)] = page(langs.get(loc), *alternates)
    a.routes.update(
        {
            "/t/missing": Route(404, "<p>not found</p>"),
            "/t/noindex": page(None, head='<meta name="robots" content="noindex">'),
            "/t/canon": page(None, head=f'<link rel="canonical" href="{u("/t/en")}">'),
            "/t/old": Route(301, headers={"Location": "/t/new"}),
            "/t/new": page(None, text="where /t/old went"),
            "/t/refresh": page(None, head='<meta http-equiv="refresh" content="0; url=/t/new2">'),
            "/t/new2": page(None, text="where /t/refresh went"),
            # Fetched by the crawl (no ROBOTSTXT_OBEY), left out as Googlebot may not.
            "/t/engines-only": page(None, text="for the crawler only"),
            "/robots.txt": Route(
                body="User-agent: googlebot\nDisallow: /t/engines-only\n", content_type="text/plain"
            ),
        }
    )
    # The redirects' targets are reached through them only: a target already crawled
    # would be dropped by Scrapy's duplicate filter, and its redirect never judged.
    links = [p for p in a.routes if p not in ("/", "/t/new", "/t/new2", "/robots.txt")]
    links.append(v("/x/de"))
    a.routes["/"] = Route(body="".join(f"<a href='{p}'>x</a>" for p in links))
    expected = {
        u("/en"): declared[u("/en")],
        u("/fr"): declared[u("/fr")],
        u("/de"): declared[u("/de")],
        u("/p/en"): declared[u("/p/en")],
        u("/p/fr"): [("fr", u("/p/fr")), ("en", u("/p/en"))],
        u("/p/de"): declared[u("/p/de")],
        u("/t/en"): [("en", u("/t/en")), ("ja", never)],
        u("/s/a"): [("en-GB", u("/s/a")), ("fr", u("/s/b"))],
        u("/s/b"): declared[u("/s/b")],
        u("/m/a"): [("de", u("/m/b"))],
        u("/m/b"): [("de", u("/m/b")), ("x-default", u("/m/a"))],
        u("/c/en"): [("en", u("/c/en")), ("fr", u("/c/fr"))],
        u("/c/fr"): declared[u("/c/fr")],
        u("/c/fr2"): [],
        u("/x/en"): declared[u("/x/en")],
        v("/x/de"): declared[v("/x/de")],
        u("/"): [],
        u("/t/new"): [],
        u("/t/new2"): [],
    }
    return ClusterSite(a, b, declared, expected)


@pytest.fixture
def cluster_site() -> Iterator[ClusterSite]:
    with SiteServer() as a, SiteServer() as b:
        yield build(a, b)


def written(out: Path, site: ClusterSite) -> dict[str, list[tuple[str, str]]]:
    """Every listed URL's alternates, over both origins, read from the schema-validated
    files; checked against Scrapy's own sitemap reader on the way."""
    found: dict[str, list[tuple[str, str]]] = {}
    for server in (site.a, site.b):
        entries = read_entries(out, server.origin.name)
        for name in sorted((out / server.origin.name).glob("sitemap-*.xml")):
            for entry in Sitemap(assert_valid(name)):
                assert entry.get("alternate", []) == [
                    href
                    for _, href in entries[entry["loc"]]["alternates"]  # type: ignore[union-attr]
                ]
        found.update({loc: list(e["alternates"]) for loc, e in entries.items()})  # type: ignore[call-overload]
    return found


async def crawl_clusters(crawl: Any, site: ClusterSite, **settings: Any) -> Crawler:
    return await crawl({"SITEMAPGEN_DEDUPE_CONTENT": False, **settings}, start_url=site.a.url("/"))


@deferred_f_from_coro_f
async def test_listed_check_writes_whole_reciprocal_clusters(
    crawl: Any, cluster_site: ClusterSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = cluster_site
    u = site.a.url
    with caplog.at_level(logging.INFO, logger="scrapy_sitemapgen"):
        crawler = await crawl_clusters(crawl, site)
    got = written(tmp_path / "out", site)
    assert got == site.expected
    # G6: every written pair between two listed pages goes both ways.
    for loc, links in got.items():
        for _, href in links:
            if href in got and href != loc:
                assert any(back == loc for _, back in got[href]), (loc, href)
    stats = crawler.stats.get_stats()
    assert {k: v for k, v in stats.items() if "alternate" in k} == {
        "sitemapgen/skipped/alternate/no_return": 2,  # /p/fr -> /p/de, /c/fr2 -> /c/en
        "sitemapgen/skipped/alternate/conflict": 1,
        "sitemapgen/skipped/alternate/status": 1,
        "sitemapgen/skipped/alternate/noindex": 1,
        "sitemapgen/skipped/alternate/canonical_elsewhere": 1,
        "sitemapgen/skipped/alternate/redirected": 2,  # a 301 and a meta refresh
        "sitemapgen/skipped/alternate/robots_txt": 1,  # Googlebot may not fetch /t/engines-only
        "sitemapgen/alternates/unverified": 1,
    }
    lines = [r.getMessage() for r in caplog.records if "hreflang clusters" in r.getMessage()]
    assert lines == [
        f"Sitemap: {site.a.root}/: broken hreflang clusters: hreflang_no_return 2, "
        "hreflang_target_not_listed 6, hreflang_missing_self 3; first: "
        f"{u('/c/fr2')} hreflang_no_return en {u('/c/en')}, "
        f"{u('/m/a')} hreflang_missing_self {NO_LANGUAGE}, "
        f'{u("/m/b")} hreflang_missing_self the sitemap supplies it as hreflang="de"; '
        "the sitemap writes only the pairs "
        "that name each other and the page itself (G6): fix these pages' hreflang links"
    ]


@deferred_f_from_coro_f
async def test_as_declared_writes_what_the_pages_declare(
    crawl: Any, cluster_site: ClusterSite, tmp_path: Path
) -> None:
    site = cluster_site
    crawler = await crawl_clusters(crawl, site, SITEMAPGEN_ALTERNATES_CHECK="as_declared")
    got = written(tmp_path / "out", site)
    assert {loc: links for loc, links in got.items() if links} == site.declared
    assert not [k for k in crawler.stats.get_stats() if "alternate" in k]


@deferred_f_from_coro_f
async def test_the_audit_names_each_broken_cluster(
    crawl: Any, cluster_site: ClusterSite, tmp_path: Path
) -> None:
    import csv

    site = cluster_site
    u = site.a.url
    report = tmp_path / "report"
    await crawl_clusters(crawl, site, SITEMAPGEN_AUDIT=True, SITEMAPGEN_REPORT_DIR=str(report))
    with (report / site.a.origin.name / "audit.csv").open(encoding="utf-8") as file:
        rows = [
            (r["url"], r["finding"], r["detail"])
            for r in csv.DictReader(file)
            if r["finding"].startswith("hreflang_")
        ]
    assert rows == [
        (u("/c/fr2"), "hreflang_no_return", f"en {u('/c/en')}"),
        (u("/p/fr"), "hreflang_no_return", f"de {u('/p/de')}"),
        (u("/t/en"), "hreflang_target_not_listed", f"de {u('/t/noindex')} (noindex)"),
        (u("/t/en"), "hreflang_target_not_listed", f"es {u('/t/canon')} (canonical_elsewhere)"),
        (u("/t/en"), "hreflang_target_not_listed", f"fr {u('/t/missing')} (status)"),
        (u("/t/en"), "hreflang_target_not_listed", f"it {u('/t/old')} (redirected)"),
        (u("/t/en"), "hreflang_target_not_listed", f"nl {u('/t/refresh')} (redirected)"),
        (u("/t/en"), "hreflang_target_not_listed", f"pt {u('/t/engines-only')} (robots_txt)"),
        (u("/m/a"), "hreflang_missing_self", NO_LANGUAGE),
        # Their own tags do not name them: reported though the sitemap supplies the entry
        # (the language /m/a gives /m/b back, /s/a's <html lang>).
        (u("/m/b"), "hreflang_missing_self", 'the sitemap supplies it as hreflang="de"'),
        (u("/s/a"), "hreflang_missing_self", 'the sitemap supplies it as hreflang="en-GB"'),
    ]
    with (report / site.b.origin.name / "audit.csv").open(encoding="utf-8") as file:
        assert not [r for r in csv.DictReader(file) if r["finding"].startswith("hreflang_")]
    # The report's page shows the same rows as broken clusters, by the page declaring each.
    page = lxml.html.parse(str(report / site.a.origin.name / "report.html")).getroot()
    clusters = {
        div.findtext("h3"): [
            (li.get("data-finding"), " ".join(li.text_content().split())) for li in div.iter("li")
        ]
        for div in page.get_element_by_id("hreflang").find_class("cluster")
    }
    assert clusters == {
        u("/c/fr2"): [
            (
                "hreflang_no_return",
                f"en {u('/c/en')} does not name this page back hreflang_no_return",
            )
        ],
        u("/m/a"): [
            (
                "hreflang_missing_self",
                f"the page's own hreflang links do not name it; {NO_LANGUAGE} "
                "hreflang_missing_self",
            )
        ],
        u("/p/fr"): [
            (
                "hreflang_no_return",
                f"de {u('/p/de')} does not name this page back hreflang_no_return",
            )
        ],
        u("/t/en"): [
            (
                "hreflang_target_not_listed",
                f"{lang} {u(path)} is not listed ({reason}) hreflang_target_not_listed",
            )
            for lang, path, reason in (
                ("de", "/t/noindex", "noindex"),
                ("es", "/t/canon", "canonical_elsewhere"),
                ("fr", "/t/missing", "status"),
                ("it", "/t/old", "redirected"),
                ("nl", "/t/refresh", "redirected"),
                ("pt", "/t/engines-only", "robots_txt"),
            )
        ],
        u("/m/b"): [
            (
                "hreflang_missing_self",
                "the page's own hreflang links do not name it; the sitemap supplies it as "
                'hreflang="de" hreflang_missing_self',
            )
        ],
        u("/s/a"): [
            (
                "hreflang_missing_self",
                "the page's own hreflang links do not name it; the sitemap supplies it as "
                'hreflang="en-GB" hreflang_missing_self',
            )
        ],
    }
    assert FINDINGS.index("hreflang_missing_self") < FINDINGS.index("invalid_sitemap")


@deferred_f_from_coro_f
async def test_without_the_audit_only_the_pages_not_listed_keep_a_verdict(
    crawl: Any, cluster_site: ClusterSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where the default report folder would appear
    site = cluster_site
    u = site.a.url
    store = tmp_path / "store.sqlite3"
    await crawl_clusters(crawl, site, SITEMAPGEN_STORE=str(store))
    db = sqlite3.connect(store)
    rows = sorted(db.execute("SELECT url, verdict FROM verdicts").fetchall())
    db.close()
    assert rows == [
        (u("/t/canon"), "excluded/canonical_elsewhere"),
        (u("/t/engines-only"), "excluded/robots_txt/googlebot"),
        (u("/t/missing"), "excluded/status/404"),
        (u("/t/noindex"), "excluded/noindex"),
        (u("/t/old"), "redirected"),
        (u("/t/refresh"), "redirected"),
    ]
    assert not (tmp_path / "sitemapgen-report").exists()


@deferred_f_from_coro_f
async def test_the_redis_store_keeps_no_verdicts_so_unlisted_targets_are_unverified(
    crawl: Any, cluster_site: ClusterSite, tmp_path: Path, redis_server: Any
) -> None:
    site = cluster_site
    u = site.a.url
    crawler = await crawl_clusters(
        crawl, site, SITEMAPGEN_STORE=redis_server.url, SITEMAPGEN_SHARED_WRITE="last"
    )
    expected = dict(site.expected)
    # Listed targets are still checked for their return link; the others are kept.
    expected[u("/t/en")] = site.declared[u("/t/en")]
    assert written(tmp_path / "out", site) == expected
    assert {k: v for k, v in crawler.stats.get_stats().items() if "alternate" in k} == {
        "sitemapgen/skipped/alternate/no_return": 2,
        "sitemapgen/skipped/alternate/conflict": 1,
        # /t/en's six targets not listed (the robots.txt one too) and the one never crawled.
        "sitemapgen/alternates/unverified": 7,
    }


def test_the_one_check_of_a_publish_without_alternates(tmp_path: Path, redis_server: Any) -> None:
    from scrapy_sitemapgen.features.hreflang_clusters import declares_alternates
    from scrapy_sitemapgen.store.redis import RedisFactStore
    from scrapy_sitemapgen.store.sqlite import SqliteFactStore

    plain = UrlFacts("http://a.example/x", images=('http://a.example/"a":[x].png',))
    declaring = UrlFacts("http://a.example/y", alternates=(Alternate("en", "http://a.example/z"),))
    on = Config.from_settings(Settings({"SITEMAPGEN_URI": str(tmp_path)}))
    off = Config.from_settings(
        Settings({"SITEMAPGEN_URI": str(tmp_path), "SITEMAPGEN_ALTERNATES_CHECK": "as_declared"})
    )
    for store in (SqliteFactStore(tmp_path / "s.sqlite3"), RedisFactStore(redis_server.url)):
        try:
            # A JSON string cannot spell the key the SQLite store looks for.
            store.record(plain)
            assert not store.has_alternates()
            assert not declares_alternates(store, on)
            store.record(declaring)
            assert store.has_alternates()
            assert declares_alternates(store, on)
            assert not declares_alternates(store, off)
        finally:
            store.close()
    # A source that cannot tell is read up to the first entry with alternates.
    assert declares_alternates(MemorySource({declaring.loc: declaring}), on)
    assert not declares_alternates(MemorySource({plain.loc: plain}), on)
    assert not declares_alternates(MemorySource({declaring.loc: declaring}, has_content=False), on)


def test_close_log_names_the_first_origins_and_sums_up_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from scrapy_sitemapgen.publish.close_report import log_clusters

    a, b = "http://a.example", "http://b.example"
    source = MemorySource()
    for root in (a, b):
        # /en names /fr, which names nobody back: one hreflang_no_return per origin.
        source.rows[f"{root}/en"] = UrlFacts(
            f"{root}/en", alternates=(Alternate("en", f"{root}/en"), Alternate("fr", f"{root}/fr"))
        )
        source.rows[f"{root}/fr"] = UrlFacts(f"{root}/fr")
    config = Config.from_settings(Settings({"SITEMAPGEN_URI": "/tmp/unused"}))
    index = build_clusters(source, config, lambda url: None)
    assert index is not None
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_sitemapgen"):
            log_clusters(index, 1)
    finally:
        index.close()
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            logging.INFO,
            f"Sitemap: {a}/: broken hreflang clusters: hreflang_no_return 1; first: {a}/en "
            f"hreflang_no_return fr {a}/fr; the sitemap writes only the pairs that name each "
            "other and the page itself (G6): fix these pages' hreflang links",
        ),
        (
            logging.INFO,
            "Sitemap: and 1 more origin with broken hreflang clusters: hreflang_no_return 1 "
            "(one line each at DEBUG; SITEMAPGEN_LOG_ORIGINS=1)",
        ),
    ]


def test_a_target_left_out_as_a_duplicate_by_content() -> None:
    from scrapy_sitemapgen.sitemaps.facts import Content

    u = "http://a.example"
    same = Content("f" * 16, "2026-01-01T00:00:00+00:00")
    source = MemorySource(
        {
            # /fr and /fr-copy have the same content: the shorter URL is listed.
            f"{u}/en": UrlFacts(
                f"{u}/en",
                alternates=(Alternate("fr", f"{u}/fr-copy"), Alternate("de", f"{u}/de")),
                content=Content("e" * 16, same.fetched),
                language="en",
            ),
            f"{u}/fr": UrlFacts(f"{u}/fr", content=same),
            f"{u}/fr-copy": UrlFacts(
                f"{u}/fr-copy", alternates=(Alternate("en", f"{u}/en"),), content=same
            ),
            f"{u}/de": UrlFacts(
                f"{u}/de",
                alternates=(Alternate("en", f"{u}/en"),),
                content=Content("d" * 16, same.fetched),
            ),
        }
    )
    config = Config.from_settings(
        Settings({"SITEMAPGEN_URI": "/tmp/unused", "SITEMAPGEN_DEDUPE_CONTENT": True})
    )
    index = build_clusters(source, config, lambda url: None)
    assert index is not None
    try:
        assert index_lookup(index.path, f"{u}/en") == [("en", f"{u}/en"), ("de", f"{u}/de")]
        assert index_lookup(index.path, f"{u}/fr-copy") == []  # left out: not a source
        assert index.counts() == {"kept": 2, "duplicate_content": 1}
        assert [(f.url, f.detail) for f in index.findings(f"{u}/")] == [
            # Neither names itself: their entries come from /en's return and its language.
            (f"{u}/de", 'the sitemap supplies it as hreflang="de"'),
            (f"{u}/en", 'the sitemap supplies it as hreflang="en"'),
            (f"{u}/en", f"fr {u}/fr-copy (duplicate_content)"),
        ]
    finally:
        index.close()
