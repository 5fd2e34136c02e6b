"""Store -> files: staging each origin's set, delivering it locally or through Scrapy's feed
storages."""
