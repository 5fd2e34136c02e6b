"""Output of the working tree against another revision's, byte for byte, on the same input.

For a change that must not change behaviour (a restructuring): the same servers are crawled
by both packages, one after the other, and both build from the same generated feed; every
published sitemap file is hashed (an index's <lastmod>, the time of the run, masked), and a
difference fails the run.

    python -m benchmarks.identical --base HEAD~3
    python -m benchmarks.identical --base HEAD~3 --shape realistic --origins 2000

The crawls cover the demo site (example_spider/site, two origins), the test suite's
two-origin site (tests/helpers.py: redirects, bad dates, P3's length boundary, items) and
the benchmark site (tests/generated_site.py: images, alternates, canonicals, noindex).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from tests.generated_site import Site

from .ab import environment, export_base
from .feed import build as build_feed
from .results import REPO

_CRAWL = textwrap.dedent(
    """
    import sys

    import scrapy
    from scrapy.crawler import CrawlerProcess

    starts, out = sys.argv[1].split(","), sys.argv[2]
    hosts = {start.split("/")[2] for start in starts}


    class Follow(scrapy.Spider):
        name = "follow"

        async def start(self):
            for start in starts:
                yield scrapy.Request(start)

        def parse(self, response):
            if "/page2" in response.url:
                yield {"loc": response.url, "changefreq": "daily", "priority": "0.8"}
            if not isinstance(response, scrapy.http.HtmlResponse):
                return
            for href in response.css("a::attr(href)").getall():
                url = response.urljoin(href)
                if url.startswith("http") and url.split("/")[2] in hosts:
                    yield scrapy.Request(url, meta={"dont_sitemap": "private" in url})


    process = CrawlerProcess(
        {
            "ADDONS": {"scrapy_sitemapgen.Addon": 500},
            "SITEMAPGEN_URI": out,
            "LOG_LEVEL": "WARNING",
            "TELNETCONSOLE_ENABLED": False,
            "RETRY_ENABLED": False,
        }
    )
    process.crawl(Follow)
    process.start()
    """
)


# An index's <lastmod> is when each sitemap file changed (P10): the time of the run that
# wrote it, which two runs cannot share. Masked before hashing an index, and only there.
_INDEX_LASTMOD = re.compile(rb"<lastmod>[^<]*</lastmod>")


def _hashes(folder: Path) -> dict[str, str]:
    """sha256 of every published sitemap file (urlsets, news, text, indexes) under ``folder``,
    an index's <lastmod> values masked."""
    hashes = {}
    for path in sorted(folder.rglob("sitemap*")):
        if path.is_file():
            data = path.read_bytes()
            if b"<sitemapindex" in data[:400]:
                data = _INDEX_LASTMOD.sub(b"<lastmod/>", data)
            hashes[str(path.relative_to(folder))] = hashlib.sha256(data).hexdigest()
    return hashes


def _outputs(pythonpath: Path, starts: str, feed: Path, work: Path) -> dict[str, str]:
    env = environment(pythonpath)
    script = work / "crawl.py"
    script.write_text(_CRAWL)
    subprocess.run([sys.executable, str(script), starts, str(work / "crawl")], env=env, check=True)
    build = [
        sys.executable, "-m", "scrapy", "sitemapgen-build", "--input", str(feed),
        "-s", f"SITEMAPGEN_URI={work / 'build'}", "-s", "LOG_LEVEL=WARNING",
    ]  # fmt: skip
    subprocess.run(build, env=env, cwd=work, check=True)
    return {f"crawl/{k}": v for k, v in _hashes(work / "crawl").items()} | {
        f"build/{k}": v for k, v in _hashes(work / "build").items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the git revision to compare with")
    parser.add_argument("--records", type=int, default=200_000, help="feed size for the build")
    parser.add_argument("--pages", type=int, default=500, help="benchmark site size")
    parser.add_argument("--shape", default="ours", help="the feed's shape (benchmarks.feed)")
    parser.add_argument("--origins", type=int, default=0, help="the feed's origins (0: three)")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(REPO), str(REPO / "example_spider")]
    from serve import serve_site  # example_spider/serve.py

    from tests.helpers import SiteServer, build_site

    demo = serve_site()
    a, b = SiteServer(), SiteServer()
    build_site(a, b)
    site = Site(args.pages)
    feed = Path(
        build_feed(args.records, 1, shape=args.shape, origins=args.origins, quiet=True).path
    )
    starts = ",".join(
        [a.url("/"), b.url("/"), site.root + "/p/0", *(u + "/" for u in demo.urls.values())]
    )
    try:
        with tempfile.TemporaryDirectory(prefix="sitemapgen-identical-") as temp:
            old_work, new_work = Path(temp, "old"), Path(temp, "new")
            old_work.mkdir()
            new_work.mkdir()
            base = export_base(args.base, Path(temp, "base"))
            old = _outputs(base, starts, feed, old_work)
            new = _outputs(REPO, starts, feed, new_work)
    finally:
        for server in (a, b):
            server.close()
        site.close()
        demo.close()
    print(f"{'':4}  {'file':58}  sha256 (base {args.base} / working tree)")
    for name in sorted(old.keys() | new.keys()):
        same = old.get(name) == new.get(name)
        print(f"{'same' if same else 'DIFF':4}  {name:58}  {str(old.get(name))[:16]}")
        if not same:
            print(f"{'':4}  {'':58}  {str(new.get(name))[:16]}")
    differ = sum(old.get(name) != new.get(name) for name in old.keys() | new.keys())
    print(f"{len(old.keys() | new.keys())} files, {differ} differ")
    return 1 if differ or not old else 0


if __name__ == "__main__":
    sys.exit(main())
