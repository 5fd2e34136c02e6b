"""The modification dates a page declares: Open Graph, JSON-LD and microdata ``dateModified``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .elements import HTML_SPACE_RE, nodes_of
from .jsonld import ld_objects

if TYPE_CHECKING:
    from parsel import Selector

    from .elements import PageNodes

__all__ = ["page_dates"]


def page_dates(selector: Selector | PageNodes, ld: list[Any]) -> list[str]:
    """The raw modification dates the page declares, most trusted first.

    The order is ``article:modified_time``, then ``og:updated_time``, then the first
    JSON-LD ``dateModified`` at any depth, then microdata ``dateModified`` in document
    order (``<meta itemprop content>``, and ``<time itemprop>`` with its ``datetime``, or
    its text when it has none, as microdata defines a time's value). The caller takes the
    first one :func:`facts.parse_lastmod` accepts. Strings are stripped, and empty ones and
    repeats are dropped.
    """
    nodes = nodes_of(selector)
    og = nodes.open_graph
    raw: list[str] = [*og.get("article:modified_time", ()), *og.get("og:updated_time", ())]
    for obj in ld_objects(ld):
        modified = obj.get("dateModified")
        if isinstance(modified, str) and modified.strip():
            raw.append(modified)
            break
    for node in nodes.itemprops:
        if "dateModified" not in HTML_SPACE_RE.split(node.attrib["itemprop"]):
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
