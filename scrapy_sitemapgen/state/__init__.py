"""The state file's one owner: what the previous run published, per output and origin (the
files, the URL sets, the pages' content, IndexNow's entry fingerprints, the section
counts), read and written through :class:`.statefile.PublishState`, and healed before a
run reads it (:mod:`.repair`).

Every kind of note goes by one road (:mod:`.notes`): the previous run's notes of an origin
read in URL order, this run's written in URL order. All of the state file's SQL is here.
Nothing here imports Scrapy or Twisted (an import-linter contract holds it).
"""
