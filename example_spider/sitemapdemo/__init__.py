"""Example Scrapy project that turns on the scrapy-sitemapgen add-on."""
