"""The features' interface (scrapy_sitemapgen.features): a feature that watches entries is
one module with a factory and one line in ``FEATURES``; staging calls only the hooks it
overrides, shows it every entry written a block at a time, and stages its files before
robots.txt (docs/architecture.rst, "adding a feature that watches entries")."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from scrapy.settings import Settings

from scrapy_sitemapgen import features
from scrapy_sitemapgen.features.origin_watch import ExtraFile, OriginWatch, overridden
from scrapy_sitemapgen.publish.staging import stage_origin
from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.facts import UrlFacts
from scrapy_sitemapgen.sitemaps.urls import origin_of
from scrapy_sitemapgen.state.statefile import PublishState
from scrapy_sitemapgen.state.url_notes import URL_BLOCK
from scrapy_sitemapgen.stats import Tally

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    import pytest

    from scrapy_sitemapgen.features.origin_watch import OriginStart
    from scrapy_sitemapgen.publish.staging import OriginSet
    from scrapy_sitemapgen.sitemaps.urls import Origin

ROOT = "https://example.com/"
NOW = datetime(2026, 1, 2, tzinfo=timezone.utc)


class _Source:
    """One origin's entries, in loc order, with no content fingerprints."""

    has_content = False

    def __init__(self, count: int) -> None:
        self._entries = [UrlFacts(f"{ROOT}p{n:06d}") for n in range(count)]

    def origins(self) -> list[Origin]:
        return [origin_of(ROOT)]

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return iter(self._entries)

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return iter(())

    def canonical_targets(self, origin: Origin) -> dict[str, str]:
        return {}

    def most_entries(self, origin: Origin) -> int:
        return len(self._entries)


class _Counting(OriginWatch):
    """A feature of the kind the interface is for: counts the entries written and
    publishes the count as a file of its own."""

    def __init__(self) -> None:
        self.blocks: list[int] = []
        self.closed = False

    def block(self, entries: list[UrlFacts]) -> None:
        self.blocks.append(len(entries))

    def close(self) -> None:
        self.closed = True

    def finish(self, origin_set: OriginSet) -> list[ExtraFile]:
        return [ExtraFile("count.txt", "count", str(sum(self.blocks)).encode())]


def test_a_feature_plugs_in_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watches: list[_Counting] = []

    def counting(start: OriginStart) -> _Counting | None:
        if "xml" not in start.config.formats:  # a feature's factory reads its setting
            return None
        watches.append(_Counting())
        return watches[-1]

    monkeypatch.setattr(features, "FEATURES", (*features.FEATURES, counting))
    config = Config.from_settings(
        Settings({"SITEMAPGEN_ENABLED": True, "SITEMAPGEN_URI": str(tmp_path / "out")})
    )
    count = URL_BLOCK + 7
    staging = tmp_path / "staging"
    staging.mkdir()
    state = PublishState(tmp_path / "state.sqlite3")
    try:
        origin_set = stage_origin(
            _Source(count), origin_of(ROOT), config, NOW, state, Tally(), staging
        )
    finally:
        state.close()
    assert origin_set is not None
    (watch,) = watches
    assert watch.blocks == [URL_BLOCK, 7]  # one call per block, every entry seen once
    assert watch.closed
    assert (staging / "count.txt").read_text() == str(count)
    # Its file goes out with the others, before robots.txt, the manifest and the index.
    kinds = [record.kind for record in origin_set.records]
    assert kinds[-4:] == ["count", "robots", "manifest", "index"]


def test_staging_calls_only_the_hooks_a_watch_overrides() -> None:
    class Surveying(OriginWatch):
        def survey(self, entries: Iterable[UrlFacts]) -> Iterable[UrlFacts]:
            return entries

    plain, surveying, counting = OriginWatch(), Surveying(), _Counting()
    watches = [plain, surveying, counting]
    assert overridden(watches, "survey") == [surveying]
    assert overridden(watches, "block") == [counting]
    assert overridden(watches, "rewrite") == []
