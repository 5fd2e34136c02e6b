"""The XML schemas: the XSDs shipped in ``schemas/``, and their errors as rule violations."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type information

from ..sitemaps.limits import IMAGE_NS, MAX_LOC_LENGTH, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["SCHEMA_DIR"]

#: The schemas shipped with the package: ``urlset.xsd`` (core + extensions), ``siteindex.xsd``.
SCHEMA_DIR: Final = Path(__file__).parent.parent / "schemas"

_PREFIXES: Final = {
    SITEMAP_NS: "",
    IMAGE_NS: "image:",
    VIDEO_NS: "video:",
    NEWS_NS: "news:",
    XHTML_NS: "xhtml:",
}
# Core leaf elements and the rule their value follows.
_VALUE_RULES: Final = {"loc": "P3", "lastmod": "P4", "changefreq": "P5", "priority": "P6"}
# "Element '{ns}name', attribute 'x': text": libxml2's schema error format.
_SCHEMA_ERROR_RE = re.compile(
    r"^Element '(?:\{([^}]*)\})?([^']*)'(, attribute '[^']*')?: (.*)$", re.S
)
_QNAME_RE = re.compile(r"\{([^}]*)\}([\w.-]+)")
_FACET_RE = re.compile(r"\[facet '[^']*'\] ")
_HINTS: Final = {
    "P3": (
        " (a <loc> is an absolute http(s) URL, percent-encoded, of at most "
        f"{MAX_LOC_LENGTH:,} characters)"
    ),
    "P4": (
        " (W3C Datetime: YYYY-MM-DD, or a date and time with a time zone, e.g. "
        "2024-01-02T03:04:05+00:00)"
    ),
}
_STRUCTURE_ERRORS = ("This element is not expected", "Missing child element")


def _parser() -> Any:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


@cache
def _schema(name: str) -> Any:
    """``urlset`` (core + image, video, news, xhtml) or ``siteindex``, from SCHEMA_DIR."""
    return etree.XMLSchema(etree.parse(str(SCHEMA_DIR / f"{name}.xsd"), _parser()))


def _qname(text: str) -> str:
    """``{ns}name`` as ``prefix:name`` for the namespaces a sitemap uses."""
    return _QNAME_RE.sub(lambda m: f"{_PREFIXES[m[1]]}{m[2]}" if m[1] in _PREFIXES else m[0], text)


def _schema_violation(message: str, in_index: bool) -> tuple[str, str]:
    """The rule a libxml2 schema error breaks, and the error in a sitemap's own words."""
    structure = "P8" if in_index else "P2"
    match = _SCHEMA_ERROR_RE.match(message.strip())
    if match is None:
        return structure, _qname(message.strip())
    namespace, name, attribute, text = match.groups()
    text = _qname(_FACET_RE.sub("", text).strip().rstrip("."))
    where = f"<{_qname(f'{{{namespace}}}{name}') if namespace else name}>{attribute or ''}"
    if namespace == SITEMAP_NS:
        if text.startswith(_STRUCTURE_ERRORS):
            rule = structure
        else:
            rule = _VALUE_RULES.get(name, structure)
            text += _HINTS.get(rule, "")
    elif namespace in (IMAGE_NS, VIDEO_NS, NEWS_NS):
        rule = "G7"
    elif namespace == XHTML_NS:
        rule = "G6"
    else:
        rule = "P14"  # an element no declared extension knows
    return rule, f"{where}: {text}"


def _schema_problems(element: Any, in_index: bool) -> Iterator[tuple[int, str, str]]:
    """(line, rule, message) for each schema error of one ``<url>`` or ``<sitemap>``."""
    schema = _schema("siteindex" if in_index else "urlset")
    if not schema.validate(element):
        for error in schema.error_log:
            rule, message = _schema_violation(error.message, in_index)
            yield error.line, rule, message
