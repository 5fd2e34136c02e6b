"""``python -m benchmarks SUBCOMMAND [options]``: the harness's command line
(:mod:`benchmarks.cli`)."""

import sys

from .cli import main

sys.exit(main())
