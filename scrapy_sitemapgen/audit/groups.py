"""One origin's findings grouped by their cause, so that a reader fixes a cause once
rather than reading its every URL: a ``listed_disallowed`` by the robots.txt rule that
decides (the rule line, its group's ``User-agent`` lines, the engines it blocks and
those it does not); an ``invalid_sitemap`` by its file; any other kind by the URL's
first path segment (``/releases/``; a page at the top level under ``/``), which is
where a site's sections, and most mistakes of a template or a rule, sit. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..sitemaps.robots_txt import decision_parts

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..sitemaps.verdicts import Finding

__all__ = ["GROUP_URLS", "MAX_GROUPS", "Group", "Groups", "group_findings", "path_prefix"]

#: Groups kept per finding kind, the largest first; the rest are counted.
MAX_GROUPS = 50
#: URLs kept per group, the first in report order.
GROUP_URLS = 5


@dataclass
class Group:
    """The findings of one kind that share a cause."""

    cause: str
    count: int = 0
    urls: list[str] = field(default_factory=list)
    #: For ``listed_disallowed``: the engines (of SITEMAPGEN_ROBOTS_USER_AGENTS) the rule
    #: blocks and those it does not, comma-separated.
    blocks: str | None = None
    allows: str | None = None

    def as_json(self) -> dict[str, object]:
        extra = {} if self.blocks is None else {"blocks": self.blocks, "allows": self.allows}
        return {"cause": self.cause, "count": self.count, "urls": self.urls, **extra}


@dataclass
class Groups:
    """One kind's groups, the largest first (at most :data:`MAX_GROUPS`), and how many
    more groups and findings there are."""

    groups: list[Group]
    more_groups: int = 0
    more_findings: int = 0

    def as_json(self) -> dict[str, object]:
        return {
            "groups": [g.as_json() for g in self.groups],
            "more_groups": self.more_groups,
            "more_findings": self.more_findings,
        }


def path_prefix(url: str) -> str:
    """The first path segment of ``url`` as a folder (``/releases/``), or ``/`` for a page
    at the top level."""
    path = urlsplit(url).path
    segment, slash, _ = path.lstrip("/").partition("/")
    return f"/{segment}/" if slash and segment else "/"


def _cause(finding: Finding) -> tuple[str, str | None, str | None]:
    if finding.finding == "invalid_sitemap":
        return finding.url, None, None
    if finding.finding == "listed_disallowed":
        # "<agent>: <rule> (group ...); blocks ...; not ...", or just the agent (a verdict
        # kept before the rule was recorded).
        agent, sep, decision = finding.detail.partition(": ")
        if not sep:
            return f"rule not recorded ({agent})", agent, ""
        rule, blocks, allows = decision_parts(decision)
        return rule, blocks, allows
    return path_prefix(finding.url), None, None


def group_findings(findings: Iterable[Finding]) -> dict[str, Groups]:
    """Finding kind -> its groups (the kinds present, in the order met)."""
    by_kind: dict[str, dict[str, Group]] = {}
    for finding in findings:
        cause, blocks, allows = _cause(finding)
        groups = by_kind.setdefault(finding.finding, {})
        group = groups.get(cause)
        if group is None:
            group = groups[cause] = Group(cause, blocks=blocks, allows=allows)
        group.count += 1
        if len(group.urls) < GROUP_URLS:
            group.urls.append(finding.url)
    result = {}
    for kind, groups in by_kind.items():
        ordered = sorted(groups.values(), key=lambda g: (-g.count, g.cause))
        kept, rest = ordered[:MAX_GROUPS], ordered[MAX_GROUPS:]
        result[kind] = Groups(kept, len(rest), sum(g.count for g in rest))
    return result
