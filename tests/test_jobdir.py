"""JOBDIR: a paused crawl keeps what it recorded, and the resumed crawl's sitemaps are the
same as those of a crawl that was never interrupted."""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

from hypothesis import given, settings
from hypothesis import strategies as st
from queuelib.queue import LifoDiskQueue
from scrapy.pqueues import _path_safe
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_sitemapgen.crawl.resume import _broken

from .helpers import PROPERTY, PausingSpider, files, read_urls

if TYPE_CHECKING:
    from pathlib import Path


@deferred_f_from_coro_f
async def test_resumed_crawl_equals_uninterrupted_crawl(site, crawl, tmp_path: Path) -> None:
    start = site.a.url("/")
    whole = await crawl({"SITEMAPGEN_URI": str(tmp_path / "whole")}, start_url=start)
    assert whole.stats.get_value("finish_reason") == "finished"

    settings = {
        "JOBDIR": str(tmp_path / "job"),
        "SITEMAPGEN_URI": str(tmp_path / "resumed"),
        "CONCURRENT_REQUESTS": 1,  # so the pause comes well before the end of the site
    }
    first = await crawl(settings, spidercls=PausingSpider, start_url=start, pause_after=3)
    assert first.stats.get_value("finish_reason") == "shutdown"
    assert first.stats.get_value("sitemapgen/output/postponed") == 1
    recorded_before_pause = first.stats.get_value("sitemapgen/pages/recorded")
    assert 3 <= recorded_before_pause < 12
    assert not (tmp_path / "resumed").exists()  # a partial set never replaces a good one
    assert (tmp_path / "job" / "sitemapgen" / "store.sqlite3").is_file()

    second = await crawl(settings, spidercls=PausingSpider, start_url=start)
    assert second.stats.get_value("finish_reason") == "finished"
    # The resumed run did not fetch the pages from before the pause again...
    assert second.stats.get_value("sitemapgen/pages/recorded") == 12 - recorded_before_pause
    # ...yet its sitemaps list everything, exactly as the uninterrupted crawl's do.
    assert read_urls(tmp_path / "resumed") == read_urls(tmp_path / "whole") != {}
    assert files(tmp_path / "resumed") == files(tmp_path / "whole")
    for name in files(tmp_path / "whole"):
        if name.endswith(".gz"):  # urlsets carry no run time: byte-identical
            assert (tmp_path / "resumed" / name).read_bytes() == (
                tmp_path / "whole" / name
            ).read_bytes()


@deferred_f_from_coro_f
async def test_shutdown_without_jobdir_keeps_previous_output(site, crawl, tmp_path: Path) -> None:
    out = tmp_path / "out"
    await crawl(start_url=site.a.url("/"))
    before = {name: (out / name).read_bytes() for name in files(out)}
    crawler = await crawl(spidercls=PausingSpider, start_url=site.a.url("/"), pause_after=2)
    assert crawler.stats.get_value("finish_reason") == "shutdown"
    assert {name: (out / name).read_bytes() for name in files(out)} == before


@deferred_f_from_coro_f
async def test_write_on_shutdown_writes_the_partial_set(site, crawl, tmp_path: Path) -> None:
    crawler = await crawl(
        {"SITEMAPGEN_WRITE_ON_SHUTDOWN": True},
        spidercls=PausingSpider,
        start_url=site.a.url("/"),
        pause_after=2,
    )
    written = sum(len(urls) for urls in read_urls(tmp_path / "out").values())
    assert written == crawler.stats.get_value("sitemapgen/pages/recorded") >= 2


@deferred_f_from_coro_f
async def test_queue_file_a_kill_left_empty_is_removed(site, crawl, tmp_path: Path, caplog) -> None:
    """A SIGKILL right after Scrapy created a disk queue file leaves it empty (queuelib
    writes its header through a buffer). Scrapy then fails every push to that priority
    (struct.error) and the resumed crawl ends at once; the kill harness (python -m benchmarks kill) met this.
    The file holds no request, so it is removed, counted and logged, and the crawl lists
    the whole site."""
    start = site.a.url("/")
    whole = await crawl({"SITEMAPGEN_URI": str(tmp_path / "whole")}, start_url=start)
    # What the kill leaves: the queue of priority 0 for the site's download slot (its
    # host, as DownloaderAwarePriorityQueue names the folder), with no header.
    queue_file = tmp_path / "job" / "requests.queue" / _path_safe("127.0.0.1") / "0"
    queue_file.parent.mkdir(parents=True)
    queue_file.touch()
    crawler = await crawl(
        {"JOBDIR": str(tmp_path / "job"), "SITEMAPGEN_URI": str(tmp_path / "resumed")},
        start_url=start,
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert crawler.stats.get_value("sitemapgen/resume/queues_removed") == 1
    assert any(f"{queue_file}: without its header" in r.getMessage() for r in caplog.records)
    assert read_urls(tmp_path / "resumed") == read_urls(tmp_path / "whole") != {}
    assert whole.stats.get_value("sitemapgen/pages/recorded") == crawler.stats.get_value(
        "sitemapgen/pages/recorded"
    )


@deferred_f_from_coro_f
async def test_queue_file_with_a_torn_last_record_is_removed(
    site, crawl, tmp_path: Path, caplog
) -> None:
    """A pause (a clean close) leaves a disk queue file whose header counts its requests.
    The resumed crawl appends to it, a record's data then its size, through a buffer, and
    rewrites the header only when it closes: a kill can leave a record without its size at
    the end, under a count that includes it. The next resume pops it sooner or later:
    queuelib takes a size from the wrong bytes and raises OSError on every pop of that
    priority, and the crawl hangs. The file is removed, counted and logged, and the crawl
    lists the whole site (the store sends again what went to the file)."""
    start = site.a.url("/")
    whole = await crawl({"SITEMAPGEN_URI": str(tmp_path / "whole")}, start_url=start)
    # The queue of priority 0 for the site's download slot, as the kill leaves it: a count
    # of one, and the first bytes of a pickled request.
    torn = tmp_path / "job" / "requests.queue" / _path_safe("127.0.0.1") / "0"
    torn.parent.mkdir(parents=True)
    torn.write_bytes(
        b"\x00\x00\x00\x01"
        + b"\x80\x04\x95\x10\x01\x00\x00\x00\x00\x00\x00}\x94(\x8c\x03url\x94\x8c"
    )
    # Without the removal the crawl hangs on the failing pops: stop it instead.
    crawler = await crawl(
        {
            "JOBDIR": str(tmp_path / "job"),
            "SITEMAPGEN_URI": str(tmp_path / "resumed"),
            "CLOSESPIDER_TIMEOUT": 30,
        },
        start_url=start,
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert crawler.stats.get_value("sitemapgen/resume/queues_removed") == 1
    assert any(f"{torn}: a torn last record" in r.getMessage() for r in caplog.records)
    assert read_urls(tmp_path / "resumed") == read_urls(tmp_path / "whole") != {}
    assert whole.stats.get_value("sitemapgen/pages/recorded") == crawler.stats.get_value(
        "sitemapgen/pages/recorded"
    )


# --- the check, against queuelib's own pops --------------------------------------------------

record = st.binary(max_size=40).map(
    lambda b: pickle.dumps({"url": "http://127.0.0.1/" + b.hex()}, protocol=4)
)


@settings(PROPERTY, max_examples=300)
@given(
    before=st.lists(record, max_size=4),
    popped=st.integers(0, 4),
    after=st.lists(record, max_size=4),
    cut=st.integers(0, 400),
)
def test_broken_is_whether_queuelib_can_pop_what_the_file_counts(
    tmp_path_factory: Any, before: list[bytes], popped: int, after: list[bytes], cut: int
) -> None:
    """A queue closed cleanly (a pause), reopened, popped and pushed to, then cut at any
    byte by a kill (its header not rewritten). ``_broken`` answers None exactly when
    queuelib pops every request the header counts without failing, each one a record that
    was pushed."""
    path = tmp_path_factory.mktemp("q") / "0"
    queue = LifoDiskQueue(str(path))
    for blob in before:
        queue.push(blob)
    queue.close()
    queue = LifoDiskQueue(str(path))
    for _ in range(min(popped, len(before))):
        queue.pop()
    for blob in after:
        queue.push(blob)
    queue.f.flush()
    size = min(cut, queue.f.tell())
    queue.f.close()  # a kill: the header keeps the count of the clean close
    with path.open("r+b") as raw:
        raw.truncate(size)
    pushed = set(before) | set(after)
    verdict = _broken(path, pickled=True)
    if size < LifoDiskQueue.SIZE_SIZE:
        readable = False  # queuelib's open fails (struct.error), leaving its file open
    else:
        queue = LifoDiskQueue(str(path))
        try:
            readable = all(queue.pop() in pushed for _ in range(queue.size))
        except OSError:
            readable = False
        finally:
            queue.f.close()
    assert (verdict is None) == readable, (verdict, readable)
