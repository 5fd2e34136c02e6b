"""Response -> :class:`~..sitemaps.verdicts.Verdict`: why each URL the crawl judged is in
the sitemap or out of it, kept for the audit (``SITEMAPGEN_AUDIT``).

The listing rules stay in :mod:`.extract`; this module only reads what they decided
(the facts, or the exclusion the reporter was told of) and the redirects Scrapy followed
on the way to the response.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..audit.live import key_of
from ..sitemaps.verdicts import LISTED, REDIRECTED, SOURCE_CRAWL, Verdict

if TYPE_CHECKING:
    from scrapy.http import Response

    from ..settings import Config
    from ..sitemaps.facts import UrlFacts
    from ..stats import Reporter

__all__ = ["response_verdicts"]


def response_verdicts(
    response: Response,
    facts: UrlFacts | None,
    reporter: Reporter | None,
    config: Config,
    source: str = SOURCE_CRAWL,
) -> list[Verdict]:
    """The verdict of the response's URL (``facts``: what :func:`.extract.page_facts`
    gave; ``reporter``: the one it reported to, read for the reason when it gave None;
    None: a status refused before the listing rules ran), and one for each URL that
    redirected to it."""
    status = response.status
    if facts is not None:
        verdict = Verdict(
            facts.loc,
            LISTED,
            status,
            lastmod=facts.lastmod,
            source=source,
            images=len(facts.images),
        )
    else:
        exclusion = reporter.last_exclusion if reporter is not None else None
        skip = reporter.last_skip if reporter is not None else None
        detail = None
        if exclusion is not None:
            name, detail = f"excluded/{exclusion[0]}", exclusion[1]
        elif skip is not None:
            name = f"skipped/{skip}"
        else:
            name = f"excluded/status/{status}"
        if detail is None and 300 <= status < 400 and b"Location" in response.headers:
            location = response.headers.get(b"Location") or b""
            # In the store's terms, as every URL of a verdict: a redirect to a page on a
            # mapped origin names its production URL (SITEMAPGEN_ORIGIN_MAP).
            detail = key_of(response.urljoin(location.decode("latin-1")), config.url_policy)
        verdict = Verdict(
            key_of(response.url, config.url_policy), name, status, detail, source=source
        )
    verdicts = [verdict]
    request = response.request
    if request is not None and request.meta.get("redirect_urls"):
        reasons = request.meta.get("redirect_reasons") or []
        for at, url in enumerate(request.meta["redirect_urls"]):
            key = key_of(url, config.url_policy)
            if key == verdict.url:
                continue
            reason = reasons[at] if at < len(reasons) else None
            code = reason if isinstance(reason, int) else None
            verdicts.append(Verdict(key, REDIRECTED, code, verdict.url, source=source))
    return verdicts
