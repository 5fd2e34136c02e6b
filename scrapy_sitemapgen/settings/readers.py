"""The kinds of setting value (a flag, a number in a range, a list, regular expressions,
rules, a choice), each read and checked with the one line that names the setting, the
value given and what is allowed."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..sitemaps.facts import FactRejected
from .defaults import DEFAULTS

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.settings import BaseSettings

__all__ = [
    "Rule",
    "choice",
    "compiled",
    "flag",
    "integer",
    "number",
    "patterns",
    "raw_value",
    "rules",
    "seconds",
    "sequence",
    "strings",
]

#: A (regular expression, value) pair of SITEMAPGEN_CHANGEFREQ or SITEMAPGEN_PRIORITY.
Rule = tuple["re.Pattern[str]", str]


def raw_value(settings: BaseSettings, name: str) -> Any:
    value = settings.get(name)
    return DEFAULTS[name] if value is None else value


def flag(settings: BaseSettings, name: str) -> bool:
    try:
        return settings.getbool(name, DEFAULTS[name])
    except ValueError:
        raise ValueError(
            f"{name}={settings.get(name)!r} is invalid: use True or False (or 1/0, 'true'/'false')."
        ) from None


def number(raw: object) -> float | None:
    """``raw`` as a float (a string of digits too), or None when it is none (a bool is no
    number, though Python counts it as one)."""
    if isinstance(raw, bool):
        return None
    try:
        return float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def seconds(settings: BaseSettings, name: str, low: float, high: float) -> float:
    raw = raw_value(settings, name)
    value = number(raw)
    if value is None or not low <= value <= high:
        raise ValueError(
            f"{name}={raw!r} is invalid: it must be a number of seconds from {low} to {high:g}."
        )
    return value


def integer(settings: BaseSettings, name: str, low: int, high: int, why: str) -> int:
    raw = raw_value(settings, name)
    try:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise TypeError
        value = int(raw)
    except (TypeError, ValueError):
        value = None
    if value is None or not low <= value <= high:
        raise ValueError(
            f"{name}={raw!r} is invalid: it must be an integer from {low:,} to {high:,} ({why})."
        )
    return value


def sequence(settings: BaseSettings, name: str, split: bool = True) -> list[Any]:
    """A list setting; a string is JSON (from ``-s``), else a comma-separated list, or one
    item when commas belong to the value (a regular expression such as ``a{1,2}``)."""
    raw = raw_value(settings, name)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = [part.strip() for part in raw.split(",")] if split else [raw]
            raw = [part for part in raw if part.strip()]
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"{name}={raw!r} is invalid: it must be a list.")
    return list(raw)


def strings(settings: BaseSettings, name: str, what: str, split: bool = True) -> list[str]:
    values = sequence(settings, name, split)
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise ValueError(f"{name}={values!r} is invalid: it must be a list of {what}.")
    return [v.strip() for v in values]


def compiled(name: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"{name} holds {pattern!r}, which is no regular expression: {exc}."
        ) from None


def patterns(settings: BaseSettings, name: str) -> tuple[re.Pattern[str], ...]:
    patterns = strings(settings, name, "regular expressions", split=False)
    return tuple(compiled(name, p) for p in patterns)


def rules(
    settings: BaseSettings, name: str, parse: Callable[[object], str], allowed: str
) -> tuple[Rule, ...]:
    rules = []
    for rule in sequence(settings, name):
        if not isinstance(rule, (list, tuple)) or len(rule) != 2 or not isinstance(rule[0], str):
            raise ValueError(
                f"{name} holds {rule!r}, which is not a (regular expression, value) pair."
            )
        try:
            value = parse(rule[1])
        except FactRejected:
            raise ValueError(f"{name} holds {rule!r}: its value must be {allowed}.") from None
        rules.append((compiled(name, rule[0]), value))
    return tuple(rules)


def choice(settings: BaseSettings, name: str, allowed: tuple[str, ...]) -> str:
    raw = raw_value(settings, name)
    if not isinstance(raw, str) or raw.strip().lower() not in allowed:
        raise ValueError(f"{name}={raw!r} is invalid: it must be one of {', '.join(allowed)}.")
    return raw.strip().lower()
