"""RedisFactStore: one store shared by the Scrapy processes of a multi-machine crawl
(scrapy-redis), with the same merge rules as the SQLite store, so a page seen by two
workers is one entry, and item facts amend page facts whatever order they arrive in.

Redis holds only what the sitemap needs, per origin: a sorted set of locs (read back in
loc order, in batches, so writing stays flat in memory), a hash from loc to the
record's columns, a sorted set of the URLs that pages left out as
``canonical_elsewhere`` name, and a hash from each URL linked to to its link sources
(:mod:`.links`, merged by a Lua script of their own). The merge runs in Redis (a Lua script), so concurrent workers cannot
interleave a read and a write of the same entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..plural import counted
from ..sitemaps.broken_links import BrokenLink, broken_why
from ..sitemaps.codec import REDIS_MERGE, redis_entry, redis_run, redis_value
from ..sitemaps.evidence import removes
from ..sitemaps.urls import Origin, origin_of
from . import link_sources as link_rows
from .base import FactStore, StoreError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from typing_extensions import Self

    from ..settings import Config
    from ..sitemaps.facts import UrlFacts

__all__ = ["RedisFactStore"]

_BATCH = 1000


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _origin(name: bytes | str) -> Origin:
    """An origin from the part of its keys (``scheme host port``)."""
    scheme, host, port = _text(name).split(" ")
    return Origin(scheme, host, int(port))


class RedisFactStore(FactStore):
    """:class:`~.base.FactStore` on a Redis server (``redis://host:port/db``), keys under
    ``prefix``. Records are sent in pipelined batches; a batch Redis refuses is counted in
    :attr:`lost` and reported as a :class:`StoreError`, and the crawl goes on."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "sitemapgen",
        batch_size: int = _BATCH,
        link_sources: int = 5,
    ) -> None:
        try:
            import redis
        except ImportError:
            raise StoreError(
                "SITEMAPGEN_STORE names a Redis server, but the redis package is not "
                "installed: pip install 'scrapy-sitemapgen[redis]'"
            ) from None
        self._errors: tuple[type[Exception], ...] = (redis.exceptions.RedisError, OSError)
        self.url = url
        self.prefix = prefix
        self.batch_size = batch_size
        self.lost = 0
        self._client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
        try:
            self._client.ping()
        except self._errors as exc:
            raise StoreError(f"cannot reach the Redis store {url}: {exc}") from exc
        self._merge = self._client.register_script(REDIS_MERGE)
        self._merge_links = self._client.register_script(link_rows.REDIS_MERGE)
        #: The links recorded since the last flush, a row per target.
        self._links = link_rows.LinkBatch(link_sources)
        self._pipe = self._client.pipeline(transaction=False)
        self._waiting = 0
        #: Whether this process has marked the store as holding alternates.
        self._alternates_marked = False
        #: The run this process records for (:meth:`start_run`).
        self._run = 0

    @classmethod
    def from_config(cls, config: Config, location: str) -> Self:
        return cls(location, prefix=config.redis_prefix, link_sources=config.link_sources)

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    @staticmethod
    def _origin_key(origin: Origin) -> str:
        """The origin's part of its Redis keys: ``scheme host port``, not
        :func:`~..sitemaps.urls.origin_key`'s root. The keys are the data layout every
        worker of a crawl reads and writes, and they outlive a process (a paused crawl
        resumes on them): a worker or a resume on another form would split each origin in
        two, and the origins set could not be read back by older workers."""
        return f"{origin.scheme} {origin.host} {origin.port}"

    def record(self, facts: UrlFacts, *, from_item: bool = False) -> None:
        origin = self._origin_key(origin_of(facts.loc))
        self._merge(
            keys=[self._key("origins"), self._key("locs", origin), self._key("facts", origin)],
            args=[origin, facts.loc, redis_value(facts, from_item, self._run)],
            client=self._pipe,
        )
        if facts.alternates and not self._alternates_marked:
            # Once per process, in the batch that records it: has_alternates() then
            # answers the publish without reading every entry.
            self._pipe.set(self._key("alternates"), "1")
            self._alternates_marked = True
        self._waiting += 1
        if self._waiting >= self.batch_size:
            self.flush()

    def start_run(self, *, resumed: bool) -> None:
        """The first worker to start after the store was published (or on a new store)
        starts a run; the others join it. A run's verdicts are its own, and the rows an
        earlier run recorded are :meth:`earlier`."""
        self._run = self._current_run()
        if resumed:
            return
        if self._run:  # a run exists: joined, unless it was published (one worker takes that)
            taking = self._client.pipeline(transaction=True)
            taking.get(self._key("published"))
            taking.delete(self._key("published"))
            published, _ = taking.execute()
            if published is None:
                return
        self._run = int(self._client.incr(self._key("run")))
        earlier = any(
            self._client.zcard(self._key("locs", self._origin_key(o))) for o in self.origins()
        )
        self._client.set(self._key("earlier"), "1" if earlier else "0")
        judged = self._key("judged_origins")
        for name in self._client.smembers(judged):
            origin = _text(name)
            self._client.delete(self._key("judged", origin), self._key("judgedlocs", origin))
        self._client.delete(judged)
        linked = self._key("links_origins")
        for name in self._client.smembers(linked):
            self._client.delete(self._key("links", _text(name)))
        self._client.delete(linked)

    def finish_run(self) -> None:
        self._client.set(self._key("published"), "1")

    def _current_run(self) -> int:
        value = self._client.get(self._key("run"))
        return 0 if value is None else int(value)

    def judge(self, loc: str, verdict: str) -> None:
        origin = self._origin_key(origin_of(loc))
        pipe = self._pipe
        pipe.sadd(self._key("judged_origins"), origin)
        pipe.zadd(self._key("judgedlocs", origin), {loc: 0})
        pipe.hset(self._key("judged", origin), loc, verdict)
        if removes(verdict):
            pipe.hdel(self._key("facts", origin), loc)
            pipe.zrem(self._key("locs", origin), loc)
        self._waiting += 1
        if self._waiting >= self.batch_size:
            self.flush()

    def judged(self, origin: Origin) -> Iterator[tuple[str, str]]:
        self.flush()
        key = self._origin_key(origin)
        verdicts = self._key("judged", key)
        for locs in self._batches(self._key("judgedlocs", key)):
            for loc, verdict in zip(locs, self._client.hmget(verdicts, locs)):
                if verdict is not None:
                    yield _text(loc), _text(verdict)

    def judged_origins(self) -> list[Origin]:
        self.flush()
        return sorted(_origin(name) for name in self._client.smembers(self._key("judged_origins")))

    def record_links(self, source: str, targets: Iterable[str]) -> None:
        self._links.add(source, targets)
        self._waiting += 1
        if self._waiting >= self.batch_size:
            self.flush()

    def _send_links(self) -> None:
        """The batch of links into the pipeline: one merge per target."""
        limit = str(self._links.limit)
        origins = set()
        for target, count, sources in self._links.take():
            try:
                origin = self._origin_key(origin_of(target))
            except (ValueError, KeyError):  # a port out of range: no sitemap can list it
                continue
            origins.add(origin)
            self._merge_links(
                keys=[self._key("links", origin)],
                args=[target, count, limit, *sources],
                client=self._pipe,
            )
        if origins:
            self._pipe.sadd(self._key("links_origins"), *origins)

    def broken_links(self, origin: Origin | None = None) -> Iterator[BrokenLink]:
        for each in self.judged_origins() if origin is None else [origin]:
            links = self._key("links", self._origin_key(each))
            broken = [(loc, verdict) for loc, verdict in self.judged(each) if broken_why(verdict)]
            for at in range(0, len(broken), self.batch_size):
                batch = broken[at : at + self.batch_size]
                rows = self._client.hmget(links, [loc for loc, _ in batch])
                for (loc, verdict), row in zip(batch, rows):
                    if row is not None:
                        count, sources = link_rows.decode(row)
                        yield BrokenLink(loc, verdict, count, sources)

    def earlier(self, origin: Origin) -> Iterator[str]:
        self.flush()
        if self._client.get(self._key("earlier")) != b"1":
            return
        run = self._current_run()
        key = self._origin_key(origin)
        facts_key = self._key("facts", key)
        for locs in self._batches(self._key("locs", key)):
            for loc, row in zip(locs, self._client.hmget(facts_key, locs)):
                if row is not None:
                    recorded = redis_run(row)
                    if recorded is None or recorded < run:
                        yield _text(loc)

    def record_canonical(self, target: str) -> None:
        origin = self._origin_key(origin_of(target))
        self._pipe.zadd(self._key("canonical", origin), {target: 0})
        self._waiting += 1
        if self._waiting >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if not self._waiting:
            return
        if self._links:
            self._send_links()
        waiting, self._waiting = self._waiting, 0
        try:
            self._pipe.execute()
        except self._errors as exc:
            self.lost += waiting
            self._alternates_marked = False  # the mark may have been in the lost batch
            self._pipe = self._client.pipeline(transaction=False)
            raise StoreError(
                f"the Redis store {self.url} lost {counted(waiting, 'record')}: {exc}"
            ) from exc

    def origins(self) -> list[Origin]:
        self.flush()
        return sorted(_origin(name) for name in self._client.smembers(self._key("origins")))

    def entries(self, origin: Origin) -> Iterator[UrlFacts]:
        self.flush()
        key = self._origin_key(origin)
        facts_key = self._key("facts", key)
        for locs in self._batches(self._key("locs", key)):
            rows = self._client.hmget(facts_key, locs)
            for loc, row in zip(locs, rows):
                if row is None:
                    continue
                yield redis_entry(_text(loc), row)

    def canonical_targets(self, origin: Origin) -> Iterator[str]:
        self.flush()
        for targets in self._batches(self._key("canonical", self._origin_key(origin))):
            for target in targets:
                yield _text(target)

    def _batches(self, key: str) -> Iterator[list[bytes | str]]:
        """The members of the sorted set ``key`` in lex order (each scored 0), a batch at
        a time."""
        start = b"-"
        while True:
            members = self._client.zrangebylex(key, start, b"+", start=0, num=self.batch_size)
            if not members:
                return
            yield members
            start = b"(" + _text(members[-1]).encode()

    def news_entries(self, origin: Origin) -> Iterator[UrlFacts]:
        return (facts for facts in self.entries(origin) if facts.news is not None)

    def has_alternates(self) -> bool:
        """Whether some page recorded declares alternates (a mark any worker set; one
        left by an earlier crawl on the same prefix only costs the publish a pass)."""
        self.flush()
        return bool(self._client.exists(self._key("alternates")))

    def __len__(self) -> int:
        self.flush()
        return sum(
            int(self._client.zcard(self._key("locs", self._origin_key(o)))) for o in self.origins()
        )

    def coordination(self) -> RedisFactStore:
        """Several crawl processes share the store; it keeps their count and the writer's
        lock. (It keeps no request journal: scrapy-redis keeps its queue in Redis.)"""
        return self

    def worker_started(self) -> None:
        """Count a worker in. The first worker of a crawl releases the writer's lock an
        earlier crawl on the same prefix won, or that crawl's sitemaps would be the last
        ever written for a day (the lock's expiry)."""
        if int(self._client.incr(self._key("workers"))) == 1:
            self._client.delete(self._key("writer"))

    def worker_finished(self) -> bool:
        """True for the last worker to finish that also wins the writer's lock."""
        if int(self._client.decr(self._key("workers"))) > 0:
            return False
        return bool(self._client.set(self._key("writer"), "1", nx=True, ex=24 * 3600))

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._client.close()

    def raw(self) -> Any:
        """The redis client, for tools and tests."""
        return self._client
