"""The XML schemas: the XSDs shipped in ``schemas/``, and their errors as rule violations in
the protocol's words (which entry, which element, what the protocol expects there)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type information

from ..sitemaps.limits import (
    CHANGEFREQ_WORDS,
    IMAGE_NS,
    MAX_LOC_LENGTH,
    NEWS_NS,
    PRIORITY_MAX,
    PRIORITY_MIN,
    SITEMAP_NS,
    VIDEO_NS,
    XHTML_NS,
)

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
# The children of an entry, in the order the schemas (and the protocol, P2 and P8) give.
_URL_ORDER: Final = ("loc", "lastmod", "changefreq", "priority")
_SITEMAP_ORDER: Final = ("loc", "lastmod")
_EXPECTS: Final = {
    False: "the protocol expects <loc> first, then optional <lastmod>, <changefreq>, <priority>",
    True: "the protocol expects <loc> first, then an optional <lastmod>",
}
_HOLDS: Final = {
    False: "a <url> holds <loc>, <lastmod>, <changefreq> and <priority>; anything else goes in "
    "an extension's namespace, declared on the root",
    True: "a <sitemap> holds <loc> and an optional <lastmod>, nothing else",
}
# Core leaf elements: the rule their value follows, and what the protocol expects of it.
_VALUE_RULES: Final = {"loc": "P3", "lastmod": "P4", "changefreq": "P5", "priority": "P6"}
_VALUE_EXPECTED: Final = {
    "loc": (f"an absolute http(s) URL, percent-encoded, of at most {MAX_LOC_LENGTH:,} characters"),
    "lastmod": (
        "a W3C Datetime: YYYY-MM-DD, or a date and time with a time zone, e.g. "
        "2024-01-02T03:04:05+00:00"
    ),
    "changefreq": f"one of {', '.join(CHANGEFREQ_WORDS)}",
    "priority": f"a number from {PRIORITY_MIN:.1f} to {PRIORITY_MAX:.1f}",
}
# The schemas' tLoc pattern (printable ASCII but space, " < >), for locs outside XML too.
_LOC_RE = re.compile(r"https?://[!#-;=?-~]+")
_BAD_ESCAPE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_NO_ZONE_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?")
# "Element '{ns}name', attribute 'x': text": libxml2's schema error format.
_SCHEMA_ERROR_RE = re.compile(
    r"^Element '(?:\{([^}]*)\})?([^']*)'(?:, attribute '([^']*)')?: (.*)$", re.S
)
_QNAME_RE = re.compile(r"\{([^}]*)\}([\w.-]+)")
_FACET_RE = re.compile(r"\[facet '[^']*'\] ")
_EXPECTED_RE = re.compile(r"\. Expected is (?:one of )?\( (.*) \)$")
_OTHER_RE = re.compile(r"##other\{[^}]*\}\*")
_STRUCTURE_ERRORS = ("This element is not expected", "Missing child element")
_TEXT_ERROR = "Character content other than whitespace"
_UNKNOWN_ERROR = "No matching global element declaration"


def _parser() -> Any:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


@cache
def _schema(name: str) -> Any:
    """``urlset`` (core + image, video, news, xhtml) or ``siteindex``, from SCHEMA_DIR."""
    return etree.XMLSchema(etree.parse(str(SCHEMA_DIR / f"{name}.xsd"), _parser()))


def _qname(text: str) -> str:
    """``{ns}name`` as ``prefix:name`` for the namespaces a sitemap uses."""
    return _QNAME_RE.sub(lambda m: f"{_PREFIXES[m[1]]}{m[2]}" if m[1] in _PREFIXES else m[0], text)


def _loc_problem(value: str) -> str | None:
    """Why ``value`` is no valid ``<loc>`` (P3), in words; None when the pattern and length
    rules see none (the schema's anyURI may still refuse it)."""
    if not re.match(r"https?://", value):
        return "not an absolute http(s) URL"
    if len(value) > MAX_LOC_LENGTH:
        return f"{len(value):,} characters, at most {MAX_LOC_LENGTH:,}"
    if not _LOC_RE.fullmatch(value):
        bad = next(c for c in value if not ("!" <= c <= "~") or c in '"<>')
        return f"character {bad!r} must be percent-encoded"
    if _BAD_ESCAPE_RE.search(value):
        return "'%' not followed by two hex digits"
    return None


def _shown(value: str) -> str:
    return f"{value[:100]!r}…" if len(value) > 100 else repr(value)


def _structure(entry: Any, in_index: bool, where: str) -> tuple[int, str, str] | None:
    """The first element of ``entry`` (a ``<url>`` or ``<sitemap>``) out of the protocol's
    order, unknown, repeated or missing, as (line, rule, message); None when its children
    follow the schema's content model. The line is where libxml2 reports it: the first
    child that breaks the order, the entry's own line when it has no child at all."""
    order, rule = (_SITEMAP_ORDER, "P8") if in_index else (_URL_ORDER, "P2")
    expects, noun = _EXPECTS[in_index], "<sitemap>" if in_index else "<url>"
    children = [child for child in entry if isinstance(child.tag, str)]
    loc_tag = f"{{{SITEMAP_NS}}}loc"

    def no_loc(number: int, shown: str) -> str:
        if any(child.tag == loc_tag for child in children[number + 1 :]):
            return f"{where}: {shown} before <loc>: {expects}"
        return f"{where}: no <loc>: {expects}"

    seen = -1  # the position in ``order`` of the last core element read
    extension = ""  # the first extension element read: a <url> ends with them
    for number, child in enumerate(children):
        qname = etree.QName(child)
        namespace, name, line = qname.namespace, qname.localname, child.sourceline
        shown = f"<{_qname(str(child.tag))}>"
        if namespace == SITEMAP_NS and name in order:
            position = order.index(name)
            if seen < 0 and position > 0:
                return line, rule, no_loc(number, shown)
            if extension:
                return (
                    line,
                    rule,
                    f"{where}: {extension} before <{name}>: the protocol expects extension "
                    "elements after <loc>, <lastmod>, <changefreq> and <priority>",
                )
            if position == seen:
                many = "exactly one" if name == "loc" else "at most one"
                return line, rule, f"{where}: a second <{name}>: a {noun} holds {many} <{name}>"
            if position < seen:
                return line, rule, f"{where}: <{order[seen]}> before <{name}>: {expects}"
            seen = position
        elif namespace == SITEMAP_NS:
            return line, rule, f"{where}: <{name}> is no sitemap element: {_HOLDS[in_index]}"
        elif not namespace:
            return line, "P14", f"{where}: <{name}> is in no namespace: {_HOLDS[in_index]}"
        elif in_index:
            return line, rule, f"{where}: {shown} in a <sitemap>: {_HOLDS[in_index]}"
        elif seen < 0:
            return line, rule, no_loc(number, shown)
        else:
            extension = extension or shown
    if seen < 0:
        return entry.sourceline, rule, f"{where}: no <loc>: {expects}"
    return None


def _value_message(element: Any, name: str, where: str) -> str:
    """A core leaf element whose value the schema refused, in the protocol's words."""
    expected = _VALUE_EXPECTED[name]
    inner = next((c for c in element if isinstance(c.tag, str)), None)
    text = element.text or ""
    # <changefreq> is an xsd:string, read as it is; the other types collapse white space.
    value = text if name == "changefreq" else text.strip()
    if inner is not None:
        problem = f"holds an element, <{_qname(str(inner.tag))}>"
    elif not value.strip():
        problem = "is empty"
    elif name == "lastmod" and _NO_ZONE_RE.fullmatch(value):
        problem = f"{_shown(value)} has a time but no time zone"
    elif name == "loc" and (why := _loc_problem(value)) is not None:
        problem = f"{_shown(value)} is not valid ({why})"
    else:
        problem = f"{_shown(value)} is not valid"
    return f"{where}: <{name}> {problem}: the protocol expects {expected}"


def _reworded(text: str) -> str:
    """libxml2's own words for an error no rule above words, made shorter: names as
    ``prefix:name``, "expected <a>, <b>" for its content-model lists."""
    text = _qname(_FACET_RE.sub("", text).strip().rstrip("."))
    expected = _EXPECTED_RE.search(text)
    if expected is not None:
        names = [
            "an extension element" if _OTHER_RE.fullmatch(name) else f"<{name}>"
            for name in expected[1].split(", ")
        ]
        head = text[: expected.start()]
        head = head.replace("This element is not expected", "not expected here")
        head = head.replace("Missing child element(s)", "a required child is missing")
        if len(names) == 1:
            return f"{head}; expected {names[0]}"
        return f"{head}; expected one of {', '.join(names)}"
    return text.replace("This element is not expected", "not expected here")


def _schema_problems(element: Any, in_index: bool, number: int) -> Iterator[tuple[int, str, str]]:
    """(line, rule, message) for each schema error of one ``<url>`` or ``<sitemap>``, the
    ``number``-th of its file, in line order."""
    schema = _schema("siteindex" if in_index else "urlset")
    if schema.validate(element):
        return
    entry = "sitemap" if in_index else "url"
    where = f"<{entry}> #{number:,}"
    structure_rule = "P8" if in_index else "P2"
    structure = _structure(element, in_index, where)
    problems = [structure] if structure is not None else []
    direct = {(child.tag, child.sourceline) for child in element if isinstance(child.tag, str)}
    direct.add((element.tag, element.sourceline))
    worded: set[int] = set()  # the core leaf elements already reported
    for error in schema.error_log:
        message, line = str(error.message).strip(), int(error.line)
        match = _SCHEMA_ERROR_RE.match(message)
        if match is None:
            problems.append((line, structure_rule, f"{where}: {_reworded(message)}"))
            continue
        namespace, name, attribute, text = match.groups()
        tag = f"{{{namespace}}}{name}" if namespace else name
        if text.startswith(_STRUCTURE_ERRORS) and structure is not None and (tag, line) in direct:
            continue  # worded by _structure, which also names what comes where
        if namespace == SITEMAP_NS and name == entry and text.startswith(_TEXT_ERROR):
            stray = " ".join(
                part.strip()
                for part in (element.text, *(child.tail for child in element))
                if part and part.strip()
            )
            problems.append(
                (line, structure_rule, f"{where}: text {stray[:40]!r} directly inside <{entry}>")
            )
            continue
        if namespace == SITEMAP_NS and name in _VALUE_RULES and not attribute:
            candidates = [c for c in element if c.tag == tag]
            leaf = next((c for c in candidates if c.sourceline == line), None)
            leaf = leaf if leaf is not None else next(iter(candidates), None)
            if leaf is not None and not text.startswith(_STRUCTURE_ERRORS):
                if id(leaf) not in worded:
                    worded.add(id(leaf))
                    problems.append((line, _VALUE_RULES[name], _value_message(leaf, name, where)))
                continue
        shown = f"<{_qname(tag) if namespace else name}>"
        if attribute:
            what = f"unexpected attribute {_qname(attribute)} on {shown}"
        elif text.startswith(_UNKNOWN_ERROR):
            what = (
                f"{shown} is no element of an extension the validator knows (image, video, "
                "news, xhtml:link)"
            )
        else:
            what = f"{shown}: {_reworded(text)}"
        if namespace == SITEMAP_NS:
            rule = structure_rule
        elif namespace in (IMAGE_NS, VIDEO_NS, NEWS_NS):
            rule = "G7"
        elif namespace == XHTML_NS:
            rule = "G6"
        else:
            rule = "P14"  # an element no declared extension knows
        problems.append((line, rule, f"{where}: {what}"))
    problems.sort(key=lambda problem: problem[0])
    yield from problems
