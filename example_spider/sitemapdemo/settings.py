"""
Settings of the demo project.

Everything sitemap-related comes from the add-on; the project only turns it
on and says where to write. See the package README for every SITEMAPGEN_*
setting.
"""

from __future__ import annotations

BOT_NAME = "sitemapdemo"

SPIDER_MODULES = ["sitemapdemo.spiders"]
NEWSPIDER_MODULE = "sitemapdemo.spiders"

USER_AGENT = "sitemapdemo (scrapy-sitemapgen demo crawler)"

# The demo site has no robots.txt; asking for it would only add two 404s per
# run to the log.
ROBOTSTXT_OBEY = False

# A local static site answers fast; a modest limit keeps the log readable and
# is polite if someone points the spider at a real site.
CONCURRENT_REQUESTS = 8

ADDONS = {
    "scrapy_sitemapgen.Addon": 500,
}
# Relative to the folder the crawl runs in; demo.py passes an absolute path.
SITEMAPGEN_URI = "sitemaps"

LOG_LEVEL = "INFO"
TELNETCONSOLE_ENABLED = False
