"""Where recorded facts live until the sitemaps are written: SQLite for one process, Redis
for many, sorted runs for a feed; each backend a class the settings name."""
