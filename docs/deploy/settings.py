"""Settings of the crawl that lists a static build under its production URLs
(docs/deploy.rst). The workflow's ``env`` gives the production prefix and the port."""

import os

BOT_NAME = "build"
SPIDER_MODULES = ["spider"]
ADDONS = {"scrapy_sitemapgen.Addon": 500}

# Where the build is served while it is crawled, and where its pages live in production.
STAGING_URL = f"http://127.0.0.1:{os.environ.get('PORT', '8765')}/"
SITE_URL = os.environ.get("SITE_URL", "https://docs.example.org/3.11/")

# Every URL of the build is listed under its production prefix, and a page whose
# canonical names its production URL (Sphinx's html_baseurl) is the page itself.
SITEMAPGEN_ORIGIN_MAP = {STAGING_URL: SITE_URL}
# The sitemaps go beside the pages: the index and robots.txt line name them there.
SITEMAPGEN_BASE_URL = SITE_URL
# The folder the deploy step takes the sitemaps from: one folder per origin.
SITEMAPGEN_URI = "sitemaps"
# What was published and each page's content: the CI cache keeps it between runs, so
# that a page whose content did not change keeps its lastmod.
SITEMAPGEN_STATE = ".sitemapgen/state.sqlite3"

# The gate's audit: every page's verdict, kept in a store file, and the sitemap that
# production serves now, read when the crawl is done. A URL it lists that the crawl did
# not reach is fetched from the build (the map read backwards), so a page the build lost
# is judged 404 even when no page links to it any more.
SITEMAPGEN_AUDIT = True
SITEMAPGEN_AUDIT_SITEMAPS = [os.environ.get("LIVE_SITEMAP", SITE_URL + "sitemap.xml")]
SITEMAPGEN_STORE = "_build/sitemapgen-store.sqlite3"
SITEMAPGEN_REPORT_DIR = "_build/sitemapgen-report"

LOG_LEVEL = "INFO"
TELNETCONSOLE_ENABLED = False
