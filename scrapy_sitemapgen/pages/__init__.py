"""What a page's HTML and headers declare, one topic a module: robots directives
(:mod:`.robots`), canonical URLs (:mod:`.canonical`), the meta refresh target
(:mod:`.refresh`), images (:mod:`.images`), videos (:mod:`.videos`), hreflang alternates
(:mod:`.hreflang`), modification dates (:mod:`.dates`) and the content fingerprint
(:mod:`.fingerprint`), over the JSON-LD reader (:mod:`.jsonld`), the ``Link`` header parser
(:mod:`.links`), URL joining (:mod:`.hrefs`) and the page's elements (:mod:`.elements`).

Pure readers over the parsel selector Scrapy already cached for the response, so the page is
parsed once and shared with the spider. The elements they look at are gathered in one walk
of that tree (:class:`.elements.PageNodes`), which a caller reading several facts of one page
builds once and passes to every reader. No Scrapy imports, so the offline tools can reuse
them. They only *read*: URLs come back as ``urljoin(base, value.strip())`` and text and
dates come back raw, because the caller runs every URL through
:func:`sitemaps.urls.normalize_loc` and every date through :func:`sitemaps.facts.parse_lastmod`,
and counts what those reject. The pages are written by strangers, so nothing here raises on
broken markup, bad JSON or odd values. A value that cannot be read is left out.
"""
