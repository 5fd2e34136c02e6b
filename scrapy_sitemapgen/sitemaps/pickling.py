"""How the records that cross to the offline build's worker processes are pickled.

A dataclass with ``slots=True`` is pickled through the ``__getstate__`` that
:mod:`dataclasses` gives it, which calls :func:`dataclasses.fields` each time. A broad
crawl's staging sends every origin to a worker, and the origins' entries in the run
store: what they cost there was worth a reduction of their own (benchmarks/RECORD.md).
(What comes back, each origin's set, has its own, flatter form:
``publish.staging.OriginSet``.) Pure: imports nothing of the package.
"""

from __future__ import annotations

from typing import Any

__all__ = ["by_fields"]


def by_fields(self: Any) -> tuple[Any, tuple[Any, ...]]:
    """``__reduce__`` for a dataclass whose fields are all positional ``__init__``
    arguments (no ``kw_only``, no ``init=False``): the class called again with the values
    of its ``__match_args__``, which :mod:`dataclasses` makes those fields' names, in
    order. A field added later is carried along, with no list here to keep in step."""
    cls = type(self)
    return cls, tuple([getattr(self, name) for name in cls.__match_args__])
