"""The audit (issue 22): a local site with a planted live sitemap holding one URL of each
finding kind, an index, a gzipped child and hostile children, crawled with
``SITEMAPGEN_AUDIT``; the exact ``audit.csv`` rows, the ``audit.json`` counts, ``urls.csv``
and the HTML report's table read back in a headless Chromium."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import re
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .helpers import (
    CHROMIUM_ARGS,
    HTML,
    PlainSpider,
    Route,
    SiteServer,
    html,
    read_csv,
    run_audit,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
LAST_MODIFIED = {"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}
#: G2: the uncompressed byte limit of one sitemap file.
LIMIT = 52_428_800


def urlset(*entries: tuple[str, str | None]) -> str:
    body = "".join(
        f"<url><loc>{loc}</loc>{f'<lastmod>{lastmod}</lastmod>' if lastmod else ''}</url>"
        for loc, lastmod in entries
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP_NS}">{body}</urlset>'


def index(*locs: str) -> str:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{SITEMAP_NS}">{body}'
        "</sitemapindex>"
    )


def plant(site: SiteServer, other: SiteServer) -> None:
    """The planted site: what each path is for is the finding it must give."""
    u = site.url
    links = ["/ok", "/missing", "/old", "/noindex", "/canon", "/file.pdf", "/unlisted", "/dated"]
    site.routes.update(
        {
            "/robots.txt": Route(
                body=f"User-agent: *\nDisallow: /blocked\nSitemap: {u('/sitemap_index.xml')}\n",
                content_type="text/plain",
            ),
            "/": Route(body=html(body="".join(f"<a href='{p}'>x</a>" for p in links))),
            "/ok": Route(body=html(), headers=LAST_MODIFIED),
            "/old": Route(301, headers={"Location": "/new"}),
            "/new": Route(body=html()),
            "/noindex": Route(body=html("<meta name='robots' content='noindex'>")),
            "/canon": Route(body=html(f"<link rel='canonical' href='{u('/ok')}'>")),
            "/file.pdf": Route(body=b"%PDF-1.4", content_type="application/pdf"),
            "/unlisted": Route(body=html()),
            "/dated": Route(body=html(), headers=LAST_MODIFIED),
            "/orphan": Route(body=html()),
            "/blocked": Route(body=html()),
            # /missing and /gone: no route, so 404.
            "/sitemap_index.xml": Route(
                body=index(
                    u("/sitemap-pages.xml"),
                    u("/sitemap-more.xml.gz"),
                    u("/bomb.xml.gz"),
                    u("/doctype.xml"),
                    u("/html.xml"),
                    u("/big.xml"),
                    u("/other.xml"),
                ),
                content_type="application/xml",
            ),
            "/sitemap-pages.xml": Route(
                body=urlset(
                    (u("/"), None),
                    (u("/ok"), "2015-10-21"),  # the crawl's day: no mismatch
                    (u("/ok?sessionid=abc"), None),
                    (u("/missing"), None),
                    (u("/old"), None),
                    (u("/noindex"), None),
                    (u("/canon"), None),
                    (u("/file.pdf"), None),
                ),
                content_type="application/xml",
            ),
            "/sitemap-more.xml.gz": Route(
                body=gzip.compress(
                    urlset(
                        (u("/orphan"), None),
                        (u("/gone"), None),
                        (u("/blocked"), None),
                        (u("/dated"), "2020-01-01"),
                    ).encode()
                ),
                content_type="application/gzip",
            ),
            # A gzip bomb: some 50 kB that open into more than the limit, as comments a
            # parser skips (so only the byte limit can stop it).
            "/bomb.xml.gz": Route(
                body=gzip.compress(
                    f'<urlset xmlns="{SITEMAP_NS}">'.encode() + _blank(LIMIT + 1_000_000),
                    compresslevel=9,
                ),
                content_type="application/gzip",
            ),
            "/doctype.xml": Route(
                body=(
                    '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaa">]>'
                    f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{u("/doctype-entry")}</loc></url>'
                    "</urlset>"
                ),
                content_type="application/xml",
            ),
            "/html.xml": Route(body=html(body="<p>Not here</p>"), content_type=HTML),
            # 50 MB + 1 byte: one entry, then blanks; the entry must not count (G2 rejects
            # the whole file).
            "/big.xml": Route(body=_big(u("/big-entry")), content_type="application/xml"),
            "/other.xml": Route(
                body=urlset((other.url("/elsewhere"), None)), content_type="application/xml"
            ),
        }
    )


def _blank(size: int) -> bytes:
    """``size`` bytes of XML comments of 1 MB each (libxml2 refuses one text node of more
    than 10 MB, which would stop a reader before the byte limit does)."""
    piece = b"<!--" + b" " * (1_000_000 - 7) + b"-->"
    whole, rest = divmod(size, len(piece))
    return piece * whole + b" " * rest


def _big(loc: str) -> bytes:
    head = f'<?xml version="1.0"?><urlset xmlns="{SITEMAP_NS}"><url><loc>{loc}</loc></url>'
    tail = "</urlset>"
    data = head.encode() + _blank(LIMIT + 1 - len(head) - len(tail)) + tail.encode()
    assert len(data) == LIMIT + 1
    return data


@pytest.fixture(scope="module")
def planted() -> Iterator[tuple[SiteServer, SiteServer]]:
    site, other = SiteServer(), SiteServer()
    plant(site, other)
    yield site, other
    site.close()
    other.close()


def table_rows(page_path: Path, chromium: str, sort_by: str | None = None) -> list[list[str]]:
    """The findings table of ``report.html`` as a real browser shows it (after clicking
    the header ``sort_by``, when given); no request may leave the page."""
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_page()
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.as_uri())
            if sort_by is not None:
                page.click(f"#findings th:text-is('{sort_by}')")
            rows = page.eval_on_selector_all(
                "#findings tbody tr",
                "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))",
            )
            charts = page.eval_on_selector_all("svg", "svgs => svgs.map(s => s.id)")
        finally:
            browser.close()
    assert requests == [page_path.as_uri()]  # self-contained: nothing else is fetched
    assert charts == ["chart-findings", "chart-ages", "chart-exclusions"]
    return rows


@deferred_f_from_coro_f
async def test_audit_of_a_planted_site(
    planted: tuple[SiteServer, SiteServer], crawl, tmp_path: Path, chromium_executable: str, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    site, other = planted
    u = site.url
    report_dir = tmp_path / "report"
    crawler = await crawl(
        {
            "SITEMAPGEN_AUDIT": True,
            "SITEMAPGEN_REPORT_DIR": str(report_dir),
            "ROBOTSTXT_OBEY": True,
        },
        start_url=u("/"),
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    folder = report_dir / site.origin.name
    assert sorted(p.name for p in folder.iterdir()) == [
        "audit.csv",
        "audit.json",
        "report.html",
        "urls.csv",
    ]

    rows = read_csv(folder / "audit.csv")
    invalid = [r for r in rows if r["finding"] == "invalid_sitemap"]
    others = [(r["url"], r["finding"], r["detail"]) for r in rows if r not in invalid]
    # Written from the rules: each planted URL gives its finding, in report order.
    assert others == [
        (u("/gone"), "listed_not_found", "HTTP 404"),
        (u("/missing"), "listed_not_found", "HTTP 404"),
        (u("/old"), "listed_redirected", u("/new")),
        (u("/noindex"), "listed_noindex", ""),
        (u("/canon"), "listed_canonicalised", u("/ok")),
        (u("/blocked"), "listed_blocked_by_robots", ""),
        (u("/file.pdf"), "listed_not_html", ""),
        (u("/ok?sessionid=abc"), "listed_duplicate", u("/ok")),
        (u("/orphan"), "listed_unreachable", ""),
        (u("/new"), "missing_from_sitemap", ""),
        (u("/unlisted"), "missing_from_sitemap", ""),
        (u("/dated"), "lastmod_mismatch", "listed 2020-01-01, crawled 2015-10-21T07:28:00+00:00"),
    ]
    # Each hostile child is a finding with the validator's rule; the audit went on.
    by_file = {r["url"]: r["detail"] for r in invalid}
    assert set(by_file) == {
        u("/bomb.xml.gz"),
        u("/doctype.xml"),
        u("/html.xml"),
        u("/big.xml"),
        u("/other.xml"),
    }
    assert "G2: more than 52,428,800 bytes uncompressed" in by_file[u("/bomb.xml.gz")]
    assert "G2: more than 52,428,800 bytes uncompressed" in by_file[u("/big.xml")]
    assert "P1: the DOCTYPE declares entities (a)" in by_file[u("/doctype.xml")]
    assert "P2: the root element is <html>" in by_file[u("/html.xml")]
    assert f"P12: {other.url('/elsewhere')} is outside" in by_file[u("/other.xml")]
    assert len(invalid) == 5

    counts = json.loads((folder / "audit.json").read_text())
    assert counts["origin"] == site.origin.root
    assert counts["counts"] == {
        "listed_not_found": 2,
        "listed_redirected": 1,
        "listed_noindex": 1,
        "listed_canonicalised": 1,
        "listed_blocked_by_robots": 1,
        "listed_disallowed": 0,  # /blocked: the downloader refused it first (above)
        "listed_not_html": 1,
        "listed_duplicate": 1,
        "listed_unreachable": 1,
        "missing_from_sitemap": 2,
        "lastmod_mismatch": 1,
        # The planted pages declare no alternates: no broken hreflang cluster.
        "hreflang_no_return": 0,
        "hreflang_target_not_listed": 0,
        "hreflang_missing_self": 0,
        "invalid_sitemap": 5,
    }
    assert counts["findings"] == 17
    # The index, its two good children and the five hostile ones (robots.txt aside).
    assert counts["sitemaps"] == [
        u("/sitemap_index.xml"),
        u("/sitemap-pages.xml"),
        u("/sitemap-more.xml.gz"),
        u("/bomb.xml.gz"),
        u("/doctype.xml"),
        u("/html.xml"),
        u("/big.xml"),
        u("/other.xml"),
    ]
    # 8 + 4 entries; the big file's one entry is not counted (the file is rejected).
    assert counts["urls_listed"] == 12

    # urls.csv: every URL judged and why (the answer to "why is this page not listed").
    judged = {r["url"]: r for r in read_csv(folder / "urls.csv")}
    verdicts = {url: (r["verdict"], r["status"], r["source"]) for url, r in judged.items()}
    assert verdicts == {
        u("/"): ("listed", "200", "crawl"),
        u("/ok"): ("listed", "200", "crawl"),
        u("/missing"): ("excluded/status/404", "404", "crawl"),
        u("/old"): ("redirected", "301", "crawl"),
        u("/new"): ("listed", "200", "crawl"),
        u("/noindex"): ("excluded/noindex", "200", "crawl"),
        u("/canon"): ("excluded/canonical_elsewhere", "200", "crawl"),
        u("/file.pdf"): ("excluded/content_type", "200", "crawl"),
        u("/unlisted"): ("listed", "200", "crawl"),
        u("/dated"): ("listed", "200", "crawl"),
        u("/orphan"): ("listed", "200", "sitemap"),
        u("/gone"): ("excluded/status/404", "404", "sitemap"),
        u("/blocked"): ("blocked_by_robots", "", "sitemap"),
    }
    assert judged[u("/ok")]["lastmod"] == "2015-10-21T07:28:00+00:00"
    assert judged[u("/canon")]["detail"] == u("/ok")
    assert judged[u("/old")]["detail"] == u("/new")

    # The close log: one line per origin with the counts.
    lines = [
        r.getMessage() for r in caplog.records if r.getMessage().startswith("Sitemap audit of")
    ]
    assert len(lines) == 1
    assert lines[0].startswith(f"Sitemap audit of {site.origin.root}: 17 findings (")
    assert "listed_not_found 2" in lines[0] and "invalid_sitemap 5" in lines[0]
    assert crawler.stats.get_value("sitemapgen/audit/findings/missing_from_sitemap") == 2
    # The audit's fetches judge the listed pages but do not add them to the sitemap.
    published = (tmp_path / "out" / site.origin.name / "sitemap-1.xml.gz").read_bytes()
    assert b"/orphan" not in gzip.decompress(published)

    # The report in a real browser: the table holds the rows of audit.csv, and sorts.
    page = folder / "report.html"
    shown = await asyncio.to_thread(table_rows, page, chromium_executable)
    # The grade as the last column, as in audit.csv.
    assert shown == [[r["url"], r["finding"], r["detail"], r["severity"]] for r in rows]
    by_url = await asyncio.to_thread(table_rows, page, chromium_executable, "url")
    assert [row[0] for row in by_url] == sorted(r["url"] for r in rows)


@deferred_f_from_coro_f
async def test_audit_command_reports_from_the_store_without_crawling(
    planted: tuple[SiteServer, SiteServer], crawl, tmp_path: Path
) -> None:
    site, _ = planted
    store = tmp_path / "store.sqlite3"
    await crawl(
        {
            "SITEMAPGEN_AUDIT": True,
            "SITEMAPGEN_STORE": str(store),
            "SITEMAPGEN_REPORT_DIR": str(tmp_path / "crawl-report"),
            "ROBOTSTXT_OBEY": True,
        },
        start_url=site.url("/"),
    )
    crawled = read_csv(tmp_path / "crawl-report" / site.origin.name / "audit.csv")
    requested = len(site.requested)
    out = tmp_path / "command-report"
    robots = site.url("/robots.txt")  # as the crawl's audit found the index: P13 grants
    status, printed = await asyncio.to_thread(
        run_audit, "--store", str(store), "--output", str(out), robots
    )
    assert status == 0  # no --fail-on: a report, not a gate
    # The same findings as the crawl's audit (the crawl's verdicts, the same sitemaps).
    assert read_csv(out / site.origin.name / "audit.csv") == crawled
    # Only the sitemaps were fetched again, no page.
    again = site.requested[requested:]
    assert again and all(p.endswith((".gz", ".xml", "robots.txt")) for p in again)
    assert printed.startswith(f"{site.origin.root}: 17 findings (")

    status, _ = await asyncio.to_thread(
        run_audit, "--store", str(store), "--output", str(out), "--fail-on",
        "listed_not_found,lastmod_mismatch", robots,
    )  # fmt: skip
    assert status == 1
    # A sitemap with none of the kinds named: the gate stays open.
    status, _ = await asyncio.to_thread(
        run_audit, "--store", str(store), "--output", str(out), "--fail-on", "listed_noindex",
        site.url("/sitemap-more.xml.gz"),
    )  # fmt: skip
    assert status == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fail-on", "listed_gone", "x.xml"], "--fail-on: unknown finding kind listed_gone"),
        (["x.xml"], "name the crawl's store: --jobdir DIR or --store FILE"),
        (["--store", "nowhere.sqlite3", "x.xml"], "nowhere.sqlite3: no such store file"),
        (["--store", "s"], "name at least one sitemap"),
        (["--store", "s", "ftp://host/x.xml"], "only http, https and file URLs"),
    ],
)
def test_audit_command_usage_errors(
    argv: list[str], message: str, tmp_path: Path, monkeypatch
) -> None:
    from scrapy.exceptions import UsageError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=re.escape(message)):
        run_audit(*argv)


def test_audit_command_needs_a_store_with_verdicts(tmp_path: Path, capsys) -> None:
    from scrapy_sitemapgen.store.sqlite import SqliteFactStore

    SqliteFactStore(tmp_path / "store.sqlite3").close()
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(urlset(("https://example.com/", None)))
    status, _ = run_audit("--store", str(tmp_path / "store.sqlite3"), str(sitemap))
    assert status == 2
    assert (
        "the store holds no verdicts; crawl with SITEMAPGEN_AUDIT = True" in capsys.readouterr().err
    )


@deferred_f_from_coro_f
async def test_audit_off_keeps_no_verdicts_and_writes_no_report(
    planted: tuple[SiteServer, SiteServer], crawl, tmp_path: Path, monkeypatch
) -> None:
    import sqlite3

    monkeypatch.chdir(tmp_path)  # where the default report folder would appear
    site, _ = planted
    store = tmp_path / "store.sqlite3"
    before = len(site.requested)
    crawler = await crawl(
        {"SITEMAPGEN_STORE": str(store), "SITEMAPGEN_ALTERNATES_CHECK": "as_declared"},
        start_url=site.url("/"),
    )
    assert crawler.stats.get_value("sitemapgen/pages/recorded") == 5
    assert sqlite3.connect(store).execute("SELECT COUNT(*) FROM verdicts").fetchone() == (0,)
    assert not (tmp_path / "sitemapgen-report").exists()
    assert not any(p.startswith(("/sitemap", "/orphan")) for p in site.requested[before:])


@deferred_f_from_coro_f
async def test_audit_without_announced_sitemaps_and_its_fetch_budget(crawl, tmp_path: Path) -> None:
    """No robots.txt: /sitemap.xml (absent here: no finding); SITEMAPGEN_AUDIT_SITEMAPS
    names one more; SITEMAPGEN_AUDIT_MAX_FETCH bounds the listed URLs fetched."""
    with SiteServer() as site:
        site.routes["/"] = Route(body=html())
        site.routes["/extra.txt"] = Route(
            body="".join(f"{site.url(f'/orphan{n}')}\n" for n in range(5)),
            content_type="text/plain",
        )
        for n in range(5):
            site.routes[f"/orphan{n}"] = Route(body=html())
        report_dir = tmp_path / "report"
        crawler = await crawl(
            {
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_REPORT_DIR": str(report_dir),
                "SITEMAPGEN_AUDIT_SITEMAPS": [site.url("/extra.txt")],
                "SITEMAPGEN_AUDIT_MAX_FETCH": 2,
            },
            start_url=site.url("/"),
        )
        fetched = [p for p in site.requested if p.startswith("/orphan")]
    folder = report_dir / site.origin.name
    report = json.loads((folder / "audit.json").read_text())
    assert report["sitemaps"] == [site.url("/extra.txt")]  # no /sitemap.xml: not a finding
    assert report["urls_listed"] == 5
    assert report["not_fetched"] == 3
    assert sorted(fetched) == ["/orphan0", "/orphan1"]  # the first two listed, at once
    assert crawler.stats.get_value("sitemapgen/audit/not_fetched") == 3
    rows = [(r["url"], r["finding"]) for r in read_csv(folder / "audit.csv")]
    assert rows == [
        (site.url("/orphan0"), "listed_unreachable"),
        (site.url("/orphan1"), "listed_unreachable"),
        (site.url("/"), "missing_from_sitemap"),
    ]


@deferred_f_from_coro_f
async def test_verdicts_of_statuses_no_callback_sees(crawl, tmp_path: Path) -> None:
    with SiteServer() as site:
        site.routes["/"] = Route(body=html(body="<a href='/gone'>g</a><a href='/err'>e</a>"))
        site.routes["/err"] = Route(500, "<p>oops</p>")
        report_dir = tmp_path / "report"
        await crawl(
            {"SITEMAPGEN_AUDIT": True, "SITEMAPGEN_REPORT_DIR": str(report_dir)},
            spidercls=PlainSpider,
            start_url=site.url("/"),
        )
    rows = read_csv(report_dir / site.origin.name / "urls.csv")
    assert [(r["url"], r["verdict"], r["status"]) for r in rows] == [
        (site.url("/"), "listed", "200"),
        (site.url("/err"), "excluded/status/500", "500"),
        (site.url("/gone"), "excluded/status/404", "404"),
    ]


@deferred_f_from_coro_f
async def test_a_store_without_verdicts_runs_the_crawl_without_the_audit(
    redis_server, crawl, tmp_path: Path, caplog
) -> None:
    caplog.set_level(logging.WARNING, logger="scrapy_sitemapgen")
    with SiteServer() as site:
        site.routes["/"] = Route(body=html())
        crawler = await crawl(
            {
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_STORE": redis_server.url,
                "SITEMAPGEN_SHARED_WRITE": "always",
                "SITEMAPGEN_REPORT_DIR": str(tmp_path / "report"),
            },
            start_url=site.url("/"),
        )
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert crawler.stats.get_value("sitemapgen/urls/written") == 1
    assert not (tmp_path / "report").exists()
    assert any("keeps no verdicts, so there is no audit" in r.getMessage() for r in caplog.records)


@deferred_f_from_coro_f
async def test_audit_follows_redirects_of_sitemaps_and_of_listed_pages(
    crawl, tmp_path: Path
) -> None:
    with SiteServer() as site:
        site.routes.update(
            {
                "/": Route(body=html()),
                "/robots.txt": Route(
                    body=f"Sitemap: {site.url('/moved.xml')}\n", content_type="text/plain"
                ),
                "/moved.xml": Route(301, headers={"Location": "/real.xml"}),
                "/real.xml": Route(
                    body=urlset((site.url("/"), None), (site.url("/hop"), None)),
                    content_type="application/xml",
                ),
                "/hop": Route(302, headers={"Location": "/land"}),
                "/land": Route(body=html()),
            }
        )
        report_dir = tmp_path / "report"
        await crawl(
            {"SITEMAPGEN_AUDIT": True, "SITEMAPGEN_REPORT_DIR": str(report_dir)},
            start_url=site.url("/"),
        )
    folder = report_dir / site.origin.name
    assert json.loads((folder / "audit.json").read_text())["sitemaps"] == [site.url("/moved.xml")]
    rows = [(r["url"], r["finding"], r["detail"]) for r in read_csv(folder / "audit.csv")]
    assert rows == [(site.url("/hop"), "listed_redirected", site.url("/land"))]
    judged = {
        r["url"]: (r["verdict"], r["status"], r["source"]) for r in read_csv(folder / "urls.csv")
    }
    assert judged == {
        site.url("/"): ("listed", "200", "crawl"),
        site.url("/hop"): ("redirected", "302", "sitemap"),
        site.url("/land"): ("listed", "200", "sitemap"),  # not listed, not linked: no finding
    }


@deferred_f_from_coro_f
async def test_duplicates_by_content_are_listed_duplicates_not_missing(
    crawl, tmp_path: Path
) -> None:
    """A page the publish leaves out because another URL has its content
    (SITEMAPGEN_DEDUPE_CONTENT, issue 21) is a ``listed_duplicate`` of the URL kept when the
    live sitemap lists it, never ``missing_from_sitemap``; urls.csv says why."""
    home = html(
        "<title>Home</title>", "<p>Welcome</p><a href='/index.html'>i</a><a href='/copy'>c</a>"
    )
    with SiteServer() as site:
        u = site.url
        # The same bytes under three URLs; the live sitemap lists two of them, the third
        # is left out by the publish, silently for the audit (it is not listed live).
        for path in ("/", "/index.html", "/copy"):
            site.routes[path] = Route(body=home)
        site.routes["/sitemap.xml"] = Route(
            body=urlset((u("/"), None), (u("/index.html"), None)), content_type="application/xml"
        )
        report_dir = tmp_path / "report"
        crawler = await crawl(
            {"SITEMAPGEN_AUDIT": True, "SITEMAPGEN_REPORT_DIR": str(report_dir)},
            start_url=u("/"),
        )
    folder = report_dir / site.origin.name
    rows = [(r["url"], r["finding"], r["detail"]) for r in read_csv(folder / "audit.csv")]
    assert rows == [(u("/index.html"), "listed_duplicate", u("/"))]
    judged = {r["url"]: (r["verdict"], r["detail"]) for r in read_csv(folder / "urls.csv")}
    assert judged == {
        u("/"): ("listed", ""),
        u("/index.html"): ("excluded/duplicate_content", u("/")),
        u("/copy"): ("excluded/duplicate_content", u("/")),
    }
    assert crawler.stats.get_value("sitemapgen/excluded/duplicate_content") == 2


@deferred_f_from_coro_f
async def test_audit_counts_findings_per_section(crawl, tmp_path: Path) -> None:
    """With SITEMAPGEN_SECTIONS (issue 23), audit.json counts each section's findings: a
    finding belongs to the section its URL goes to; the URLs of no section are "default"."""
    with SiteServer() as site:
        u = site.url
        links = "".join(f"<a href='{p}'>{p}</a>" for p in ("/products/p1", "/blog/b1", "/about"))
        site.routes["/"] = Route(body=html("<title>home</title>", links))
        site.routes["/products/p1"] = Route(
            body=html("<meta name='robots' content='noindex'>", "<p>product one</p>")
        )
        site.routes["/blog/b1"] = Route(body=html("", "<p>first post</p>"))
        site.routes["/about"] = Route(body=html("", "<p>about us</p>"))
        site.routes["/sitemap.xml"] = Route(
            body=urlset((u("/"), None), (u("/products/p1"), None), (u("/about"), None)),
            content_type="application/xml",
        )
        report_dir = tmp_path / "report"
        await crawl(
            {
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_REPORT_DIR": str(report_dir),
                "SITEMAPGEN_SECTIONS": [("products", "/products/"), ("blog", "/blog/")],
            },
            start_url=u("/"),
        )
    report = json.loads((report_dir / site.origin.name / "audit.json").read_text())
    none = {kind: 0 for kind in report["counts"]}
    assert report["sections"] == {
        "products": {**none, "listed_noindex": 1},
        "blog": {**none, "missing_from_sitemap": 1},
        "default": none,
    }
    assert list(report["sections"]) == ["products", "blog", "default"]


def _closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens: bound, then released."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unreadable_sitemaps() -> Iterator[SiteServer]:
    """Two pages; robots.txt names /sitemap.xml, which 404s; /plain.xml is no XML."""
    site = SiteServer()
    site.routes["/"] = Route(body=html(body="<a href='/a'>a</a>"))
    site.routes["/a"] = Route(body=html())
    site.routes["/robots.txt"] = Route(
        body=f"User-agent: *\nSitemap: {site.url('/sitemap.xml')}\n", content_type="text/plain"
    )
    site.routes["/plain.xml"] = Route(body="this is no XML", content_type="application/xml")
    yield site
    site.close()


@pytest.fixture
def no_xml(unreadable_sitemaps: SiteServer) -> Iterator[SiteServer]:
    """A robots.txt that names a sitemap on another origin (one that is no XML)."""
    with SiteServer() as site:
        site.routes["/robots.txt"] = Route(
            body=f"Sitemap: {unreadable_sitemaps.url('/plain.xml')}\n", content_type="text/plain"
        )
        yield site


@deferred_f_from_coro_f
async def test_the_audit_of_sitemaps_that_cannot_be_read_reports_nothing_missing(
    unreadable_sitemaps: SiteServer, no_xml: SiteServer, crawl, tmp_path: Path, caplog
) -> None:
    site = unreadable_sitemaps
    store = tmp_path / "store.sqlite3"
    report_dir = tmp_path / "report"
    crawler = await crawl(
        {
            "SITEMAPGEN_AUDIT": True,
            "SITEMAPGEN_STORE": str(store),
            "SITEMAPGEN_REPORT_DIR": str(report_dir),
        },
        start_url=site.url("/"),
    )
    counts = json.loads((report_dir / site.origin.name / "audit.json").read_text())["counts"]
    assert counts["missing_from_sitemap"] == 0
    assert counts["invalid_sitemap"] == 1  # the 404 of a sitemap robots.txt names
    assert crawler.stats.get_value("sitemapgen/audit/findings/missing_from_sitemap") is None
    warnings = [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "audit" in r.name
    ]
    assert warnings == [
        f"Sitemap audit: {site.origin.root}: its live sitemaps could not be read "
        f"({site.url('/sitemap.xml')}: HTTP 404), so no page is reported missing_from_sitemap"
    ]

    # The command, on the same store: exit 2, one line, no report, as sitemapgen-validate
    # does for a source that cannot be fetched.
    nowhere = f"http://127.0.0.1:{_closed_port()}/robots.txt"
    for source, why in [
        (nowhere, f"{nowhere}: cannot be fetched"),
        (site.url("/robots.txt"), f"{site.url('/sitemap.xml')}: HTTP 404"),
        (site.url("/plain.xml"), f"{site.url('/plain.xml')}: P1: "),
        # A robots.txt naming a file on another origin (P13): not fetched (issue 53).
        (no_xml.url("/robots.txt"), f"{site.url('/plain.xml')}: on {site.origin.root}, outside "),
    ]:
        out = tmp_path / "command-report"
        caplog.clear()
        status, printed, err = await asyncio.to_thread(
            _run_audit_err, "--store", str(store), "--output", str(out), source
        )
        assert status == 2, (source, printed, err)
        assert printed == ""
        assert not out.exists()
        assert len(err.splitlines()) == 1
        assert err.startswith(why), err
        assert err.rstrip().endswith("no report written")


def _run_audit_err(*argv: str) -> tuple[int, str, str]:
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status, printed = run_audit(*argv)
    return status, printed, err.getvalue()
