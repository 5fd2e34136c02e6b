"""The Scrapy adapters of a crawl: the spider middleware, the item pipeline, the resume
middleware and the exporter extension, each translating Scrapy objects and delegating;
and the built-in spider of ``scrapy sitemapgen-crawl``."""
