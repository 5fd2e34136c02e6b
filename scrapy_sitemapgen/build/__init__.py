"""The offline build (``scrapy sitemapgen-build --input``): a feed read into sorted runs on
disk (:mod:`.input_reader`, :mod:`.spills`, :mod:`.run_files`, :mod:`.run_merge`), the run
store that lists them as a crawl's store would (:mod:`.run_store`), and the worker
processes its origins are staged in (:mod:`.pool`, :mod:`.source`). No Scrapy here."""
