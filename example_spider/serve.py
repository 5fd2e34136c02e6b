"""
Static server for the two-origin demo site.

Every folder of ``site/`` (``main``, ``shop``) is served as its own origin on
127.0.0.1 with a random port. One crawl then sees several origins on one host,
which is exactly the case the add-on splits by (scheme, host, port). The module
uses only the standard library, so the demo needs nothing beyond Scrapy.

Run ``python serve.py`` to browse the site by hand; ``demo.py`` imports
:func:`serve_site`.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import TracebackType

logger = logging.getLogger(__name__)

SITE_ROOT = Path(__file__).resolve().parent / "site"
META_FILE = "_site.json"
HOST = "127.0.0.1"

# Explicit, so the answer does not depend on the machine's mime.types database.
CONTENT_TYPES: dict[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".xml": "application/xml",
    ".pdf": "application/pdf",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
DEFAULT_CONTENT_TYPE = "application/octet-stream"

# `{{shop}}` in an HTML page becomes the shop origin's base URL, e.g.
# `http://127.0.0.1:53211`, because the ports are only known at serve time.
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_-]+)\s*\}\}")
# Characters left as they are when a redirect target goes into `Location`.
_LOCATION_SAFE = "/:?#[]@!$&'()*+,;=%~"


@dataclass(frozen=True)
class SiteMeta:
    """Per-origin extras from ``_site.json``: response headers and redirects.

    Keys are URL paths as a client requests them, percent-decoded
    (``"/café.html"``, ``"/"`` for the home page).
    """

    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> SiteMeta:
        """Read ``folder/_site.json``; a missing file means no extras.

        Mistakes raise ``ValueError`` at start-up rather than turning into a
        silently wrong demo later.
        """
        path = folder / META_FILE
        if not path.exists():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        unknown = set(data) - {"headers", "redirects"}
        if unknown:
            msg = f"{path}: unknown keys {sorted(unknown)}; expected 'headers' and 'redirects'"
            raise ValueError(msg)
        headers: dict[str, dict[str, str]] = data.get("headers", {})
        redirects: dict[str, str] = data.get("redirects", {})
        for url_path in [*headers, *redirects, *redirects.values()]:
            if not url_path.startswith("/"):
                msg = f"{path}: {url_path!r} must be an absolute URL path starting with '/'"
                raise ValueError(msg)
        return cls(headers=headers, redirects=redirects)


class _OriginServer(ThreadingHTTPServer):
    """One origin: a folder, its metadata and the base URLs of all origins."""

    daemon_threads = True

    def __init__(self, name: str, root: Path, meta: SiteMeta) -> None:
        super().__init__((HOST, 0), _Handler)
        self.name: str = name
        self.root: Path = root.resolve()
        self.meta: SiteMeta = meta
        # Filled in by serve_site() once every origin has its port.
        self.placeholders: dict[str, str] = {}

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _Handler(BaseHTTPRequestHandler):
    """GET/HEAD for static files, with the ``_site.json`` headers and redirects."""

    server: _OriginServer
    server_version = "sitemapgen-demo/1.0"
    sys_version = ""

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def log_message(self, format: str, *args: object) -> None:
        # The default writes every request to stderr, which would drown the
        # crawl log the demo prints.
        logger.debug("%s %s: %s", self.server.name, self.address_string(), format % args)

    def _respond(self, *, send_body: bool) -> None:
        raw_path = urlsplit(self.path).path
        try:
            path = unquote(raw_path, errors="strict")
        except UnicodeDecodeError:
            self._send_not_found(send_body=send_body)
            return

        target = self.server.meta.redirects.get(path)
        if target is not None:
            self._send_redirect(target)
            return

        file = self._resolve(path)
        if file is None:
            self._send_not_found(send_body=send_body)
            return
        if file.is_dir():
            if not path.endswith("/"):
                # Like a real server: `/blog` -> `/blog/`, so relative links
                # inside the index page resolve against the folder.
                self._send_redirect(raw_path + "/", quoted=True)
                return
            file /= "index.html"
            if not file.is_file():
                self._send_not_found(send_body=send_body)
                return
        elif path.endswith("/"):
            self._send_not_found(send_body=send_body)
            return

        body = file.read_bytes()
        if file.suffix == ".html":
            body = self._substitute(body.decode("utf-8")).encode("utf-8")
        self.send_response(HTTPStatus.OK)
        self.send_header(
            "Content-Type", CONTENT_TYPES.get(file.suffix.lower(), DEFAULT_CONTENT_TYPE)
        )
        self.send_header("Content-Length", str(len(body)))
        for name, value in self.server.meta.headers.get(path, {}).items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self._write(body)

    def _resolve(self, path: str) -> Path | None:
        """Map a decoded URL path to a file or folder under the root, or None.

        Refuses `..`/`.` segments, empty segments, backslashes, NUL, hidden
        and `_`-prefixed names (`_site.json` is not content), and anything
        that a symlink would lead outside the root.
        """
        if not path.startswith("/") or "\\" in path or "\x00" in path:
            return None
        segments = path.split("/")[1:]
        if segments and segments[-1] == "":
            segments.pop()  # trailing slash: a folder
        if any(not s or s in {".", ".."} or s.startswith((".", "_")) for s in segments):
            return None
        try:
            resolved = self.server.root.joinpath(*segments).resolve(strict=True)
        except OSError:
            return None
        if not resolved.is_relative_to(self.server.root):
            return None
        return resolved

    def _substitute(self, text: str) -> str:
        placeholders = self.server.placeholders
        return _PLACEHOLDER.sub(lambda m: placeholders.get(m[1], m[0]), text)

    def _send_redirect(self, target: str, *, quoted: bool = False) -> None:
        location = target if quoted else quote(target, safe=_LOCATION_SAFE)
        self.send_response(HTTPStatus.MOVED_PERMANENTLY)
        self.send_header("Location", self.server.base_url + location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send_not_found(self, *, send_body: bool) -> None:
        body = b"<!DOCTYPE html>\n<html><body><h1>404 Not Found</h1></body></html>\n"
        self.send_response(HTTPStatus.NOT_FOUND)
        self.send_header("Content-Type", CONTENT_TYPES[".html"])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self._write(body)

    def _write(self, body: bytes) -> None:
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The client went away (e.g. a crawl being stopped); nothing to do.
            logger.debug("%s: client closed the connection early", self.server.name)


class DemoSite:
    """The running servers of a demo site; use as a context manager or call close()."""

    def __init__(self, servers: dict[str, _OriginServer]) -> None:
        self._servers: dict[str, _OriginServer] = servers
        self._threads: list[threading.Thread] = []
        self._closed: bool = False

    @property
    def urls(self) -> dict[str, str]:
        """Origin name -> base URL without a trailing slash, e.g. ``http://127.0.0.1:53211``."""
        return {name: server.base_url for name, server in self._servers.items()}

    @property
    def ports(self) -> dict[str, int]:
        return {name: int(server.server_address[1]) for name, server in self._servers.items()}

    def url(self, origin: str, path: str = "/") -> str:
        """Absolute URL of ``path`` on ``origin``."""
        return self._servers[origin].base_url + path

    def start(self) -> None:
        for name, server in self._servers.items():
            thread = threading.Thread(
                target=server.serve_forever, name=f"demo-site-{name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def close(self) -> None:
        """Stop every server; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        for server in self._servers.values():
            if self._threads:
                server.shutdown()  # blocks until serve_forever returns
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> DemoSite:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def serve_site(root: Path = SITE_ROOT) -> DemoSite:
    """Start one server per origin folder of ``root`` and return them running.

    Every server is bound before any starts, so each page can already name the
    other origins' ports in its ``{{name}}`` placeholders.
    """
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    if not folders:
        msg = f"{root} has no origin folders (expected e.g. main/ and shop/)"
        raise ValueError(msg)
    servers: dict[str, _OriginServer] = {}
    try:
        for folder in folders:
            servers[folder.name] = _OriginServer(folder.name, folder, SiteMeta.load(folder))
    except BaseException:
        for server in servers.values():
            server.server_close()
        raise
    site = DemoSite(servers)
    placeholders = site.urls
    for server in servers.values():
        server.placeholders = placeholders
    site.start()
    logger.info("Serving %s: %s", root, placeholders)
    return site


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Serve the demo site, one random port per origin, until Ctrl-C."
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=SITE_ROOT,
        help="folder with one sub-folder per origin (default: %(default)s)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(asctime)s %(message)s"
    )

    with serve_site(args.root) as site:
        for name, url in site.urls.items():
            print(f"{name:>8}: {url}/")
        print("Press Ctrl-C to stop.")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
