"""The pure sitemap layer: protocol limits, URLs, facts, records, merge rules,
the XML writer and the manifest.

Nothing here imports Scrapy or Twisted (an import-linter contract holds it), so the offline
build's worker processes import only this layer.
"""
