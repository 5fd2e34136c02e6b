"""The features that watch each origin's entries as staging writes them: chrome images,
hreflang clusters, the changes feed, IndexNow, the lastmods published for the audit. Each is a module with a factory that gives
an origin's watch (:class:`.origin_watch.OriginWatch`) when its setting is on; :data:`FEATURES`
lists them, in the order staging calls them. Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .changes_feed import changes_feed
from .chrome_images import chrome_images
from .entry_prints import entry_prints
from .hreflang_clusters import hreflang_clusters
from .published_lastmods import published_lastmods

if TYPE_CHECKING:
    from collections.abc import Callable

    from .origin_watch import OriginStart, OriginWatch

__all__ = ["FEATURES", "origin_watches"]

#: Every feature, in the order its hooks are called: the chrome images are left out before
#: the clusters' alternates are written; the changes feed's file is staged before
#: IndexNow's key file.
FEATURES: tuple[Callable[[OriginStart], OriginWatch | None], ...] = (
    chrome_images,
    hreflang_clusters,
    changes_feed,
    entry_prints,
    published_lastmods,
)


def origin_watches(start: OriginStart) -> list[OriginWatch]:
    """The watches of the features that are on for the origin ``start`` tells of."""
    return [watch for feature in FEATURES if (watch := feature(start)) is not None]
