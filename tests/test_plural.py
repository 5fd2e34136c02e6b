"""Every line the package prints counts in the right number (issue 53): "1 finding", "2
findings", never "1 findings" or "file(s)". The pure wording, then the lines that use it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from scrapy_sitemapgen.plural import counted, noun, verb

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_sitemapgen"


@pytest.mark.parametrize(
    ("count", "singular", "expected"),
    [
        (0, "finding", "0 findings"),
        (1, "finding", "1 finding"),
        (2, "finding", "2 findings"),
        (1, "sitemap file", "1 sitemap file"),
        (3, "sitemap file", "3 sitemap files"),
        (1, "entry", "1 entry"),
        (2, "entry", "2 entries"),
        (2, "sitemap index", "2 sitemap indexes"),
        (1, "more origin", "1 more origin"),
        (20000, "URL", "20000 URLs"),
    ],
)
def test_counted(count: int, singular: str, expected: str) -> None:
    assert counted(count, singular) == expected


def test_grouped_and_irregular() -> None:
    assert counted(1204, "URL", grouped=True) == "1,204 URLs"
    assert counted(1, "URL", grouped=True) == "1 URL"
    assert noun(2, "a JSON object", "JSON objects") == "JSON objects"
    assert noun(1, "a JSON object", "JSON objects") == "a JSON object"


@pytest.mark.parametrize(
    ("count", "singular", "expected"),
    [
        (1, "is", "is"),
        (2, "is", "are"),
        (0, "was", "were"),
        (3, "has", "have"),
        (2, "answers", "answer"),
        (1, "answers", "answers"),
    ],
)
def test_verb(count: int, singular: str, expected: str) -> None:
    assert verb(count, singular) == expected


def _texts(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module (f-strings' literal parts too), with their line."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_no_text_of_the_package_says_s_in_parentheses() -> None:
    """A guard on the source: "(s)" after a noun is how a count that ignores its number
    reads; ``http(s)`` (the schemes) is the one use that stays, and lxml's own message
    the validator rewords."""
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, text in _texts(path)
        if re.search(r"[a-z]\(s\)", text.replace("http(s)", "")) and "Missing child" not in text
    ]
    assert found == []
