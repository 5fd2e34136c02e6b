"""The benchmark harness: ``python -m benchmarks SUBCOMMAND`` (see ``benchmarks/__main__.py``).

Shared pieces, once each: :mod:`.measure` (wall, CPU, RSS), :mod:`.checks` (the output of a
run is checked before its time counts), :mod:`.website` (the served site and its spider),
:mod:`.feed` (the generated inputs), :mod:`.results` (the JSON result file and its schema),
:mod:`.tables` (the Markdown tables, from result files only).
"""
