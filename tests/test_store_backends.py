"""Store backends are classes that SITEMAPGEN_STORE_BACKENDS names per scheme: the defaults,
the errors at start-up, and a fourth backend (a class here, nothing else) in a real crawl
that publishes the same files as the SQLite store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.settings import Config
from scrapy_sitemapgen.sitemaps.codec import entry, fact_row
from scrapy_sitemapgen.sitemaps.merge import merge
from scrapy_sitemapgen.sitemaps.urls import origin_of
from scrapy_sitemapgen.store.base import FactStore
from scrapy_sitemapgen.store.redis import RedisFactStore
from scrapy_sitemapgen.store.sqlite import SqliteFactStore

if TYPE_CHECKING:
    from collections.abc import Iterator

    from typing_extensions import Self

    from scrapy_sitemapgen.sitemaps.facts import UrlFacts
    from scrapy_sitemapgen.sitemaps.urls import Origin


class MemoryFactStore(FactStore):
    """A fourth backend: rows in a dict, merged by the pure rule. Opened by location, so
    two crawls naming the same ``mem://`` location share nothing but the name."""

    opened: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.rows: dict[str, tuple[Any, ...]] = {}

    @classmethod
    def from_config(cls, config: Config, location: str) -> Self:
        cls.opened.append(location)
        return cls()

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        row = fact_row(facts, from_item)
        old = self.rows.get(facts.loc)
        self.rows[facts.loc] = row if old is None else merge(old, row)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def origins(self) -> list[Origin]:
        return sorted({origin_of(loc) for loc in self.rows})

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        for loc in sorted(self.rows):
            if origin_of(loc) == origin:
                yield entry(loc, self.rows[loc])

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return (e for e in self.entries(origin) if e.news is not None)

    def __len__(self) -> int:
        return len(self.rows)


MEMORY = f"{__name__}.MemoryFactStore"


def config(**values: Any) -> Config:
    return Config.from_settings(Settings(values))


def test_default_backends() -> None:
    assert config().store is None
    assert config().store_backend is SqliteFactStore
    kept = config(SITEMAPGEN_STORE="kept/store.sqlite3")
    assert kept.store_backend is SqliteFactStore
    assert kept.store == str(Path("kept/store.sqlite3"))
    shared = config(SITEMAPGEN_STORE="redis://127.0.0.1:6379/2")
    assert shared.store_backend is RedisFactStore
    assert shared.store == "redis://127.0.0.1:6379/2"


def test_a_backend_for_a_new_scheme() -> None:
    chosen = config(SITEMAPGEN_STORE="mem://x", SITEMAPGEN_STORE_BACKENDS={"mem": MEMORY})
    assert chosen.store_backend is MemoryFactStore
    assert chosen.store == "mem://x"


def test_a_scheme_without_a_backend_is_refused_at_start() -> None:
    with pytest.raises(ValueError) as info:
        config(SITEMAPGEN_STORE="mem://x")
    message = str(info.value)
    assert "SITEMAPGEN_STORE='mem://x'" in message
    assert "'mem'" in message and "'redis'" in message and "SITEMAPGEN_STORE_BACKENDS" in message


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("no_such_module.Store", "No module named"),
        ("scrapy_sitemapgen.store.sqlite.NoSuchStore", "NoSuchStore"),
        ("scrapy_sitemapgen.sitemaps.urls.Origin", "from_config"),
    ],
)
def test_a_bad_backend_is_refused_at_start(path: str, why: str) -> None:
    with pytest.raises(ValueError) as info:
        config(SITEMAPGEN_STORE="mem://x", SITEMAPGEN_STORE_BACKENDS={"mem": path})
    message = str(info.value)
    assert f"SITEMAPGEN_STORE_BACKENDS['mem']={path!r}" in message
    assert why in message


def test_backends_must_be_a_mapping() -> None:
    with pytest.raises(ValueError) as info:
        config(SITEMAPGEN_STORE_BACKENDS=["mem"])
    assert "SITEMAPGEN_STORE_BACKENDS=['mem'] is invalid" in str(info.value)


def _published(folder: Path) -> dict[str, bytes]:
    """The urlsets (the index carries each file's time of change, which differs)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.glob("*/sitemap-*"))}


@deferred_f_from_coro_f
async def test_a_fourth_backend_in_a_crawl_publishes_what_sqlite_does(
    site: Any, crawl: Any, tmp_path: Path
) -> None:
    MemoryFactStore.opened.clear()
    memory = await crawl(
        {
            "SITEMAPGEN_STORE": "mem://crawl",
            "SITEMAPGEN_STORE_BACKENDS": {"mem": MEMORY},
            "SITEMAPGEN_URI": str(tmp_path / "memory"),
        },
        start_url=site.a.url("/"),
    )
    sqlite = await crawl({"SITEMAPGEN_URI": str(tmp_path / "sqlite")}, start_url=site.a.url("/"))
    # Opened and closed once when the crawl is built (a store that cannot be opened refuses
    # the start), then opened for the crawl.
    assert MemoryFactStore.opened == ["mem://crawl", "mem://crawl"]
    for crawler in (memory, sqlite):
        assert crawler.stats.get_value("finish_reason") == "finished"
    published = _published(tmp_path / "memory")
    assert published and published == _published(tmp_path / "sqlite")
    assert memory.stats.get_value("sitemapgen/urls/stored") == 12
