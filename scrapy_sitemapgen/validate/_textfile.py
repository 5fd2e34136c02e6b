"""One plain-text sitemap (P11) as the checker walks it, a line at a time: one absolute
URL per line, UTF-8, at least one URL and at most the urlset's count (P7), each within
the file's scope (P12). What is checked against other files (a URL listed twice, P8) and
what a file too large means stay with the checker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sitemaps.limits import MAX_URLS_PER_SITEMAP
from ._schema import _loc_problem
from ._violations import Violation

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._scope import _Scope

__all__ = ["UTF8_BOM", "TextFile"]

UTF8_BOM = b"\xef\xbb\xbf"


class TextFile:
    """The lines of one text sitemap read so far: :meth:`line` checks one, :meth:`close`
    what only the whole file can break."""

    def __init__(self, display: str, scope: _Scope) -> None:
        self.display = display
        self.scope = scope
        self.count = 0
        self._first_over = 0

    def line(self, number: int, raw: bytes) -> tuple[str | None, Violation | None]:
        """The URL of line ``number`` (None for a blank line or one that is no UTF-8), and
        what the line breaks (None if nothing). A URL with a P3 violation is no entry at
        all; one with another (out of scope) is still counted against repeats."""
        try:
            text = (raw.removeprefix(UTF8_BOM) if number == 1 else raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            why = f"a text sitemap is UTF-8: {exc.reason} at byte {exc.start}"
            return None, Violation(self.display, number, "P11", why)
        url = text.strip()
        if not url:
            return None, None
        self.count += 1
        if self.count == MAX_URLS_PER_SITEMAP + 1:
            self._first_over = number
        problem = _loc_problem(url)
        if problem is not None:
            return url, Violation(self.display, number, "P3", f"{url[:200]!r}: {problem}")
        scope_problem = self.scope.problem(url, number)
        if scope_problem is not None:
            return url, Violation(self.display, number, *scope_problem)
        return url, None

    def close(self) -> Iterator[Violation]:
        """An empty file (P11), and the first line past the limit (P7)."""
        if self.count == 0:
            yield Violation(
                self.display,
                0,
                "P11",
                "a text sitemap lists at least one URL; this file lists none",
            )
        if self._first_over:
            yield Violation(
                self.display,
                self._first_over,
                "P7",
                f"{self.count:,} URLs; at most {MAX_URLS_PER_SITEMAP:,} in one file (this is "
                "the first one past the limit)",
            )
