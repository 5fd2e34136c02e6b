"""The settings that map URLs before anything else reads them: SITEMAPGEN_HOST_ALIASES (one
host name for another, on every scheme and port) and SITEMAPGEN_ORIGIN_MAP (crawl
prefixes to production prefixes), each read and checked whole, with an error naming the
setting, the value and what is allowed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..sitemaps.urls import UrlRejected, normalize_loc
from . import readers as read
from .defaults import DEFAULTS

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["host_aliases", "origin_map"]


def _host(value: object) -> str:
    """A bare host name, lower-case and in punycode; "" when ``value`` is anything else
    (a URL, a path, a port: an alias applies to one host on every scheme and port)."""
    if not isinstance(value, str) or not value.strip() or any(c in value for c in ":/@?#[]\\"):
        return ""
    try:
        return normalize_loc(f"http://{value.strip()}/").split("/")[2]
    except UrlRejected:
        return ""


def host_aliases(settings: BaseSettings) -> dict[str, str]:
    name = "SITEMAPGEN_HOST_ALIASES"
    raw = settings.getdict(name, DEFAULTS[name]) if settings.get(name) is not None else {}
    aliases = {}
    for alias, host in raw.items():
        key, value = _host(alias), _host(host)
        if not key or not value:
            raise ValueError(
                f"{name} maps {alias!r} to {host!r}: both must be host names without a port, "
                f"e.g. {{'example.com': 'www.example.com'}}."
            )
        aliases[key] = value
    return aliases


_MAP_EXAMPLE = "{'http://127.0.0.1:8000/': 'https://www.example.com/'}"
_PREFIX_RULE = "an absolute http(s) URL ending in '/', without query or fragment"


def _map_prefix(value: object) -> tuple[str, str | None]:
    """A prefix of SITEMAPGEN_ORIGIN_MAP, normalised as a ``<loc>`` is (so that it is a
    prefix of the locs it names), and what is wrong with it (None: nothing)."""
    if not isinstance(value, str):
        return "", "is no string"
    text = value.strip()
    if "://" not in text:
        return "", "is no absolute URL"
    try:
        prefix = normalize_loc(text)
    except UrlRejected as exc:
        return (
            "",
            "is no http(s) URL" if exc.reason == "bad_scheme" else f"is refused ({exc.reason})",
        )
    if "?" in text or "#" in text:
        return "", "has a query or fragment"
    if not text.endswith("/"):
        return "", "does not end in '/'"
    return prefix, None


def origin_map(settings: BaseSettings) -> tuple[tuple[str, str], ...]:
    """SITEMAPGEN_ORIGIN_MAP checked: each problem on a line of its own, all of them in
    one error (a map is written once, and fixed in one go)."""
    name = "SITEMAPGEN_ORIGIN_MAP"
    raw = read.raw_value(settings, name)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            pass  # refused below, as any other value that is no dict
    if not isinstance(raw, Mapping):
        raise ValueError(
            f"{name}={raw!r} is invalid: it must be a dict of crawl prefixes to production "
            f"prefixes, each {_PREFIX_RULE}, e.g. {_MAP_EXAMPLE}."
        )
    problems: list[str] = []
    entries: list[tuple[str, str, object, object]] = []  # crawl, production, as given
    for crawl_given, production_given in raw.items():
        crawl, crawl_problem = _map_prefix(crawl_given)
        production, production_problem = _map_prefix(production_given)
        for side, given, problem in (
            ("crawl prefix", crawl_given, crawl_problem),
            ("production prefix", production_given, production_problem),
        ):
            if problem is not None:
                problems.append(
                    f"{name} maps {crawl_given!r} to {production_given!r}: the {side} "
                    f"{given!r} {problem}; each side must be {_PREFIX_RULE}, e.g. {_MAP_EXAMPLE}."
                )
        if crawl_problem is None and production_problem is None:
            entries.append((crawl, production, crawl_given, production_given))
    for at, (crawl, _, given, _) in enumerate(entries):
        for other, _, other_given, _ in entries[at + 1 :]:
            outer, inner = (
                (given, other_given) if len(crawl) <= len(other) else (other_given, given)
            )
            if other == crawl:
                problems.append(
                    f"{name} names one crawl prefix twice, as {given!r} and {other_given!r}: "
                    f"a crawled URL may lie under one crawl prefix only; keep one of the two."
                )
            elif other.startswith(crawl) or crawl.startswith(other):
                problems.append(
                    f"{name} has the crawl prefix {inner!r} under the crawl prefix {outer!r}: "
                    f"a crawled URL may lie under one crawl prefix only; keep one of the two."
                )
    for _, production, given, production_given in entries:
        under = next((g for c, _, g, _ in entries if production.startswith(c)), None)
        if under is not None:
            problems.append(
                f"{name} maps {given!r} to {production_given!r}, which lies under the crawl "
                f"prefix {under!r}: its URLs would be mapped twice; a production prefix must "
                f"lie outside every crawl prefix."
            )
    if problems:
        raise ValueError("\n".join(problems))
    return tuple(sorted(((c, p) for c, p, _, _ in entries), key=lambda pair: -len(pair[0])))
