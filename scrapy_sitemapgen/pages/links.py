"""A page's links by relation as HTTP declares them: RFC 8288 ``Link`` header values parsed,
and the header links whose relation types name one relation.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .elements import ASCII_LOWER, HTML_SPACE_RE, match_end

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "header_links",
    "parse_link_header",
]

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
        pos = match_end(_LINK_GAP_RE, text, pos)
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
            pos = match_end(_OWS_RE, text, pos)
            if pos >= end or text[pos] == ",":
                break
            if text[pos] != ";":
                pos = _skip_to(text, pos, ";,")
                continue
            pos = match_end(_OWS_RE, text, pos + 1)
            name = _TOKEN_RE.match(text, pos)
            if name is None:
                pos = _skip_to(text, pos, ";,")
                continue
            pos = match_end(_OWS_RE, text, name.end())
            param_value = ""
            if pos < end and text[pos] == "=":
                pos = match_end(_OWS_RE, text, pos + 1)
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
            params.setdefault(name.group().translate(ASCII_LOWER), param_value)
        links.append((uri, params))


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


def header_links(link_headers: list[str], rel: str) -> Iterator[tuple[str, dict[str, str]]]:
    """Header links with ``rel`` among their relation types whose context is this page.
    An ``anchor`` parameter moves the context to another resource (RFC 8288 3.2)."""
    for uri, params in parse_link_header(link_headers):
        if params.get("anchor", "").strip():
            continue
        if rel in _rel_tokens(params.get("rel", "")):
            yield uri, params


def _rel_tokens(value: str) -> set[str]:
    return set(HTML_SPACE_RE.split(value.translate(ASCII_LOWER)))
