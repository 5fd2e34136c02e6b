"""Pure URL rules: what a ``<loc>`` looks like (P3), which origin it belongs to (P12), and
how an origin is named on disk.

No Scrapy imports: the extractor, the item pipeline and the offline tools all pass through
here, so the same URL always gets the same ``<loc>`` whatever produced it.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

from .limits import DEFAULT_PORTS, MAX_LOC_LENGTH, URL_SCHEMES

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "Origin",
    "UrlPolicy",
    "UrlRejected",
    "base_url_for",
    "fill_origin",
    "is_normal",
    "is_normal_origin",
    "join_prefix",
    "joined_loc",
    "loc_prefix",
    "normal_directory",
    "normal_join",
    "normalize_loc",
    "origin_folder",
    "origin_key",
    "origin_of",
    "origin_of_root",
]

# A registered name after IDNA (w3lib does the punycode), or an IPv4/IPv6 literal.
_HOST_RE = re.compile(r"^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])$")
# A "%" not followed by two hex digits is not a percent-escape (RFC 3986 2.1): encode it.
_STRAY_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Escapes are upper-cased as RFC 3986 6.2.2.1 normalises them: /caf%c3%a9 and /caf%C3%A9
# are one entry.
_ESCAPE_RE = re.compile(r"%[0-9A-Fa-f]{2}")
# A ";name=value" path parameter (jsessionid's usual place), up to the next ; / or end.
_PATH_PARAM_RE = re.compile(r";([^;/=]*)(?:=[^;/]*)?")
# The characters w3lib leaves unencoded in a path and in a query (no ' in a query), less
# ";" in the path and "%" in both, which the two shapes below treat apart.
_PATH_CHARS = r"A-Za-z0-9\-._~!$&'()*+,=:@/"
_QUERY_CHARS = r"A-Za-z0-9\-._~!$&()*+,;=:@/?"
# A URL already in the form normalize_loc gives: lower-case http(s) scheme and host, no
# default or zero-padded port, only characters w3lib leaves unencoded, no fragment. Most
# URLs Scrapy hands over are like this; they skip the full parse (is_normal).
_CLEAN_RE = re.compile(
    r"(https?)://[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::([1-9][0-9]{0,4}))?"  # scheme, port
    rf"/[{_PATH_CHARS};%]*(?:\?[{_QUERY_CHARS}%]+)?"
)
# A path from the root that, after a normal origin, is already a normal <loc> and already
# its own join (normal_join): the characters of _CLEAN_RE's path and query without "%"
# (its escapes would need checking) and without ";" in the path (a join drops an empty
# ";" parameter), not "//" (a reference to another host); dot segments are checked apart.
_NORMAL_ROOTED_RE = re.compile(rf"/(?!/)[{_PATH_CHARS}]*(?:\?[{_QUERY_CHARS}]+)?")
# A relative path (RFC 3986 4.2: its first segment non-empty, holding no ":") that, after
# a normal directory, is already a normal <loc> and already its own join
# (relative_join): _NORMAL_ROOTED_RE's characters, a first segment not starting with "."
# (a dot segment, or a name that is rare enough to take the long road); "//" and other
# dot segments are checked apart.
_SEGMENT_CHARS = r"A-Za-z0-9\-._~!$&'()*+,=@"  # _PATH_CHARS less ":" and "/"
_NORMAL_RELATIVE_RE = re.compile(
    rf"(?!\.)[{_SEGMENT_CHARS}]+(?:/[{_PATH_CHARS}]*)?(?:\?[{_QUERY_CHARS}]+)?"
)
_BAD_ESCAPE_RE = re.compile(r"%(?![0-9A-F]{2})")
# "scheme://netloc" of a base URL that the URL parser splits without changing: lower-case
# http(s), an ASCII netloc without brackets or stripped characters.
_PLAIN_ORIGIN_RE = re.compile(r"https?://[A-Za-z0-9._~!$&'()*+,;=:@%-]+(?=[/?#]|\Z)")
# Bound once: is_normal and normal_join run for every loc, link and image.
_clean_match = _CLEAN_RE.fullmatch
_rooted_match = _NORMAL_ROOTED_RE.fullmatch
_relative_match = _NORMAL_RELATIVE_RE.fullmatch
_bad_escape = _BAD_ESCAPE_RE.search
# Longest folder name we produce: well under the 255-byte name limit of common file systems.
_MAX_NAME = 120


class UrlRejected(ValueError):
    """A URL that cannot be a ``<loc>``; ``reason`` is the stats qualifier."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(f"{reason}: {url[:200]!r}")
        self.reason = reason
        self.url = url


@dataclass(frozen=True, slots=True, order=True)
class Origin:
    """Scheme, host and port: the unit a sitemap set belongs to (P12).

    ``host`` is lower-case ASCII (IDN hosts in punycode); ``port`` is always explicit, so
    ``http://a/`` and ``http://a:80/`` are one origin.

    Origins order by (scheme, host, port), not by :attr:`root` (the order of the locs and
    of the keys :func:`origin_key` gives): the two differ when a host is another's prefix
    followed by a dot (``example.com`` before ``example.com.br``, whose root sorts first)
    and for ports of different lengths. This order is an output's: the sets are published
    and the close log's first origins (SITEMAPGEN_LOG_ORIGINS) are chosen in it, and the
    SQLite store's ``ORDER BY scheme, host, port`` gives it.
    """

    scheme: str
    host: str
    port: int

    def __reduce__(self) -> tuple[type[Origin], tuple[str, str, int]]:
        # Its fields, made again by __init__: what a slotted dataclass does by default is
        # a Python call each way, and a build's workers send origins back and forth.
        return Origin, (self.scheme, self.host, self.port)

    @property
    def root(self) -> str:
        """``scheme://host[:port]/``, the port only when it is not the scheme's default:
        :func:`origin_key` of each of the origin's locs."""
        netloc = self.host
        if DEFAULT_PORTS.get(self.scheme) != self.port:
            netloc = f"{netloc}:{self.port}"
        return f"{self.scheme}://{netloc}/"

    @property
    def name(self) -> str:
        """The origin's folder name: ``<scheme>_<host>_<port>``.

        Unambiguous because the scheme holds no ``_`` and the port is the digits after the
        last ``_``; safe on POSIX, macOS and Windows because a host holds only
        ``[a-z0-9._-]`` (IPv6 literals get ``-`` for ``:``, which no name host can contain
        inside brackets). Overlong names are cut and suffixed with a hash.
        """
        host = self.host.replace(":", "-")
        name = f"{self.scheme}_{host}_{self.port}"
        if len(name) > _MAX_NAME:
            digest = hashlib.sha256(name.encode()).hexdigest()[:16]
            name = f"{name[: _MAX_NAME - 17 - len(str(self.port)) - 1]}~{digest}_{self.port}"
        return name


def normalize_loc(url: str, encoding: str = "utf-8") -> str:
    """Return ``url`` as a ``<loc>`` value, or raise :class:`UrlRejected`.

    The result is what the server served, percent-encoded per RFC 3986 (non-ASCII as UTF-8
    ``%HH``, ``encoding`` for the query as browsers do, existing escapes kept, so no double
    encoding), the host lower-case and in punycode, the default port and the fragment
    dropped (P3). It is also the dedup key: it is deliberately *not* ``canonicalize_url``,
    whose query sorting can change what the server sees.
    """
    if is_normal(url):  # most URLs: every loc and image of a build comes this way
        return url
    return _normalize_fully(url, encoding)


def is_normal(url: str) -> bool:
    """Whether ``url`` is a ``<loc>`` as it is, so that ``normalize_loc(url)`` is ``url``
    without the full parse: the one rule of the package's "already normal" shortcuts."""
    clean = _clean_match(url)
    # ".." anywhere, not only in the host, sends the rare path with one the long way: the
    # same result, one group() call less on every other URL.
    if clean is None or len(url) > MAX_LOC_LENGTH or ".." in url:
        return False
    port = clean.group(2)
    return (port is None or DEFAULT_PORTS[clean.group(1)] != int(port) <= 65535) and (
        "%" not in url or not _bad_escape(url)
    )


@functools.lru_cache(maxsize=64)
def is_normal_origin(prefix: str) -> bool:
    """Whether ``prefix`` (``scheme://host[:port]``, no slash) starts normal ``<loc>``
    values, as :func:`normal_join` needs. Cached per origin: a crawl's pages share a few."""
    return is_normal(prefix + "/")


def normal_join(prefix: str, path: str) -> str | None:
    """``prefix + path`` when that is both a ``<loc>`` as it is and what joining the path
    from the root ``path`` to any URL of the origin ``prefix`` gives (RFC 3986 5.2), else
    None. ``prefix`` must be ``""`` (then None) or one :func:`is_normal_origin` accepts,
    which a caller checks once for the many paths of a page. Most links and images of a
    page take this road: neither a join nor :func:`normalize_loc` is needed."""
    if (
        prefix
        and _rooted_match(path) is not None
        and "/." not in path  # a dot segment, which a join removes
        and ".." not in path  # as is_normal
        and len(prefix) + len(path) <= MAX_LOC_LENGTH
    ):
        return prefix + path
    return None


def normal_directory(base: str) -> str:
    """What :func:`relative_join` puts before a relative path joined to ``base``: ``base``
    up to the last ``/`` of its path (RFC 3986 5.2.3, "merge"), when ``base`` is a normal
    ``<loc>`` whose path that merge and Python's join take as it is (no dot segment, no
    empty segment, which ``urljoin`` drops, no ``;`` parameter); else ``""``. A caller
    works it out once for the many relative links of a page."""
    if not is_normal(base):
        return ""
    path_end = base.find("?")
    directory = base[: base.rindex("/", 0, len(base) if path_end < 0 else path_end) + 1]
    scheme_end = directory.index("//") + 2
    if "/." in directory or ";" in directory or "//" in directory[scheme_end:]:
        return ""
    return directory


def relative_join(directory: str, path: str) -> str | None:
    """``directory + path`` when that is both a ``<loc>`` as it is and what joining the
    relative path ``path`` (``page.html``, ``img/a.png?v=2``) to a URL of that directory
    gives (RFC 3986 5.2.2: the path merged, no dot segment to remove), else None. Leading
    ``../`` segments each take the directory one folder up, as the join's dot-segment
    removal does (RFC 3986 5.2.4), while there is a folder to go up from.
    ``directory`` must be ``""`` (then None) or :func:`normal_directory`'s. Documentation
    sites and generated HTML link this way: no join nor :func:`normalize_loc` is needed."""
    if not directory:
        return None
    if path.startswith("../"):  # Sphinx's links from a subfolder ("../library/os.html")
        root = directory.index("/", directory.index("//") + 2)
        while path.startswith("../"):
            path = path[3:]
            cut = directory.rfind("/", root, len(directory) - 1)
            if cut < 0:  # above the root, which a join stays at: the long road
                return None
            directory = directory[: cut + 1]
    if (
        _relative_match(path) is not None
        and "/." not in path  # a dot segment, which a join removes
        and ".." not in path  # as is_normal
        and "//" not in path  # an empty segment, which Python's join drops
        and len(directory) + len(path) <= MAX_LOC_LENGTH
    ):
        return directory + path
    return None


def join_prefix(base: str) -> str | None:
    """``scheme://netloc`` of an http(s) ``base``, which urljoin puts before a path from the
    root; None when urljoin must do the work."""
    plain = _PLAIN_ORIGIN_RE.match(base)
    if plain is not None:
        return plain.group()
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def loc_prefix(base: str) -> str:
    """``scheme://host[:port]`` of ``base`` when it is a normal <loc>'s start, else ``""``:
    the ``prefix`` :func:`joined_loc` (and :func:`normal_join`) take, worked out once for
    the many links of a page."""
    prefix = join_prefix(base)
    return prefix if prefix is not None and is_normal_origin(prefix) else ""


def joined_loc(value: str, prefix: str, base: str, directory: str = "") -> str | None:
    """``value`` (an href or src of a page) joined to the page's ``base`` and normalised,
    when it is already a <loc>, a path from the root or a relative path that both steps
    leave as it is: the same string ``normalize_loc(urljoin(base, value.strip()))`` gives,
    without either (nor the page's encoding); None for every other value, which takes the
    long road. ``prefix`` is :func:`loc_prefix` of ``base``, ``directory``
    :func:`normal_directory` of it or ``""`` (no relative shortcut). The shortcuts of the
    page reader, one rule: it runs for every link and image of every page."""
    first = value[:1]
    if first == "/":
        return normal_join(prefix, value)
    if is_normal(value) and (";" not in value or _joined(base, value) == value):
        # A normal URL without ";" (a path parameter, which a join rebuilds) is its own
        # join, whatever the base.
        return value
    if first:
        return relative_join(directory, value)
    return None


def _joined(base: str, value: str) -> str:
    """``urljoin``, ``value`` as it is where the URL parser refuses it."""
    try:
        return urljoin(base, value)
    except ValueError:
        return value


def _normalize_fully(url: str, encoding: str) -> str:
    """:func:`normalize_loc` without its shortcut for URLs already in shape."""
    raw = url.strip()
    if not raw:
        raise UrlRejected("empty_url", url)
    try:
        safe = safe_url_string(raw, encoding=encoding)
        parts = urlsplit(safe)
        port = parts.port
    except ValueError:
        raise UrlRejected("bad_url", url) from None
    scheme = parts.scheme.lower()
    if scheme not in URL_SCHEMES:
        raise UrlRejected("bad_scheme", url)
    if port == 0:  # no server listens on port 0 (RFC 6335); "http://h:0/" names nothing
        raise UrlRejected("bad_url", url)
    if parts.username is not None or parts.password is not None:
        # Credentials in a published file are a leak, and the page without them may differ.
        raise UrlRejected("userinfo", url)
    host = (parts.hostname or "").lower()
    if "[" in parts.netloc:
        host = f"[{host}]"
    if not host or not _HOST_RE.match(host):
        raise UrlRejected("bad_host", url)
    netloc = host if port is None or port == DEFAULT_PORTS[scheme] else f"{host}:{port}"
    path = _escapes(parts.path) or "/"
    query = _escapes(parts.query)
    loc = urlunsplit((scheme, netloc, path, query, ""))
    if len(loc) > MAX_LOC_LENGTH:
        raise UrlRejected("url_too_long", url)
    return loc


def _escapes(component: str) -> str:
    component = _STRAY_PERCENT_RE.sub("%25", component)
    return _ESCAPE_RE.sub(lambda m: m.group().upper(), component)


_ORIGIN_RE = re.compile(r"(https?)://([^/:\[]+|\[[^\]]+\])(?::(\d+))?/")


def origin_key(loc: str) -> str:
    """The root of a normal ``loc`` (``scheme://host[:port]/``, :attr:`Origin.root` of
    :func:`origin_of`): the key a store files it under, a prefix of the loc, so keys sort
    as their locs do."""
    # The scheme's "//" ends before index 8, and a normal loc's host and port hold no "/".
    return loc[: loc.index("/", 8) + 1]


def origin_of(loc: str) -> Origin:
    """The :class:`Origin` of a ``<loc>`` produced by :func:`normalize_loc`."""
    match = _ORIGIN_RE.match(loc)
    if match is not None:  # what normalize_loc produces: no need for the full split
        return _origin_at(match.group())
    parts = urlsplit(loc)
    host = parts.hostname or ""
    if "[" in parts.netloc:
        host = f"[{host}]"
    port = parts.port if parts.port is not None else DEFAULT_PORTS[parts.scheme]
    return Origin(parts.scheme, host, port)


@functools.lru_cache(maxsize=4096)
def _origin_at(root: str) -> Origin:
    """One :class:`Origin` per root (``https://host[:port]/``): a crawl records a few
    origins a million times, and making a frozen dataclass costs more than a lookup."""
    match = _ORIGIN_RE.match(root)
    assert match is not None
    return _made(*match.groups())


def origin_of_root(root: str) -> Origin:
    """:func:`origin_of` of a root (``https://host[:port]/``), made anew each time: the
    offline build makes each of a broad crawl's origins once per pass over its store's
    keys, where :func:`origin_of`'s cache would miss every time and evict a crawl's few
    origins."""
    match = _ORIGIN_RE.match(root)
    if match is None or match.end() != len(root):
        return origin_of(root)
    return _made(*match.groups())


def _made(scheme: str, host: str, port: str | None) -> Origin:
    # One scheme string and one number per port for every origin, not a copy each.
    return Origin(sys.intern(scheme), host, _port(port) if port else DEFAULT_PORTS[scheme])


@functools.lru_cache(maxsize=1024)
def _port(digits: str) -> int:
    return int(digits)


def fill_origin(template: str, origin: Origin) -> str:
    """Fill the ``%(scheme)s``, ``%(host)s``, ``%(port)s`` and ``%(origin)s`` placeholders
    (printf style, as Scrapy's FEEDS URIs); raises ``KeyError``/``ValueError`` on others."""
    return template % {
        "scheme": origin.scheme,
        "host": origin.host,
        "port": origin.port,
        "origin": origin.name,
    }


def origin_folder(template: str, origin: Origin) -> str:
    """Where one origin's files go: the filled template when it has placeholders, else
    the origin's own folder (its :attr:`Origin.name`) inside the template."""
    if "%(" in template:
        return fill_origin(template, origin)
    return f"{template.rstrip('/')}/{origin.name}"


def base_url_for(template: str, origin: Origin) -> str:
    """The folder URL an origin's files are published under (P13 when on another host),
    normalised like a ``<loc>`` since it becomes the start of the index's ``<loc>`` values.
    Raises :class:`UrlRejected` when the filled template is no valid URL."""
    if not template:
        return origin.root
    folder = normalize_loc(fill_origin(template, origin))
    return folder if folder.endswith("/") else f"{folder}/"


@functools.lru_cache(maxsize=8)
def _params_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """Finds any of ``names`` as a query or ``;path`` parameter name: most locs have none,
    and then the full split is skipped."""
    alternatives = "|".join(sorted(re.escape(name) for name in names))
    return re.compile(rf"[?&;](?:{alternatives})(?:[=&;/#]|$)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class UrlPolicy:
    """The site-wide URL rules of a crawl, applied to every ``<loc>`` and every URL a page
    is compared with (canonical, refresh target, alternates), so the comparisons see the
    URL the sitemap would list.

    ``strip_params`` are lower-case query (and ``;name=`` path) parameter names to remove,
    session ids by default (G4); ``host_aliases`` map a host spelling to the one the site
    uses (G3); ``allow``/``deny`` are regular expressions searched in the final loc;
    ``origin_map`` puts the URLs of a crawled staging or build server in production terms
    (:meth:`mapped`), applied last, so that every comparison and everything written after
    works with production URLs, and :meth:`crawl_url` gives back the URL to fetch.
    """

    strip_params: frozenset[str] = frozenset()
    host_aliases: Mapping[str, str] = field(default_factory=dict)
    allow: tuple[re.Pattern[str], ...] = ()
    deny: tuple[re.Pattern[str], ...] = ()
    #: SITEMAPGEN_ORIGIN_MAP: (crawl prefix, production prefix) pairs, both normal and
    #: ending in "/", no crawl prefix under another, longest crawl prefix first.
    origin_map: tuple[tuple[str, str], ...] = ()
    # The crawl prefixes and the production prefixes, as str.startswith takes them: a loc
    # outside every prefix (most, on a map of a few) is known so in one call.
    _crawl_starts: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _production_starts: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _inverse: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Frozen: set through object.__setattr__, once.
        object.__setattr__(self, "_crawl_starts", tuple(crawl for crawl, _ in self.origin_map))
        inverse = sorted(((p, c) for c, p in self.origin_map), key=lambda pair: -len(pair[0]))
        object.__setattr__(self, "_inverse", tuple(inverse))
        object.__setattr__(self, "_production_starts", tuple(p for p, _ in inverse))

    def loc(self, url: str, encoding: str = "utf-8") -> str:
        """:func:`normalize_loc`, then session parameters stripped, the host aliased and
        the crawl prefix replaced by the production one (:meth:`mapped`)."""
        return self.loc_from_normalized(normalize_loc(url, encoding))

    def loc_from_normalized(self, loc: str) -> str:
        """:meth:`loc` of a URL already normalised: session parameters stripped, the host
        aliased and the crawl prefix mapped, in that order (the map's prefixes are the
        site's own URLs, as the other rules leave them)."""
        if not self.host_aliases and (
            not self.strip_params
            or ("?" not in loc and ";" not in loc)  # no parameter at all: most locs
            # %-escaped names ("%73id") are matched after unquoting, by the full split
            or ("%" not in loc and not _params_pattern(self.strip_params).search(loc))
        ):
            return self.mapped(loc) if self._crawl_starts else loc
        scheme, netloc, path, query, _ = urlsplit(loc)
        if self.strip_params:
            path = _PATH_PARAM_RE.sub(
                lambda m: "" if unquote(m.group(1)).lower() in self.strip_params else m.group(),
                path,
            )
            query = "&".join(
                pair
                for pair in query.split("&")
                if pair and unquote(pair.split("=", 1)[0]).lower() not in self.strip_params
            )
        if self.host_aliases:
            split = netloc.index("]") + 1 if netloc.startswith("[") else netloc.find(":")
            host, port = (netloc[:split], netloc[split:]) if split > 0 else (netloc, "")
            alias = self.host_aliases.get(host)
            if alias is not None:
                netloc = alias + port
        loc = urlunsplit((scheme, netloc, path, query, ""))
        return self.mapped(loc) if self._crawl_starts else loc

    def media_loc(self, url: str, encoding: str = "utf-8") -> str:
        """An image's or a video's URL as written: :func:`normalize_loc`, then
        :meth:`mapped` (a medium on a mapped origin is served from production too); no
        parameter stripped nor host aliased, as a page's URL would be."""
        loc = normalize_loc(url, encoding)
        return self.mapped(loc) if self._crawl_starts else loc

    def mapped(self, loc: str) -> str:
        """A normal ``loc`` in production terms: the crawl prefix of SITEMAPGEN_ORIGIN_MAP
        it lies under replaced by its production prefix; ``loc`` itself when it lies under
        none. Raises :class:`UrlRejected` when the result is too long for a ``<loc>`` (P3)."""
        if not loc.startswith(self._crawl_starts):  # also the empty map's answer
            return loc
        for crawl, production in self.origin_map:
            if loc.startswith(crawl):
                loc = production + loc[len(crawl) :]
                if len(loc) > MAX_LOC_LENGTH:
                    raise UrlRejected("url_too_long", loc)
                break
        return loc

    def crawl_url(self, loc: str) -> str:
        """The URL the crawl fetched for a ``loc`` in production terms (:meth:`mapped`'s
        inverse): what the crawled server's robots.txt is asked about, and where the audit
        fetches a listed URL the crawl never reached. A loc under no
        production prefix is its own; of two crawl prefixes mapped to one production
        prefix, the one listed first in :attr:`origin_map` answers."""
        if not loc.startswith(self._production_starts):
            return loc
        for production, crawl in self._inverse:
            if loc.startswith(production):
                return crawl + loc[len(production) :]
        return loc  # pragma: no cover - startswith found one

    def refusal(self, loc: str) -> str | None:
        """``"denied"`` or ``"not_allowed"`` when the patterns keep ``loc`` out, else None."""
        if self.deny and any(pattern.search(loc) for pattern in self.deny):
            return "denied"
        if self.allow and not any(pattern.search(loc) for pattern in self.allow):
            return "not_allowed"
        return None
