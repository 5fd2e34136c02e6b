"""The page's JSON-LD: its ``<script type="application/ld+json">`` blocks parsed, and the
helpers that walk them (objects at any depth, ``@type`` checks, text and URL properties).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from .elements import ASCII_LOWER, collapse, nodes_of
from .hrefs import media_url

if TYPE_CHECKING:
    from collections.abc import Iterator

    from parsel import Selector

    from .elements import PageNodes

__all__ = [
    "has_type",
    "json_ld",
    "json_ld_blocks",
    "ld_objects",
    "ld_text",
    "ld_url",
]

_LD_MEDIA_TYPE = "application/ld+json"


def json_ld(selector: Selector | PageNodes) -> tuple[list[Any], int]:
    """The parsed JSON-LD blocks of the page, in document order, and how many were not JSON
    (:func:`json_ld_blocks`, the blocks not JSON counted). The count lets the caller
    report pages whose structured data search engines will ignore."""
    blocks, unparsed = json_ld_blocks(selector)
    return blocks, len(unparsed)


def json_ld_blocks(selector: Selector | PageNodes) -> tuple[list[Any], list[str]]:
    """The parsed JSON-LD blocks of the page, in document order, and the text of each
    block that was not JSON (the content fingerprint counts it as text).

    Takes every ``<script type="application/ld+json">``, with the type matched
    ASCII-case-insensitively and media type parameters ignored. The JSON may be wrapped in
    whitespace, an HTML comment or a CDATA section, which old templates add to hide it from
    pre-HTML5 parsers. An empty block counts as not JSON. Each block comes back as parsed,
    whatever its shape (object, list, even a bare number).
    """
    blocks: list[Any] = []
    unparsed: list[str] = []
    for element in nodes_of(selector).scripts:
        media_type = element.attrib.get("type", "").split(";", 1)[0]
        if media_type.strip().translate(ASCII_LOWER) != _LD_MEDIA_TYPE:
            continue
        text = _unwrap_script("".join(element.xpath("text()", smart_strings=False)))
        try:
            blocks.append(json.loads(text))
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested too deep
            unparsed.append(text)
    return blocks, unparsed


def _unwrap_script(text: str) -> str:
    text = text.strip()
    for opening, closing in (("<!--", "-->"), ("<![CDATA[", "]]>")):
        if text.startswith(opening):
            text = text[len(opening) :]
        if text.endswith(closing):
            text = text[: -len(closing)]
        text = text.strip()
    return text


def ld_objects(ld: list[Any]) -> Iterator[dict[str, Any]]:
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


def has_type(obj: dict[str, Any], name: str) -> bool:
    """Whether ``@type`` (a string or a list) names ``name``, bare or as a
    ``schema:``/``https://schema.org/`` IRI."""
    types = obj.get("@type")
    for value in types if isinstance(types, list) else [types]:
        if isinstance(value, str) and re.split(r"[/:#]", value.strip())[-1] == name:
            return True
    return False


def ld_text(value: Any) -> str | None:
    """A string property: a string, a ``{"@value": ...}`` value object, or the first such item
    of a list; whitespace collapsed."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            item = item.get("@value")
        if isinstance(item, str):
            text = collapse(item)
            if text:
                return text
    return None


def ld_url(value: Any, base: str) -> str | None:
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
