"""Store -> files: staging each origin's set (``staging``, importable without Scrapy, for
the build's worker processes), delivering it locally or through Scrapy's feed storages
(``delivery``), one publish from end to end (``publisher``), its close report
(``close_report``) and the IndexNow submissions after it (``submissions``)."""
