"""What a page's HTML and headers declare: JSON-LD, robots directives, canonical and refresh
targets, images, videos, hreflang alternates and modification dates.

Pure readers over the parsel selector Scrapy already cached for the response, so the page is
parsed once and shared with the spider. The elements they look at are gathered in one walk
of that tree (:class:`PageNodes`), which a caller reading several facts of one page builds
once and passes to every reader. No Scrapy imports, so the offline tools can reuse
them. They only *read*: URLs come back as ``urljoin(base, value.strip())`` and text and
dates come back raw, because the caller runs every URL through :func:`urls.normalize_loc`
and every date through :func:`facts.parse_lastmod`, and counts what those reject. The pages
are written by strangers, so nothing here raises on broken markup, bad JSON or odd values.
A value that cannot be read is left out.
"""

from __future__ import annotations

import json
import re
import string
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from parsel import Selector

__all__ = [
    "PageNodes",
    "absolute",
    "alternate_sources",
    "alternates",
    "canonical_urls",
    "header_alternate_sources",
    "image_sources",
    "image_urls",
    "iso8601_duration",
    "join_prefix",
    "json_ld",
    "media_url",
    "page_dates",
    "parse_link_header",
    "parse_srcset",
    "refresh_url",
    "robots_directives",
    "videos",
]

# HTML compares keywords (rel, http-equiv, type, ...) ASCII case-insensitively. str.lower()
# would also fold non-ASCII letters, so U+212A KELVIN SIGN would read as "k".
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# HTML's "ASCII whitespace" (no NBSP, no vertical tab): what separates rel tokens and
# srcset candidates.
_HTML_SPACE_RE = re.compile(r"[\t\n\f\r ]+")

_LD_MEDIA_TYPE = "application/ld+json"

# URLs that name no fetchable resource: inline data, script, in-memory objects.
_UNFETCHABLE_SCHEMES = frozenset({"data", "javascript", "blob", "about"})

# Robots directives that carry a value after a colon, which must not be read as a
# user-agent prefix ("max-snippet: 20" is not a rule for a crawler named max-snippet).
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_DIRECTIVE_NAME_RE = re.compile(r"[a-z][a-z0-9_-]*\Z")
# "<user agent>: <rest>" at the start of an X-Robots-Tag list item. Crawler names hold no
# spaces, so the "25-Jun-10 15:00:00" half of a comma-split date never matches.
_UA_PREFIX_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*)[\t ]*:(.*)\Z", re.DOTALL)

# RFC 9110 5.6.2 token characters: a Link header parameter name.
_TOKEN_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_OWS_RE = re.compile(r"[\t ]*")
_LINK_GAP_RE = re.compile(r"[\t ,]*")
# RFC 9110 5.6.4 quoted-string body, after the opening quote; an unterminated one runs to
# the end of the value.
_QUOTED_RE = re.compile(r'([^"\\]*(?:\\.[^"\\]*)*)"?', re.DOTALL)
_QUOTED_PAIR_RE = re.compile(r"\\(.)", re.DOTALL)
# An unquoted parameter value: RFC 8288 says token, servers send more (spaces, slashes).
_BARE_VALUE_RE = re.compile(r"[^;,]*")

# HTML "parse a srcset attribute": the pieces of the candidate tokenizer.
_SRCSET_GAP_RE = re.compile(r"[\t\n\f\r ,]*")
_SRCSET_SPACE_RE = re.compile(r"[\t\n\f\r ]*")
_SRCSET_URL_RE = re.compile(r"[^\t\n\f\r ]+")
# One descriptor: runs to whitespace or a comma, except inside parentheses.
_SRCSET_DESCRIPTOR_RE = re.compile(r"(?:[^\t\n\f\r ,(]+|\([^)]*\)?)+")
# The common shape, read without the tokenizer (same result): candidates of a URL without
# commas and at most one plainly valid descriptor ("480w", "1.5x"), each comma after
# whitespace or a descriptor (a comma right after the URL belongs to it, or ends it).
_PLAIN_SRCSET_RE = re.compile(
    r"[\t\n\f\r ]*(?:[^\t\n\f\r ,]+(?:"
    r"[\t\n\f\r ]+(?:(?:[1-9][0-9]*w|(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)x)[\t\n\f\r ]*)?"
    r",[\t\n\f\r ]*(?=[^\t\n\f\r ,])"
    r"|(?:[\t\n\f\r ]+(?:(?:[1-9][0-9]*w|(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)x)[\t\n\f\r ]*)?)?\Z))*"
)
_PLAIN_SRCSET_URL_RE = re.compile(r"(?:^|,)[\t\n\f\r ]*([^\t\n\f\r ,]+)")
_HTML_INTEGER_RE = re.compile(r"[0-9]+\Z")
_HTML_FLOAT_RE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")

# URLs urljoin() gives back unchanged, or (rooted) after the base's "scheme://netloc": no
# character the URL parser strips (C0, space, tab, newline), no ";" path parameters, no
# empty query, no fragment; a rooted path also holds no dot segment (checked apart).
_PLAIN_ABSOLUTE_RE = re.compile(
    r"https?://[^\x00-\x20\x7f\\/?#]+(?:/[^\x00-\x20\x7f\\;?#]*)?(?:\?[^\x00-\x20\x7f\\#]+)?"
)
# "scheme://netloc" of a base URL that the URL parser splits without changing: lower-case
# http(s), an ASCII netloc without brackets or stripped characters.
_PLAIN_ORIGIN_RE = re.compile(r"https?://[A-Za-z0-9._~!$&'()*+,;=:@%-]+(?=[/?#]|\Z)")
_PLAIN_ROOTED_RE = re.compile(r"/(?![/\\])[^\x00-\x20\x7f\\;?#]*(?:\?[^\x00-\x20\x7f\\#]+)?")

# Meta refresh content: the time, and the optional "url =" before the URL (HTML standard,
# shared declarative refresh steps); group 1 is set only when the "=" is there.
_DIGITS_RE = re.compile(r"[0-9]*")
_REFRESH_URL_PREFIX_RE = re.compile(r"[Uu](?:[Rr](?:[Ll][\t\n\f\r ]*(=)?)?)?")

# PnDTnHnMnS. Components are capped at 18 digits: no video lasts 10^18 days, and the cap
# keeps int() clear of Python's 4,300-digit conversion limit.
_DURATION_RE = re.compile(
    r"P(?:(\d{1,18})D)?"
    r"(?:T(?=\d)(?:(\d{1,18})H)?(?:(\d{1,18})M)?(?:(\d{1,18})(?:[.,](\d+))?S)?)?\Z",
    re.IGNORECASE,
)

# File extensions that make an og:video URL the media file itself rather than a player page.
_VIDEO_FILE_EXTENSIONS = (
    ".mp4", ".webm", ".ogv", ".ogg", ".mov", ".m4v", ".mkv",
    ".avi", ".wmv", ".flv", ".mpg", ".mpeg", ".m3u8", ".mpd",
)  # fmt: skip


# The only elements the readers look at.
_READ_TAGS = ("link", "meta", "script", "img", "source", "video", "time")


# --- the page's elements ------------------------------------------------------------------


class PageNodes:
    """The elements of one parsed page that the readers look at, in document order, gathered
    in a single walk of the tree instead of one XPath query per reader.

    Each list holds what the XPath named beside it selects, as lxml elements (no parsel
    wrappers, which cost more than the walk itself). Build it once per page and pass it to
    every reader; a reader given a plain selector builds its own. It is a snapshot: a tree
    changed later is not seen.
    """

    __slots__ = ("_og", "_rels", "images", "itemprops", "links", "metas", "scripts", "videos")

    def __init__(self, selector: Selector) -> None:
        #: ``//link[@rel]``, and the lower-case ``rel`` of each
        self.links: list[Any] = []
        self._rels: list[str] = []
        #: ``//meta``
        self.metas: list[Any] = []
        #: ``//script[@type]``
        self.scripts: list[Any] = []
        #: ``//img | //picture//source | //meta[@property][@content]``
        self.images: list[Any] = []
        #: ``//video``
        self.videos: list[Any] = []
        #: ``//meta[@itemprop] | //time[@itemprop]``
        self.itemprops: list[Any] = []
        self._og: dict[str, list[str]] | None = None
        for element in _document_elements(selector.root):
            tag = element.tag
            get = element.get
            if tag == "meta":
                self.metas.append(element)
                if get("property") is not None and get("content") is not None:
                    self.images.append(element)
                if get("itemprop") is not None:
                    self.itemprops.append(element)
            elif tag == "link":
                rel = get("rel")
                if rel is not None:
                    self.links.append(element)
                    self._rels.append(rel.translate(_ASCII_LOWER))
            elif tag == "img":
                self.images.append(element)
            elif tag == "source":
                # libxml2 does not know <source> as a void element, so a run of <source>
                # tags nests: hence any <picture> ancestor, not only the parent.
                if next(element.iterancestors("picture"), None) is not None:
                    self.images.append(element)
            elif tag == "script":
                if get("type") is not None:
                    self.scripts.append(element)
            elif tag == "video":
                self.videos.append(element)
            elif get("itemprop") is not None:  # <time>
                self.itemprops.append(element)

    @property
    def open_graph(self) -> dict[str, list[str]]:
        """``<meta property content>`` values by lower-case property, in document order."""
        if self._og is None:
            og: dict[str, list[str]] = {}
            for element in self.metas:
                prop, content = element.get("property"), element.get("content")
                if prop is not None and content is not None:
                    og.setdefault(prop.strip().translate(_ASCII_LOWER), []).append(content)
            self._og = og
        return self._og


def _document_elements(root: Any) -> Iterator[Any]:
    """Every element named in ``_READ_TAGS`` in the document of ``root``, in document order,
    as ``//tag`` finds them. libxml2 can leave more than one top-level element (markup after
    ``</html>`` gets an ``<html>`` of its own), so the walk covers every one."""
    if root.getparent() is None and root.getprevious() is None and root.getnext() is None:
        return root.iter(*_READ_TAGS)  # type: ignore[no-any-return]  # the usual: one root
    top = root.getroottree().getroot()
    tops = [*reversed(list(top.itersiblings(preceding=True))), top, *top.itersiblings()]
    return chain.from_iterable(element.iter(*_READ_TAGS) for element in tops)


def _nodes(source: Selector | PageNodes) -> PageNodes:
    return source if isinstance(source, PageNodes) else PageNodes(source)


# --- JSON-LD ------------------------------------------------------------------------------


def json_ld(selector: Selector | PageNodes) -> tuple[list[Any], int]:
    """The parsed JSON-LD blocks of the page, in document order, and how many were not JSON.

    Takes every ``<script type="application/ld+json">``, with the type matched
    ASCII-case-insensitively and media type parameters ignored. The JSON may be wrapped in
    whitespace, an HTML comment or a CDATA section, which old templates add to hide it from
    pre-HTML5 parsers. An empty block counts as invalid. Each block comes back as parsed,
    whatever its shape (object, list, even a bare number). The count lets the caller report
    pages whose structured data search engines will ignore.
    """
    blocks: list[Any] = []
    invalid = 0
    for element in _nodes(selector).scripts:
        media_type = element.attrib.get("type", "").split(";", 1)[0]
        if media_type.strip().translate(_ASCII_LOWER) != _LD_MEDIA_TYPE:
            continue
        text = _unwrap_script("".join(element.xpath("text()", smart_strings=False)))
        try:
            blocks.append(json.loads(text))
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested too deep
            invalid += 1
    return blocks, invalid


def _unwrap_script(text: str) -> str:
    text = text.strip()
    for opening, closing in (("<!--", "-->"), ("<![CDATA[", "]]>")):
        if text.startswith(opening):
            text = text[len(opening) :]
        if text.endswith(closing):
            text = text[: -len(closing)]
        text = text.strip()
    return text


def _ld_objects(ld: list[Any]) -> Iterator[dict[str, Any]]:
    """Every JSON object in ``ld`` at any depth (``@graph``, lists, property values), in
    document order. Iterative: a block nested nearly to the recursion limit still parsed."""
    stack: list[Any] = [ld]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            yield value
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))


def _has_type(obj: dict[str, Any], name: str) -> bool:
    """Whether ``@type`` (a string or a list) names ``name``, bare or as a
    ``schema:``/``https://schema.org/`` IRI."""
    types = obj.get("@type")
    for value in types if isinstance(types, list) else [types]:
        if isinstance(value, str) and re.split(r"[/:#]", value.strip())[-1] == name:
            return True
    return False


def _ld_text(value: Any) -> str | None:
    """A string property: a string, a ``{"@value": ...}`` value object, or the first such item
    of a list; whitespace collapsed."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            item = item.get("@value")
        if isinstance(item, str):
            text = _collapse(item)
            if text:
                return text
    return None


def _ld_url(value: Any, base: str) -> str | None:
    """A URL property: a string, a ``{"url": ...}`` object (ImageObject), or the first usable
    item of a list."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            item = item.get("url")
        if isinstance(item, str):
            url = media_url(base, item)
            if url is not None:
                return url
    return None


# --- robots -------------------------------------------------------------------------------


def robots_directives(
    selector: Selector | PageNodes, x_robots_tag: list[str], user_agents: Collection[str]
) -> frozenset[str]:
    """The lower-case robots directives that apply to a generic crawler or to one of the
    named ``user_agents`` (lower-case names such as ``{"googlebot"}``).

    Reads ``<meta name="robots">``, ``<meta name="<ua>">`` for each named agent (names
    matched case-insensitively) and every ``X-Robots-Tag`` value. A header value is a comma
    list; an item prefixed ``<ua>:`` applies, with the items after it, only when that agent
    is named. ``unavailable_after``, ``max-snippet``, ``max-image-preview`` and
    ``max-video-preview`` carry values after a colon and are no prefixes. For a valued
    directive only the name is kept. ``none`` is returned as written, not expanded. Items
    that are not directive names (such as the second half of a date split at its comma) are
    dropped.
    """
    named = _lower_names(frozenset(user_agents))  # a frozenset is returned as it is
    directives: set[str] = set()
    for element in _nodes(selector).metas:
        name, content = element.get("name"), element.get("content")
        if name is None or content is None:
            continue
        name = name.strip().translate(_ASCII_LOWER)
        if name == "robots" or name in named:
            for item in content.split(","):
                directive = _directive_name(item)
                if directive is not None:
                    directives.add(directive)
    for value in x_robots_tag:
        agent: str | None = None  # None: the items so far apply to every crawler
        for item in value.split(","):
            prefix = _user_agent_prefix(item)
            if prefix is not None:
                agent, item = prefix
            if agent is not None and agent not in named:
                continue
            directive = _directive_name(item)
            if directive is not None:
                directives.add(directive)
    return frozenset(directives)


@lru_cache(maxsize=16)
def _lower_names(user_agents: frozenset[str]) -> frozenset[str]:
    """The crawler names ASCII-lower-cased, once per set: the crawl passes the same one for
    every page."""
    return frozenset(agent.translate(_ASCII_LOWER) for agent in user_agents)


def _directive_name(item: str) -> str | None:
    name = item.split(":", 1)[0].strip().translate(_ASCII_LOWER)
    return name if _DIRECTIVE_NAME_RE.match(name) else None


def _user_agent_prefix(item: str) -> tuple[str, str] | None:
    """``(agent, rest)`` when ``item`` starts with a user-agent prefix. A known valued
    directive is no prefix; neither is a name followed by something that is no directive
    (``max-foo: 5``), which is more likely an unknown valued directive."""
    match = _UA_PREFIX_RE.match(item.strip()) if ":" in item else None
    if match is None:
        return None
    agent = match.group(1).translate(_ASCII_LOWER)
    rest = match.group(2)
    if agent in _VALUED_DIRECTIVES:
        return None
    if rest.strip() and _directive_name(rest) is None:
        return None
    return agent, rest


# --- links: canonical, alternates, Link headers ------------------------------------------


def parse_link_header(values: list[str]) -> list[tuple[str, dict[str, str]]]:
    """RFC 8288 ``Link`` header values as ``[(uri_reference, {param: value})]``.

    Parameter names are lower-cased, quoted values unquoted (RFC 9110 quoted-pairs
    undone), and a parameter without a value maps to ``""``. When a parameter repeats, the
    first one wins, as RFC 8288 3.3 requires for ``rel``. A value may hold several links
    separated by commas; commas inside ``<...>`` and quoted strings do not split. A
    link-value that does not start with ``<uri>`` is skipped up to the next comma, and so is
    a malformed parameter up to the next ``;`` or ``,``, so one typo loses as little as
    possible.
    """
    links: list[tuple[str, dict[str, str]]] = []
    for value in values:
        _parse_link_value(value, links)
    return links


def _parse_link_value(text: str, links: list[tuple[str, dict[str, str]]]) -> None:
    end = len(text)
    pos = 0
    while True:
        pos = _match_end(_LINK_GAP_RE, text, pos)
        if pos >= end:
            return
        if text[pos] != "<":
            pos = _skip_to(text, pos, ",")
            continue
        close = text.find(">", pos + 1)
        if close < 0:
            return  # an unterminated target swallows the rest of the value
        uri = text[pos + 1 : close].strip()
        pos = close + 1
        params: dict[str, str] = {}
        while True:
            pos = _match_end(_OWS_RE, text, pos)
            if pos >= end or text[pos] == ",":
                break
            if text[pos] != ";":
                pos = _skip_to(text, pos, ";,")
                continue
            pos = _match_end(_OWS_RE, text, pos + 1)
            name = _TOKEN_RE.match(text, pos)
            if name is None:
                pos = _skip_to(text, pos, ";,")
                continue
            pos = _match_end(_OWS_RE, text, name.end())
            param_value = ""
            if pos < end and text[pos] == "=":
                pos = _match_end(_OWS_RE, text, pos + 1)
                if pos < end and text[pos] == '"':
                    quoted = _QUOTED_RE.match(text, pos + 1)
                    assert quoted is not None  # the pattern matches the empty string
                    param_value = _QUOTED_PAIR_RE.sub(r"\1", quoted.group(1))
                    pos = quoted.end()
                else:
                    bare = _BARE_VALUE_RE.match(text, pos)
                    assert bare is not None  # the pattern matches the empty string
                    param_value = bare.group().strip()
                    pos = bare.end()
            params.setdefault(name.group().translate(_ASCII_LOWER), param_value)
        links.append((uri, params))


def _match_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    match = pattern.match(text, pos)
    return pos if match is None else match.end()


def _skip_to(text: str, pos: int, stops: str) -> int:
    """The position of the next ``stops`` character at or after ``pos`` that is outside
    quotes and ``<...>``, or the end. Always moves past ``pos`` unless ``pos`` is a stop."""
    end = len(text)
    while pos < end:
        char = text[pos]
        if char in stops:
            return pos
        if char == '"':
            quoted = _QUOTED_RE.match(text, pos + 1)
            pos = pos + 1 if quoted is None else max(quoted.end(), pos + 1)
        elif char == "<":
            close = text.find(">", pos + 1)
            pos = end if close < 0 else close + 1
        else:
            pos += 1
    return end


def _header_links(link_headers: list[str], rel: str) -> Iterator[tuple[str, dict[str, str]]]:
    """Header links with ``rel`` among their relation types whose context is this page.
    An ``anchor`` parameter moves the context to another resource (RFC 8288 3.2)."""
    for uri, params in parse_link_header(link_headers):
        if params.get("anchor", "").strip():
            continue
        if rel in _rel_tokens(params.get("rel", "")):
            yield uri, params


def _rel_tokens(value: str) -> set[str]:
    return set(_HTML_SPACE_RE.split(value.translate(_ASCII_LOWER)))


def _page_links(nodes: PageNodes, rel: str) -> Iterator[Any]:
    """Each ``<link>`` element with ``rel`` among its (case-insensitive) rel tokens."""
    for value, element in zip(nodes._rels, nodes.links):
        if value == rel or (rel in value and rel in _HTML_SPACE_RE.split(value)):
            yield element


def canonical_urls(
    selector: Selector | PageNodes, link_headers: list[str], base: str, url: str
) -> list[str]:
    """Every canonical URL the page declares: the hrefs of ``<link rel="canonical">`` in
    document order, resolved against ``base``, then the ``rel=canonical`` targets of
    ``Link`` headers, resolved against ``url``, the response's (final) URL: RFC 8288 3.1
    resolves a header's target against the request's URL, and a ``<base href>`` in the body
    does not apply to headers.

    All are returned, duplicates included, so the caller can tell one consistent canonical
    from conflicting ones (which search engines then ignore). Empty hrefs are dropped.
    """
    found: list[str] = []
    for link in _page_links(_nodes(selector), "canonical"):
        target = absolute(base, link.get("href", ""))
        if target is not None:
            found.append(target)
    if link_headers:
        for uri, _params in _header_links(link_headers, "canonical"):
            target = absolute(url, uri)
            if target is not None:
                found.append(target)
    return found


def alternates(
    selector: Selector | PageNodes, link_headers: list[str], base: str, url: str
) -> list[tuple[str, str]]:
    """``(hreflang, absolute href)`` pairs for the page's language versions (G6).

    Sources are ``<link rel="alternate" hreflang href>`` (rel token matched
    case-insensitively), resolved against ``base``, then ``Link`` headers with
    ``rel="alternate"`` and a ``hreflang`` parameter, resolved against ``url`` (RFC 8288
    3.1, as in :func:`canonical_urls`). First occurrence wins for duplicates. ``hreflang``
    is stripped but otherwise returned as written (``x-default``, ``en-GB``), since
    validating it is the caller's job, and so is counting an empty one. Pairs without an
    href are dropped.
    """
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    sources = [(alternate_sources(selector), base), (header_alternate_sources(link_headers), url)]
    for found, against in sources:
        for hreflang, href in found:
            lang = hreflang.strip()
            target = absolute(against, href)
            if target is not None and (lang, target) not in seen:
                seen.add((lang, target))
                pairs.append((lang, target))
    return pairs


def alternate_sources(selector: Selector | PageNodes) -> list[tuple[str, str]]:
    """The ``(hreflang, href)`` values of the page's ``<link rel="alternate" hreflang>``
    elements, as written, repeats included: what :func:`alternates` resolves against the
    base."""
    return [  # no hreflang attribute at all: another kind of alternate (a feed, a print view)
        (hreflang, link.get("href", ""))
        for link in _page_links(_nodes(selector), "alternate")
        if (hreflang := link.get("hreflang")) is not None
    ]


def header_alternate_sources(link_headers: list[str]) -> list[tuple[str, str]]:
    """The ``(hreflang, target)`` values of ``Link: <target>; rel=alternate; hreflang=…``
    headers, as written, repeats included: what :func:`alternates` resolves against the
    response URL."""
    if not link_headers:
        return []
    return [
        (params["hreflang"], uri)
        for uri, params in _header_links(link_headers, "alternate")
        if "hreflang" in params
    ]


# --- meta refresh -------------------------------------------------------------------------


def refresh_url(selector: Selector | PageNodes, base: str) -> str | None:
    """The absolute target of ``<meta http-equiv="refresh" content="5; url=/x">``, or
    ``None`` when the page has no refresh or only a plain reload.

    Parses ``content`` with the HTML standard's "shared declarative refresh steps", so it
    accepts what browsers accept (``0;url=x``, ``0; URL='x'``, ``0, url=x``, ``0;x``,
    ``.5;x``). As in a browser, the first refresh that parses is the one that counts; an
    unparsable one is passed over.
    """
    for element in _nodes(selector).metas:
        http_equiv, content = element.get("http-equiv"), element.get("content")
        if http_equiv is None or content is None:
            continue
        if http_equiv.strip().translate(_ASCII_LOWER) != "refresh":
            continue
        target = _refresh_target(content)
        if target is None:
            continue
        if not target:
            return None  # a reload of the page itself
        try:
            return urljoin(base, target)
        except ValueError:
            continue  # the URL parser fails: the browser ignores this refresh
    return None


def _refresh_target(content: str) -> str | None:
    """The raw URL of a refresh ``content``: ``""`` for a reload, ``None`` when invalid."""
    text = content.lstrip("\t\n\f\r ")
    time_end = _match_end(_DIGITS_RE, text, 0)
    if time_end == 0 and not text.startswith("."):
        return None
    rest = text[time_end:].lstrip("0123456789.")
    if rest and rest[0] not in ";,\t\n\f\r ":
        return None
    rest = rest.lstrip("\t\n\f\r ")
    if rest[:1] in (";", ","):
        rest = rest[1:]
    rest = rest.lstrip("\t\n\f\r ")
    url = rest
    prefix = _REFRESH_URL_PREFIX_RE.match(rest)
    if prefix is None or not prefix.group():
        url = _strip_quotes(rest)  # no "url=": straight to "skip quotes"
    elif prefix.group(1):
        url = _strip_quotes(rest[prefix.end() :].lstrip("\t\n\f\r "))
    # else "u", "ur" or "url" without "=": the whole remainder is the URL (the spec's
    # jump to "parse").
    return url.strip()


def _strip_quotes(text: str) -> str:
    if text[:1] in ("'", '"'):
        quote, text = text[0], text[1:]
        text = text.split(quote, 1)[0]
    return text


# --- images -------------------------------------------------------------------------------


def parse_srcset(value: str) -> list[str]:
    """The URLs of a ``srcset`` attribute, parsed as the HTML standard's "parse a srcset
    attribute" does.

    A URL runs to the next whitespace, and trailing commas end it, so image-CDN URLs with
    commas (``/w_100,h_100/x.jpg``) stay whole. Descriptors (``1x``, ``300w``, ``1.5x``)
    are skipped. Like the browser, a candidate with invalid descriptors (``2x 3x``,
    ``0w``) is dropped, because no browser would load its image.
    """
    if _PLAIN_SRCSET_RE.fullmatch(value) is not None:
        return _PLAIN_SRCSET_URL_RE.findall(value)
    urls: list[str] = []
    end = len(value)
    pos = 0
    while True:
        pos = _match_end(_SRCSET_GAP_RE, value, pos)
        if pos >= end:
            return urls
        url_match = _SRCSET_URL_RE.match(value, pos)
        assert url_match is not None  # value[pos] is not whitespace
        url, pos = url_match.group(), url_match.end()
        descriptors: list[str] = []
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            while True:
                pos = _match_end(_SRCSET_SPACE_RE, value, pos)
                if pos >= end:
                    break
                if value[pos] == ",":
                    pos += 1
                    break
                descriptor = _SRCSET_DESCRIPTOR_RE.match(value, pos)
                assert descriptor is not None  # value[pos] is neither whitespace nor a comma
                descriptors.append(descriptor.group())
                pos = descriptor.end()
        if _valid_descriptors(descriptors):
            urls.append(url)


def _valid_descriptors(descriptors: list[str]) -> bool:
    """The HTML standard's srcset descriptor parser: at most one of ``<n>w`` and ``<f>x``,
    ``<n>h`` (future-compat) only beside ``w``, integers positive, densities non-negative."""
    width = density = height = False
    for descriptor in descriptors:
        number, kind = descriptor[:-1], descriptor[-1]
        if kind in ("w", "h"):
            if not _HTML_INTEGER_RE.match(number) or not number.strip("0"):
                return False
            if density or (width if kind == "w" else height):
                return False
            if kind == "w":
                width = True
            else:
                height = True
        elif kind == "x":
            if width or density or height or not _HTML_FLOAT_RE.match(number):
                return False
            if float(number) < 0:
                return False
            density = True
        else:
            return False
    return width or not height


def image_urls(selector: Selector | PageNodes, base: str) -> list[str]:
    """Absolute URLs of the page's images, in document order, each once (first wins).

    Reads ``<img src>``, the ``<img srcset>`` candidates, the ``srcset`` candidates of
    ``<source>`` inside ``<picture>``, and the ``content`` of ``og:image``, ``og:image:url``
    and ``og:image:secure_url`` metas. Empty values and ``data:``, ``javascript:``,
    ``blob:`` and ``about:`` URLs are skipped, since none of them is an image a crawler can
    fetch. No cap is applied; the caller applies the 1,000-per-URL limit.
    """
    found: dict[str, None] = {}  # insertion-ordered; a repeat keeps its first place
    for raw in image_sources(selector):
        url = media_url(base, raw)
        if url is not None:
            found[url] = None
    return list(found)


def image_sources(selector: Selector | PageNodes) -> list[str]:
    """The values :func:`image_urls` reads, as written and in document order, repeats
    included: ``image_urls`` is ``media_url(base, value)`` of each, deduplicated. For a
    caller that can turn the common shapes into final URLs faster than joining them."""
    values: list[str] = []
    for element in _nodes(selector).images:
        get = element.get
        tag = element.tag
        if tag == "meta":
            if get("property").strip().translate(_ASCII_LOWER) in _OG_IMAGE_PROPERTIES:
                values.append(get("content"))
            continue
        if tag == "img":
            src = get("src")
            if src is not None:
                values.append(src)
        srcset = get("srcset")
        if srcset:
            values += parse_srcset(srcset)
    return values


_OG_IMAGE_PROPERTIES = frozenset({"og:image", "og:image:url", "og:image:secure_url"})


# --- videos -------------------------------------------------------------------------------


def videos(selector: Selector | PageNodes, ld: list[Any], base: str) -> list[dict[str, str]]:
    """Video candidates with the raw fields the page gives for each.

    Keys are among ``thumbnail_loc``, ``title``, ``description``, ``content_loc``,
    ``player_loc``, ``duration`` (whole seconds as a decimal string) and
    ``publication_date``. A field the page does not give is absent: nothing is invented,
    and the caller decides which candidates meet G7. Sources, in this order:

    1. JSON-LD ``VideoObject`` objects at any depth of ``ld``: ``contentUrl``,
       ``embedUrl``, ``thumbnailUrl`` (a string, a list or an ImageObject), ``name``,
       ``description``, ``duration`` (ISO 8601) and ``uploadDate``.
    2. Open Graph: the first of ``og:video``, ``og:video:url`` and ``og:video:secure_url``
       is the ``content_loc`` when ``og:video:type`` is ``video/*`` or the URL path ends
       in a video file extension, and the ``player_loc`` otherwise. Alongside it come
       ``og:image`` (or ``og:image:url``/``og:image:secure_url``), ``og:title``,
       ``og:description`` and ``og:video:duration`` (seconds).
    3. Each ``<video>`` whose ``src`` or first ``<source src>`` is usable, with ``poster``
       as the thumbnail and ``title`` or ``aria-label`` as the title. Title and description
       fall back to ``og:title``/``og:description``, never to the ``<title>`` text, which
       names the page rather than the video.

    A candidate whose content or player URL equals a content or player URL of an earlier
    one describes the same video and is dropped, and so is a VideoObject with no usable
    field at all. Text is whitespace-collapsed; empty values and
    ``data:``/``javascript:``/``blob:``/``about:`` URLs are omitted.
    """
    nodes = _nodes(selector)
    og = nodes.open_graph
    if not (ld or nodes.videos or _OG_VIDEO_PROPERTIES.intersection(og)):
        return []  # most pages: no source of a video at all
    candidates = [_ld_video(obj, base) for obj in _ld_objects(ld) if _has_type(obj, "VideoObject")]
    og_video = _og_video(og, base)
    if og_video is not None:
        candidates.append(og_video)
    candidates += _element_videos(nodes, og, base)

    kept: list[dict[str, str]] = []
    seen: set[str] = set()
    for candidate in candidates:
        locs = {candidate[key] for key in ("content_loc", "player_loc") if key in candidate}
        if candidate and not locs & seen:
            kept.append(candidate)
        seen |= locs
    return kept


_OG_VIDEO_PROPERTIES = frozenset({"og:video", "og:video:url", "og:video:secure_url"})


def _ld_video(obj: dict[str, Any], base: str) -> dict[str, str]:
    fields = {
        "content_loc": _ld_url(obj.get("contentUrl"), base),
        "player_loc": _ld_url(obj.get("embedUrl"), base),
        "thumbnail_loc": _ld_url(obj.get("thumbnailUrl"), base),
        "title": _ld_text(obj.get("name")),
        "description": _ld_text(obj.get("description")),
        "publication_date": _ld_text(obj.get("uploadDate")),
    }
    duration = obj.get("duration")
    if isinstance(duration, str):
        seconds = iso8601_duration(duration)
        if seconds is not None:
            fields["duration"] = str(seconds)
    return {key: value for key, value in fields.items() if value is not None}


def _og_url(og: dict[str, list[str]], base: str, *props: str) -> str | None:
    for prop in props:
        for raw in og.get(prop, ()):
            url = media_url(base, raw)
            if url is not None:
                return url
    return None


def _og_text(og: dict[str, list[str]], prop: str) -> str | None:
    for raw in og.get(prop, ()):
        text = _collapse(raw)
        if text:
            return text
    return None


def _og_video(og: dict[str, list[str]], base: str) -> dict[str, str] | None:
    url = _og_url(og, base, "og:video", "og:video:url", "og:video:secure_url")
    if url is None:
        return None
    media_type = (_og_text(og, "og:video:type") or "").translate(_ASCII_LOWER)
    try:
        path = urlsplit(url).path.translate(_ASCII_LOWER)
    except ValueError:
        path = ""
    is_file = media_type.startswith("video/") or path.endswith(_VIDEO_FILE_EXTENSIONS)
    fields = {
        "content_loc" if is_file else "player_loc": url,
        "thumbnail_loc": _og_url(og, base, "og:image", "og:image:url", "og:image:secure_url"),
        "title": _og_text(og, "og:title"),
        "description": _og_text(og, "og:description"),
    }
    duration = _og_text(og, "og:video:duration")
    if duration is not None and _HTML_INTEGER_RE.match(duration):
        fields["duration"] = duration.lstrip("0") or "0"
    return {key: value for key, value in fields.items() if value is not None}


def _element_videos(
    nodes: PageNodes, og: dict[str, list[str]], base: str
) -> Iterator[dict[str, str]]:
    for node in nodes.videos:
        sources = [node.get("src", "")]  # then ``.//source/@src``
        sources += [src for src in map(_get_src, node.iterdescendants("source")) if src is not None]
        content = next(
            (url for url in (media_url(base, raw) for raw in sources) if url is not None), None
        )
        if content is None:
            continue  # filled in by script: nothing on the page identifies the video
        fields = {
            "content_loc": content,
            "thumbnail_loc": media_url(base, node.attrib.get("poster", "")),
            "title": _collapse(node.attrib.get("title", ""))
            or _collapse(node.attrib.get("aria-label", ""))
            or _og_text(og, "og:title"),
            "description": _og_text(og, "og:description"),
        }
        yield {key: value for key, value in fields.items() if value}


def _get_src(element: Any) -> str | None:
    return element.get("src")  # type: ignore[no-any-return]


def iso8601_duration(value: str) -> int | None:
    """Whole seconds of an ISO 8601 duration ``PnDTnHnMnS``, or ``None`` when ``value`` is
    not one.

    Fractional seconds (``.`` or ``,``) are rounded half to even, like Python's
    :func:`round`: ``PT0.5S`` is 0 and ``PT1.5S`` is 2. Years, months and weeks are
    rejected because they have no fixed length in seconds. At least one component must be
    present (``P`` and ``PT`` are not durations), and a ``T`` must be followed by one.
    """
    match = _DURATION_RE.match(value.strip())
    if match is None:
        return None
    days, hours, minutes, seconds, fraction = match.groups()
    if days is hours is minutes is seconds is None:
        return None
    total = int(days or 0) * 86_400 + int(hours or 0) * 3_600 + int(minutes or 0) * 60
    total += int(seconds or 0)
    if fraction:
        # Exact half-to-even on the digits: no float, so no 0.49999... surprises.
        digits = fraction.rstrip("0")
        if digits > "5" or (digits == "5" and total % 2 == 1):
            total += 1
    return total


# --- dates --------------------------------------------------------------------------------


def page_dates(selector: Selector | PageNodes, ld: list[Any]) -> list[str]:
    """The raw modification dates the page declares, most trusted first.

    The order is ``article:modified_time``, then ``og:updated_time``, then the first
    JSON-LD ``dateModified`` at any depth, then microdata ``dateModified`` in document
    order (``<meta itemprop content>``, and ``<time itemprop>`` with its ``datetime``, or
    its text when it has none, as microdata defines a time's value). The caller takes the
    first one :func:`facts.parse_lastmod` accepts. Strings are stripped, and empty ones and
    repeats are dropped.
    """
    nodes = _nodes(selector)
    og = nodes.open_graph
    raw: list[str] = [*og.get("article:modified_time", ()), *og.get("og:updated_time", ())]
    for obj in _ld_objects(ld):
        modified = obj.get("dateModified")
        if isinstance(modified, str) and modified.strip():
            raw.append(modified)
            break
    for node in nodes.itemprops:
        if "dateModified" not in _HTML_SPACE_RE.split(node.attrib["itemprop"]):
            continue
        if node.tag == "meta":
            raw.append(node.attrib.get("content", ""))
        elif "datetime" in node.attrib:
            raw.append(node.attrib["datetime"])
        else:
            raw.append(node.xpath("string()", smart_strings=False))
    dates: dict[str, None] = {}  # ordered and deduplicated
    for value in raw:
        if value.strip():
            dates.setdefault(value.strip())
    return list(dates)


# --- shared -------------------------------------------------------------------------------


def absolute(base: str, value: str) -> str | None:
    """``urljoin(base, value.strip())``; ``None`` for an empty value. A value the URL parser
    rejects (such as an unclosed IPv6 bracket) comes back as written, so the caller's URL
    check refuses it and counts it rather than it vanishing unseen.

    The two shapes most page URLs have skip urljoin's parse and rebuild (same result): an
    absolute http(s) URL that rebuilding leaves unchanged (urljoin returns those as they
    are), and a path from the root of an http(s) base."""
    value = value.strip()
    if not value:
        return None
    if value[0] == "/":
        if _PLAIN_ROOTED_RE.fullmatch(value) is not None and "/." not in value:
            prefix = join_prefix(base)
            if prefix is not None:
                return prefix + value
    elif _PLAIN_ABSOLUTE_RE.fullmatch(value) is not None:
        return value
    try:
        return urljoin(base, value)
    except ValueError:
        return value


@lru_cache(maxsize=16)
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


def media_url(base: str, value: str) -> str | None:
    """:func:`absolute`, minus URLs of no fetchable resource. The scheme is checked after
    joining, because the URL parser drops tabs and newlines, so ``da\\tta:`` means
    ``data:``."""
    url = absolute(base, value)
    if url is None:
        return None
    if url.startswith(("http://", "https://")):
        return url
    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        return url  # unparsable: the caller refuses and counts it
    return None if scheme.translate(_ASCII_LOWER) in _UNFETCHABLE_SCHEMES else url


def _collapse(text: str) -> str:
    return " ".join(text.split())
