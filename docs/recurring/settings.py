"""Settings of a crawl that runs on a schedule and keeps a live site's sitemaps up to date
(docs/recurring.rst). Run ``scrapy crawl sitemaps`` in the folder of ``scrapy.cfg``."""

BOT_NAME = "sitemaps"
SPIDER_MODULES = ["spider"]
ADDONS = {"scrapy_sitemapgen.Addon": 500}

# Your own site, crawled politely: robots.txt obeyed, two requests at a time.
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS_PER_DOMAIN = 2

# The sitemaps, one folder per origin, and the state file beside them
# (.sitemapgen-state.sqlite3): keep this folder between runs.
SITEMAPGEN_URI = "sitemaps"

# Scrapy's HTTP cache: every page as last fetched, with its ETag and Last-Modified, kept
# between runs in .scrapy/httpcache beside scrapy.cfg. Each run asks the site whether a
# page changed (If-None-Match, If-Modified-Since); an unchanged page answers 304 Not
# Modified, without a body, and the crawl reads the cached copy.
HTTPCACHE_ENABLED = True
HTTPCACHE_POLICY = "scrapy.extensions.httpcache.RFC2616Policy"
HTTPCACHE_DIR = "httpcache"
HTTPCACHE_GZIP = True
# A page sent with "Cache-Control: no-cache" is asked about like the others, where the
# policy would fetch it in full on every run.
HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS = ["no-cache"]
# "max-age=0": ask about every cached page on every run, never serve one unasked. This
# replaces Scrapy's default headers, so its two are repeated.
DEFAULT_REQUEST_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en",
    "Cache-Control": "max-age=0",
}

LOG_LEVEL = "INFO"
TELNETCONSOLE_ENABLED = False
