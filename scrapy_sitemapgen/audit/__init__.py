"""The audit's report: what the live sitemaps get wrong against the crawl's verdicts, per
origin, as ``audit.csv``, ``urls.csv``, ``audit.json`` and ``report.html``. Pure: the crawl
and the ``sitemapgen-audit`` command both write it from a store's verdicts."""
