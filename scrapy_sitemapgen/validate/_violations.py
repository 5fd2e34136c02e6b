"""What the checker reports: :class:`Violation` (a broken rule, with its id),
:class:`InputError` (an input not checked at all) and :class:`CheckIncomplete`, and the
wording of the violations that concern a file as a whole (not gzip, a DOCTYPE, not
well-formed XML, an index listing an index)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

__all__ = ["CheckIncomplete", "InputError", "Violation"]

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_LINE_COLUMN_RE = re.compile(r", line \d+, column (\d+)$")


class Violation(NamedTuple):
    """One broken rule: where (``source``, 1-based ``line``; 0 when the whole file is
    meant), which ``rule`` of PROTOCOL.md, and what is wrong."""

    source: str
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.rule}: {self.message}"


class InputError(NamedTuple):
    """A source (or a file it lists) that could not be checked at all, through no fault the
    rules can name: a network error (refused connection, unknown host, timeout), a local
    source that is missing, a file that may not be read. Not a violation: nothing is known
    about the file."""

    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


class CheckIncomplete(Exception):
    """Raised by :func:`validate` when some input could not be checked: ``errors`` says
    which and why, ``violations`` holds what the rest of the check found."""

    def __init__(self, errors: list[InputError], violations: list[Violation]) -> None:
        super().__init__("; ".join(map(str, errors)))
        self.errors = errors
        self.violations = violations


def _index_of_indexes(source: str, line: int, index: str) -> Violation:
    return Violation(
        source,
        line,
        "P8",
        f"{index} is a sitemap index: an index lists sitemaps, not other indexes; not followed",
    )


def _not_gzip(head: bytes) -> str:
    """P1 for a ``.gz`` file that holds no gzip data (a plain file, an HTML error page)."""
    first = head[:8]
    text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in first)
    return (
        f"not gzip (the first bytes are {first.hex(' ')}, {text!r}; gzip data starts with "
        "1f 8b): a .gz file must be gzip-compressed; not checked further"
    )


def _one_line(text: str) -> str:
    return " ".join(_CONTROL_RE.sub(" ", text).split())


#: An entity declaration in a DOCTYPE's internal subset, and the entity's name.
_ENTITY_DECLARATION_RE = re.compile(rb"<!ENTITY\s+(?:%\s+)?([^\s\"'>]+)")


def _declared_entities(head: bytes) -> list[str]:
    """The entities a DOCTYPE at the start of the file declares, in order (as far as
    ``head`` reaches)."""
    at = head.find(b"<!DOCTYPE")
    if at < 0:
        return []
    return [m[1].decode("utf-8", "replace") for m in _ENTITY_DECLARATION_RE.finditer(head, at)]


def _doctype_violation(
    display: str, head: bytes, entities: list[str], external: str | None
) -> Violation:
    """P1 for a DOCTYPE that declares entities or names an external DTD."""
    more = ", ..." if len(entities) > 5 else ""
    what = (
        f"declares entities ({', '.join(entities[:5])}{more})"
        if entities
        else f"refers to an external DTD ({external})"
    )
    return Violation(
        display,
        _doctype_line(head),
        "P1",
        f"the DOCTYPE {what}: a sitemap uses only the five predefined entities; nothing "
        "was expanded or loaded, and the file is not checked further",
    )


def _doctype_line(head: bytes) -> int:
    at = head.find(b"<!DOCTYPE")
    return head[:at].count(b"\n") + 1 if at >= 0 else 1


def _syntax_violation(display: str, exc: Any) -> Violation:
    """P1 for a document that is not well-formed UTF-8 XML, at libxml2's first error."""
    message, line = str(exc.msg or exc), int(exc.lineno or 0)
    if not line:  # iterparse sometimes reports only "no element found"; the log has the cause
        first = next((entry for entry in exc.error_log if entry.line > 0), None)
        if first is not None:
            message, line = str(first.message), int(first.line)
    message = _one_line(message)
    match = _LINE_COLUMN_RE.search(message)
    if match is not None:
        message = f"{message[: match.start()]} (column {match[1]})"
    message = message.strip()
    if message.startswith(("xmlParseEntityRef", "EntityRef")):
        message = f"a raw '&' (escape it as &amp;): {message}"
    return Violation(display, line, "P1", f"not well-formed XML: {message}")
