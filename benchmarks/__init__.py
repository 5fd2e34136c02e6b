"""The benchmark harness: ``python -m benchmarks SUBCOMMAND`` (its command line is
:mod:`.cli`).

Shared pieces, once each: :mod:`.measure` (wall, CPU, RSS), :mod:`.checks` (the output of a
run is checked before its time counts), :mod:`.feed` (the generated inputs), :mod:`.results`
(the JSON result file and its schema), :mod:`.tables` (the Markdown tables, from result
files only). The generated site and its spider, and the reading of published files, are
the tests' (``tests/generated_site.py``, ``tests/published.py``, ``tests/kill_trial.py``):
the harness imports them, and the tests import nothing from the harness.
"""
