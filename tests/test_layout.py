"""The package's rooms as docs/architecture.rst describes them: every module listed there,
none over 700 lines, no two with one file name, and comments that say why rather than
which round of measurement a line came from (the figures are in benchmarks/RECORD.md)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import scrapy_sitemapgen

PACKAGE = Path(scrapy_sitemapgen.__file__).parent
ARCHITECTURE = Path(__file__).parent.parent / "docs" / "architecture.rst"
MODULES = sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


def test_no_module_is_over_700_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in MODULES
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 700
    }
    assert long == {}


def test_no_two_modules_share_a_file_name() -> None:
    names = Counter(path.name for path in MODULES if path.name != "__init__.py")
    assert [name for name, count in names.items() if count > 1] == []


def test_no_comment_points_at_the_record_of_measurements() -> None:
    pointing = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in MODULES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "RECORD.md" in line or re.search(r"\b(?:first|second|tenth|eleventh)\s+round\b", line)
    ]
    assert pointing == []


def test_the_architecture_page_lists_every_module() -> None:
    page = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [
        str(path.relative_to(PACKAGE))
        for path in MODULES
        if path.name != "__init__.py" and f"``{path.name}``" not in page
    ]
    assert missing == []
