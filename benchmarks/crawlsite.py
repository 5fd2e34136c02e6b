"""A generated site for crawl benchmarks, served by a stdlib ThreadingHTTPServer on
127.0.0.1: pages with images (``src``, ``srcset``, ``og:image``), hreflang alternates, some
``Last-Modified`` headers and ``article:modified_time`` dates, some noindex pages and
canonicals elsewhere, about 4 KB of text each, links that reach every page,
and a few links to missing pages (404).

    python -m benchmarks.crawlsite --pages 2000      # serve it until Ctrl-C

Every page is rendered once at start-up, so the server costs little CPU during a crawl.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TEXT = (
    "Sitemaps are an easy way for webmasters to inform search engines about pages on their "
    "sites that are available for crawling. "
)
_LANGUAGES = ("en", "de", "fr")


def noindex(i: int) -> bool:
    return i % 50 == 7


def canonical_elsewhere(i: int) -> bool:
    return i % 97 == 3


def listed(i: int) -> bool:
    """Whether page i belongs in the sitemap (the middleware's rules, as the site breaks them)."""
    return not noindex(i) and not canonical_elsewhere(i)


def page(i: int, pages: int) -> bytes:
    """Page i links to its tree children, its neighbour and a few random pages: all reachable."""
    rng = random.Random(i)
    links = [2 * i + 1, 2 * i + 2, i + 1, *(rng.randrange(pages) for _ in range(4))]
    hrefs = "".join(f'<li><a href="/p/{j}">Page {j}</a></li>' for j in links if j < pages)
    head = [
        f"<title>Page {i}</title>",
        f'<meta property="og:image" content="https://cdn.example.com/og/{i}.jpg">',
        *(
            f'<link rel="alternate" hreflang="{lang}" href="/{lang}/p/{i}">'
            for lang in _LANGUAGES[1:]
        ),
        f'<link rel="alternate" hreflang="en" href="/p/{i}">',
        f'<link rel="alternate" hreflang="x-default" href="/p/{i}">',
    ]
    if i % 5 == 1:
        head.append('<meta property="article:modified_time" content="2024-03-01T12:00:00+01:00">')
    if noindex(i):
        head.append('<meta name="robots" content="noindex">')
    if canonical_elsewhere(i):
        head.append(f'<link rel="canonical" href="/p/{(i + 1) % pages}">')
    images = "".join(
        f'<img src="/img/{i}-{k}.jpg" srcset="/img/{i}-{k}-480.jpg 480w, /img/{i}-{k}-960.jpg 960w" '
        f'alt="image {k}">'
        for k in range(1 + i % 3)
    )
    text = "".join(f"<p>{_TEXT * 3}</p>" for _ in range(10))
    missing = f'<li><a href="/missing/{i}">gone</a></li>' if i % 10 == 0 else ""  # 404s
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{"".join(head)}</head>'
        f"<body><h1>Page {i}</h1>{images}{text}<ul>{hrefs}{missing}</ul></body></html>"
    ).encode()


class Site:
    """The site on 127.0.0.1: /p/0 .. /p/N-1; every odd page has a Last-Modified header."""

    def __init__(self, pages: int) -> None:
        self.pages = pages
        bodies = [page(i, pages) for i in range(pages)]

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                parts = self.path.split("/")
                if (
                    len(parts) == 3
                    and parts[1] == "p"
                    and parts[2].isdigit()
                    and int(parts[2]) < pages
                ):
                    i = int(parts[2])
                    body = bodies[i]
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    if i % 2:
                        self.send_header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
                else:
                    body = b"not found"
                    self.send_response(404)
                    self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def expected(self) -> set[str]:
        return {f"{self.root}/p/{i}" for i in range(self.pages) if listed(i)}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args(argv)
    site = Site(args.pages)
    print(f"serving {args.pages} pages at {site.root}/p/0 (Ctrl-C stops)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        site.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
