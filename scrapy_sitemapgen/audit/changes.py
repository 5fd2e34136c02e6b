"""What changed since the previous audit of the same output: the findings of an origin's
last report (its ``audit.csv``, and the time its ``audit.json`` gives) compared with this
one's by (URL, finding), read before the new files replace them. Pure."""

from __future__ import annotations

import csv
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ..sitemaps.verdicts import Finding

__all__ = ["MAX_LISTED", "Changes", "Previous", "compare", "read_previous"]

logger = logging.getLogger(__name__)

#: New and fixed findings listed in the report (all are counted).
MAX_LISTED = 50


@dataclass
class Previous:
    """The findings of the previous audit in a folder, and when it was written (None: a
    report of a version that did not say)."""

    findings: set[tuple[str, str]]
    time: str | None


@dataclass
class Changes:
    """New and fixed findings since the previous audit (``previous`` None: there was
    none, so nothing was compared)."""

    previous: Previous | None = None
    new: list[tuple[str, str]] = field(default_factory=list)
    fixed: list[tuple[str, str]] = field(default_factory=list)
    new_count: int = 0
    fixed_count: int = 0

    def as_json(self) -> dict[str, object]:
        if self.previous is None:
            return {"previous": None, "new": None, "fixed": None}
        return {"previous": self.previous.time, "new": self.new_count, "fixed": self.fixed_count}


def read_previous(folder: Path) -> Previous | None:
    """The previous audit in ``folder``: None when there is none, or when its
    ``audit.csv`` cannot be read (logged once: the new report then compares nothing)."""
    path = folder / "audit.csv"
    if not path.is_file():
        return None
    try:
        with path.open(newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            if not reader.fieldnames or not {"url", "finding"} <= set(reader.fieldnames):
                raise ValueError("no url and finding columns")
            found = {(row["url"], row["finding"]) for row in reader}
    except (OSError, UnicodeDecodeError, ValueError, csv.Error) as exc:
        logger.warning(
            "Sitemap audit: the previous report's %(path)s cannot be read (%(why)s); this "
            "report compares nothing with it",
            {"path": path, "why": exc},
        )
        return None
    return Previous(found, _time(folder / "audit.json"))


def _time(path: Path) -> str | None:
    """When the report of ``audit.json`` was written, if it says (``audited``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    moment = data.get("audited") if isinstance(data, dict) else None
    return moment if isinstance(moment, str) else None


def compare(previous: Previous | None, findings: Iterable[Finding]) -> Changes:
    """The findings new in ``findings`` and those of ``previous`` no longer there (the
    first :data:`MAX_LISTED` of each in (URL, finding) order, and their counts)."""
    if previous is None:
        return Changes()
    current = {(f.url, f.finding) for f in findings}
    new = sorted(current - previous.findings)
    fixed = sorted(previous.findings - current)
    return Changes(previous, new[:MAX_LISTED], fixed[:MAX_LISTED], len(new), len(fixed))
