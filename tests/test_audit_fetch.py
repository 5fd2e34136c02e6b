"""The audit's own requests (issue 53): nothing outside the origin audited is requested,
whatever its live sitemaps name or its redirects point at; a second real server on another
port, standing for an internal address, counts what it receives, and must receive nothing."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.sitemaps.urls import origin_of_root

from .helpers import Route, SiteServer, html, read_csv, run_audit
from .test_audit import index, urlset

if TYPE_CHECKING:
    from pathlib import Path

XML = "application/xml"


@deferred_f_from_coro_f
async def test_the_audit_requests_nothing_off_the_origin(crawl, tmp_path: Path) -> None:
    """The crawl's audit, then ``sitemapgen-audit`` on its store from the same robots.txt:
    neither asks the other server for anything, and both report the same findings."""
    with SiteServer() as site, SiteServer() as inside:
        u, i = site.url, inside.url
        # Whatever the internal server is asked for, it answers as a live site would.
        inside.default = Route(body=urlset((i("/secret"), None)), content_type=XML)
        site.routes.update(
            {
                "/": Route(body=html()),
                "/robots.txt": Route(
                    # The second line is a cross-submission (P13): allowed by the protocol,
                    # not read by the audit.
                    body=f"Sitemap: {u('/index.xml')}\nSitemap: {i('/announced.xml')}\n",
                    content_type="text/plain",
                ),
                "/index.xml": Route(
                    body=index(u("/pages.xml"), i("/child.xml"), u("/moved.xml")),
                    content_type=XML,
                ),
                "/moved.xml": Route(301, headers={"Location": i("/moved.xml")}),
                "/pages.xml": Route(
                    body=urlset(
                        (u("/"), None),
                        (u("/hop"), None),
                        (u("/hop-twice"), None),
                        (i("/listed"), None),
                    ),
                    content_type=XML,
                ),
                "/hop": Route(302, headers={"Location": i("/landing")}),
                # A first hop on the origin is followed, the second, off it, is not.
                "/hop-twice": Route(301, headers={"Location": "/hop-again"}),
                "/hop-again": Route(307, headers={"Location": i("/landing")}),
            }
        )
        report_dir = tmp_path / "report"
        store = tmp_path / "store.sqlite3"
        crawler = await crawl(
            {
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_REPORT_DIR": str(report_dir),
                "SITEMAPGEN_STORE": str(store),
            },
            start_url=u("/"),
        )
        assert crawler.stats.get_value("finish_reason") == "finished"
        assert inside.requested == []  # no child, no listed URL, no redirect, no robots.txt
        status, _ = await asyncio.to_thread(
            run_audit, "--store", str(store), "--output", str(tmp_path / "cmd"), u("/robots.txt")
        )
        assert status == 0
        assert inside.requested == []
        # The audit did read the site's own files and fetch its listed pages.
        assert {"/index.xml", "/pages.xml", "/moved.xml", "/hop", "/hop-twice", "/hop-again"} <= (
            set(site.requested)
        )
    folder = report_dir / site.origin.name
    rows = read_csv(folder / "audit.csv")
    found = {(r["url"], r["finding"]): r["detail"] for r in rows}
    off = f"outside {site.origin.root} (the origin audited"
    # The listed pages whose redirect leaves the origin: reported with the target.
    assert found[(u("/hop"), "listed_redirected")] == i("/landing")
    assert found[(u("/hop-twice"), "listed_redirected")] == u("/hop-again")
    judged = {r["url"]: (r["verdict"], r["detail"]) for r in read_csv(folder / "urls.csv")}
    assert judged[u("/hop-again")] == ("excluded/status/307", i("/landing"))
    assert not any(url.startswith(inside.root) for url in judged)
    # The index's child on the other server: its P9 violation, once.
    invalid = [r["detail"] for r in rows if r["finding"] == "invalid_sitemap"]
    (p9,) = [d for d in invalid if "P9:" in d]
    assert p9.startswith(f"line 1: P9: {i('/child.xml')} is outside {site.origin.root}")
    # The cross-submitted file: not fetched, said why on robots.txt's line.
    assert found[(u("/robots.txt"), "invalid_sitemap")] == (
        f"line 2: P15: {i('/announced.xml')} is listed, but cannot be fetched: on "
        f"{inside.origin.root}, {off}; the audit requests nothing outside it: P9, P12, P13)"
    )
    # The moved file: the redirect is named, and not followed.
    (moved,) = [d for d in invalid if "/moved.xml is listed" in d]
    assert f"HTTP 301 to {i('/moved.xml')}, not followed: on {inside.origin.root}, {off}" in moved
    # The listed URL on the other server: the sitemap's P12 violation, and no verdict.
    (p12,) = [d for d in invalid if "P12:" in d]
    assert f"P12: {i('/listed')} is outside" in p12
    assert len(invalid) == 4
    report = json.loads((folder / "audit.json").read_text())
    assert report["sitemaps"] == [u("/index.xml"), u("/pages.xml")]
    # The command read the same files the same way: the same rows.
    assert read_csv(tmp_path / "cmd" / site.origin.name / "audit.csv") == rows


@deferred_f_from_coro_f
async def test_an_unannounced_sitemap_or_a_robots_txt_that_redirects_off_the_origin(
    crawl, tmp_path: Path
) -> None:
    """No Sitemap: line: /sitemap.xml is read; when it, or robots.txt, redirects to another
    origin, the file is there but not read, which is a finding, not a site without one.
    (The crawl's own reading of robots.txt for the listing rules follows redirects as RFC
    9309 asks of crawlers; it is off here, so that only the audit asks for the file.)"""
    with SiteServer() as site, SiteServer() as inside:
        inside.default = Route(body=urlset((inside.url("/secret"), None)), content_type=XML)
        site.routes["/"] = Route(body=html())
        site.routes["/robots.txt"] = Route(302, headers={"Location": inside.url("/robots.txt")})
        site.routes["/sitemap.xml"] = Route(301, headers={"Location": inside.url("/sitemap.xml")})
        report_dir = tmp_path / "report"
        await crawl(
            {
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_REPORT_DIR": str(report_dir),
                "SITEMAPGEN_RESPECT_ROBOTS_TXT": False,
            },
            start_url=site.url("/"),
        )
        assert inside.requested == []
        assert {"/robots.txt", "/sitemap.xml"} <= set(site.requested)
    rows = read_csv(report_dir / site.origin.name / "audit.csv")
    found = {r["url"]: r["detail"] for r in rows if r["finding"] == "invalid_sitemap"}
    assert set(found) == {site.url("/robots.txt"), site.url("/sitemap.xml")}
    for name, status in (("/robots.txt", 302), ("/sitemap.xml", 301)):
        assert found[site.url(name)].startswith(
            f"P15: cannot be read: HTTP {status} to {inside.url(name)}, not followed: "
            f"on {inside.origin.root}, outside {site.origin.root}"
        )
    # What the live sitemaps list is unknown: no page is said to be missing from them.
    assert not any(r["finding"] == "missing_from_sitemap" for r in rows)


@deferred_f_from_coro_f
async def test_a_sitemap_the_user_names_is_read_on_its_own_origin(crawl, tmp_path: Path) -> None:
    """SITEMAPGEN_AUDIT_SITEMAPS is the user's choice: a file on another origin is read
    there (and audited as that origin's), but what it names off that origin is not."""
    with SiteServer() as site, SiteServer() as chosen, SiteServer() as inside:
        site.routes["/"] = Route(body=html())
        chosen.routes["/extra.xml"] = Route(
            body=index(chosen.url("/part.xml"), inside.url("/part.xml")), content_type=XML
        )
        chosen.routes["/part.xml"] = Route(body=urlset((chosen.url("/p"), None)), content_type=XML)
        chosen.routes["/p"] = Route(body=html())
        inside.default = Route(body=urlset((inside.url("/secret"), None)), content_type=XML)
        report_dir = tmp_path / "report"
        await crawl(
            {
                "SITEMAPGEN_AUDIT": True,
                "SITEMAPGEN_REPORT_DIR": str(report_dir),
                "SITEMAPGEN_AUDIT_SITEMAPS": [chosen.url("/extra.xml")],
            },
            start_url=site.url("/"),
        )
        assert inside.requested == []
        assert {"/extra.xml", "/part.xml", "/p"} <= set(chosen.requested)
    report = json.loads((report_dir / chosen.origin.name / "audit.json").read_text())
    assert report["sitemaps"] == [chosen.url("/extra.xml"), chosen.url("/part.xml")]
    assert report["urls_listed"] == 1


def _closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens: bound, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_WHY = {
    "404": "HTTP 404",
    "timeout": "took longer than 1.0 seconds",
    "refused": "Connection was refused",
}


@pytest.mark.parametrize(
    ("named_by", "how"),
    [
        ("robots.txt", "404"),
        ("robots.txt", "timeout"),
        ("setting", "404"),
        ("setting", "timeout"),
        ("setting", "refused"),  # an origin where nothing listens
    ],
)
@pytest.mark.parametrize("root", ["/", "/3.11/"])
@deferred_f_from_coro_f
async def test_an_unreachable_sitemap_is_the_same_finding_whatever_its_path(
    root: str, named_by: str, how: str, crawl, tmp_path: Path, caplog
) -> None:
    """A sitemap named by robots.txt or SITEMAPGEN_AUDIT_SITEMAPS that answers 404, too
    late or not at all: one ``invalid_sitemap`` finding with the reason, at the site's root
    (the very place the audit tries when robots.txt names none) as under /3.11/, the crawl
    rooted there too. Before, the user's ``/sitemap.xml`` was taken for that guess, whose
    absence is no finding: ``0 findings (nothing to report)``."""
    caplog.set_level(logging.INFO, logger="scrapy_sitemapgen")
    with SiteServer() as site:
        site.routes[root] = Route(body=html(body=f"<a href='{root}a'>a</a>"))
        site.routes[f"{root}a"] = Route(body=html())
        origin = site.root if how != "refused" else f"http://127.0.0.1:{_closed_port()}"
        sitemap = f"{origin}{root}sitemap.xml"
        if how == "timeout":
            site.routes[f"{root}sitemap.xml"] = Route(body="<urlset/>", delay=3)
        settings: dict[str, object] = {
            "SITEMAPGEN_AUDIT": True,
            "SITEMAPGEN_REPORT_DIR": str(tmp_path / "report"),
            "DOWNLOAD_TIMEOUT": 1,
        }
        if named_by == "robots.txt":
            site.routes["/robots.txt"] = Route(
                body=f"Sitemap: {sitemap}\n", content_type="text/plain"
            )
        else:
            settings["SITEMAPGEN_AUDIT_SITEMAPS"] = [sitemap]
        await crawl(settings, start_url=site.url(root))
    folder = tmp_path / "report" / origin_of_root(origin + "/").name
    rows = read_csv(folder / "audit.csv")
    invalid = {r["url"]: r["detail"] for r in rows if r["finding"] == "invalid_sitemap"}
    # Robots.txt's line is blamed for a file it names (P15), the file itself else.
    blamed = f"{origin}/robots.txt" if named_by == "robots.txt" else sitemap
    detail = invalid.pop(blamed)
    assert sitemap in detail or blamed == sitemap
    assert _WHY[how] in detail
    if how == "refused":  # nothing answers there: its robots.txt is unknown too
        assert set(invalid) == {f"{origin}/robots.txt"} | (
            {f"{origin}/sitemap.xml"} if root != "/" else set()
        )
    else:
        assert invalid == {}
    others = invalid
    # What the live sitemaps list is unknown: no page is said to be missing from them.
    assert not any(r["finding"] == "missing_from_sitemap" for r in rows)
    close = [m for m in caplog.messages if m.startswith("Sitemap audit of " + origin)]
    assert len(close) == 1
    assert f"invalid_sitemap {1 + len(others)})" in close[0] or (
        f"invalid_sitemap {1 + len(others)}," in close[0]
    )
