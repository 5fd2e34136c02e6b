"""A large origin of an offline build written in windows across the workers
(``publish/split.py``): real builds through ``scrapy sitemapgen-build --input``, each
in its own process, with 1, 2 and 3 workers. The files must not depend on the worker
count, must be the files of one pass where the byte limit does not cut a window, and a
window must start a new file where it does."""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys
from typing import TYPE_CHECKING
from xml.etree import ElementTree

import pytest

from scrapy_sitemapgen.sitemaps.urls import Origin

from .helpers import files, read_entries

if TYPE_CHECKING:
    from pathlib import Path

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
BIG = "https://big.example"
SMALL = "http://small.example:8080"
BIG_NAME = Origin("https", "big.example", 443).name
#: The big origin's windows: MAX_URLS URLs each, split from SPLIT records.
MAX_URLS = 1000
SPLIT = 5000
#: The logo, on every page of the big origin: the site's chrome at any share below 1.
LOGO = f"{BIG}/static/logo.png"


def _feed(path: Path) -> dict[str, dict[str, object]]:
    """A feed of 15,000 records: most on the big origin (URLs of varied lengths, so that
    a byte limit cuts its windows in different places; about one record in twenty a
    repeat of an earlier page, with a newer lastmod, so that repeats meet across the
    runs), the rest on a small one. Returns what each big-origin URL must end up with:
    its newest lastmod and its images without the logo."""
    rng = random.Random(54)
    expected: dict[str, dict[str, object]] = {}
    seen: list[str] = []
    with path.open("w") as feed:
        for n in range(15_000):
            if seen and rng.random() < 0.05:
                loc = rng.choice(seen)
                lastmod = f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
                feed.write(json.dumps({"loc": loc, "lastmod": lastmod}) + "\n")
                if loc.startswith(BIG):
                    old = expected[loc]["lastmod"]
                    expected[loc]["lastmod"] = max(str(old), lastmod)
                continue
            root = BIG if rng.random() < 0.85 else SMALL
            loc = f"{root}/p/{n}-{'w' * rng.randrange(120)}"
            if rng.random() < 0.1:
                loc += "?a=1&b=2"
            lastmod = f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
            own = [f"{BIG}/img/{n}-{k}.jpg" for k in range(rng.randint(0, 2))]
            record = {"loc": loc, "lastmod": lastmod, "images": [LOGO, *own]}
            feed.write(json.dumps(record) + "\n")
            seen.append(loc)
            if root == BIG:
                expected[loc] = {"lastmod": lastmod, "images": own}
    return expected


def _build(cwd: Path, feed: Path, out: Path, workers: int, *settings: str) -> str:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "sitemapgen-build",
            "--input",
            str(feed),
            "--workers",
            str(workers),
            "-s",
            f"SITEMAPGEN_URI={out}",
            "-s",
            f"SITEMAPGEN_STATE={out}.state",
            "-s",
            f"SITEMAPGEN_MAX_URLS={MAX_URLS}",
            "-s",
            "LOG_LEVEL=INFO",
            *(arg for setting in settings for arg in ("-s", setting)),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return result.stderr


def _stats(stderr: str) -> dict[str, int]:
    dump = stderr[stderr.index("Dumping Scrapy stats:") :]
    return {key: int(value) for key, value in re.findall(r"'(sitemapgen/[^']+)': (\d+)", dump)}


def _urlsets(out: Path) -> dict[str, bytes]:
    """Every urlset of every origin (the files whose bytes hold no run time), by path."""
    return {
        name: (out / name).read_bytes()
        for name in sorted(files(out))
        if re.search(r"/sitemap-\d+\.xml\.gz$", name)
    }


def _counts(out: Path, origin: str) -> list[int]:
    """The URLs of each urlset of ``origin``, in the index's order."""
    index = ElementTree.fromstring((out / origin / "sitemap.xml").read_bytes())
    names = [loc.text.rsplit("/", 1)[1] for loc in index.iter(f"{NS}loc") if loc.text]
    return [
        len(ElementTree.fromstring(gzip.decompress((out / origin / name).read_bytes())))
        for name in names
    ]


@pytest.fixture(scope="module")
def feed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, object]]]:
    folder = tmp_path_factory.mktemp("split-feed")
    path = folder / "feed.jsonl"
    return path, _feed(path)


@pytest.mark.parametrize("max_bytes", [None, 150_000], ids=["urls", "bytes-cut"])
def test_1_2_and_3_workers_write_the_same_bytes(
    feed: tuple[Path, dict[str, dict[str, object]]], tmp_path: Path, max_bytes: int | None
) -> None:
    path, expected = feed
    limit = () if max_bytes is None else (f"SITEMAPGEN_MAX_BYTES={max_bytes}",)
    split = f"SITEMAPGEN_BUILD_SPLIT_URLS={SPLIT}"
    written = {
        workers: _urlsets(out)
        for workers in (1, 2, 3)
        if _build(tmp_path, path, out := tmp_path / f"w{workers}", workers, split, *limit)
    }
    assert written[1] == written[2] == written[3]
    # What the files hold: every URL of the big origin once, with its newest lastmod and
    # its images but the logo (on every page: chrome at the default share).
    entries = read_entries(tmp_path / "w2", BIG_NAME)
    assert sorted(entries) == sorted(expected)
    for loc, facts in expected.items():
        assert entries[loc]["lastmod"] == facts["lastmod"], loc
        assert entries[loc].get("images", []) == facts["images"], loc
    counts = _counts(tmp_path / "w3", BIG_NAME)
    assert sum(counts) == len(expected)
    # A window is MAX_URLS URLs and always starts a file: the URLs before each file that
    # starts a window are a multiple of MAX_URLS, and every multiple starts a file.
    before = [sum(counts[:n]) for n in range(len(counts))]
    assert set(range(0, len(expected), MAX_URLS)) <= set(before)
    if max_bytes is None:
        assert counts == [MAX_URLS] * (len(expected) // MAX_URLS) + [len(expected) % MAX_URLS]
        # The files of one pass, the split off.
        _build(tmp_path, path, whole := tmp_path / "whole", 2, "SITEMAPGEN_BUILD_SPLIT_URLS=0")
        assert _urlsets(whole) == written[2]
    else:
        assert len(counts) > len(expected) // MAX_URLS + 1  # the byte limit cut windows
        assert all(count <= MAX_URLS for count in counts)


def test_with_features_on_the_split_writes_what_one_pass_writes(
    feed: tuple[Path, dict[str, dict[str, object]]], tmp_path: Path
) -> None:
    """Chrome images counted on the survey, duplicates by content asked for (a feed has
    no content: nothing to leave out), changefreq rules: the files, and the chrome images'
    count, are those of one pass over the whole origin."""
    path, expected = feed
    settings = (
        "SITEMAPGEN_IMAGE_CHROME_SHARE=0.3",
        "SITEMAPGEN_DEDUPE_CONTENT=True",
        'SITEMAPGEN_CHANGEFREQ=[["/p/1", "daily"]]',
    )
    logs = {}
    for name, workers, split in (("one", 1, 0), ("split-2", 2, SPLIT), ("split-3", 3, SPLIT)):
        logs[name] = _build(
            tmp_path,
            path,
            tmp_path / name,
            workers,
            f"SITEMAPGEN_BUILD_SPLIT_URLS={split}",
            *settings,
        )
    one = _urlsets(tmp_path / "one")
    assert _urlsets(tmp_path / "split-2") == one
    assert _urlsets(tmp_path / "split-3") == one
    stats = {name: _stats(log) for name, log in logs.items()}
    assert stats["split-2"] == stats["one"] == stats["split-3"]
    # One <image:image> left out per page of the big origin: the logo on each of them.
    chrome = "sitemapgen/skipped/image/chrome"
    assert stats["one"][chrome] >= len(expected)
    entries = read_entries(tmp_path / "split-3", BIG_NAME)
    assert all(LOGO not in facts.get("images", []) for facts in entries.values())  # type: ignore[operator]
    assert sum(1 for loc, facts in entries.items() if facts.get("changefreq") == "daily") == sum(
        1 for loc in expected if "/p/1" in loc
    )


def test_a_no_change_rerun_leaves_every_file_unchanged(
    feed: tuple[Path, dict[str, dict[str, object]]], tmp_path: Path
) -> None:
    path, expected = feed
    out = tmp_path / "out"
    split = f"SITEMAPGEN_BUILD_SPLIT_URLS={SPLIT}"
    _build(tmp_path, path, out, 3, split)
    before = {name: (out / name).read_bytes() for name in files(out)}
    stderr = _build(tmp_path, path, out, 2, split)
    assert {name: (out / name).read_bytes() for name in files(out)} == before
    stats = _stats(stderr)
    assert stats.get("sitemapgen/files/written", 0) == 0
    sitemaps = [name for name in before if "/sitemap" in name]
    assert stats["sitemapgen/files/unchanged"] == len(sitemaps) > len(expected) // MAX_URLS
    # And the URL notes the survey kept: the same URLs, none came or went.
    assert f"Sitemap: {BIG}/: {len(expected)} URLs (+0, -0 since the previous run)" in stderr
    # A first run's notes count every URL as added.
    first = _build(tmp_path, path, tmp_path / "first", 2, split)
    assert f"Sitemap: {BIG}/: {len(expected)} URLs (+{len(expected)}, -0 since" in first


def test_an_origin_a_feature_needs_whole_is_not_split(
    feed: tuple[Path, dict[str, dict[str, object]]], tmp_path: Path
) -> None:
    """Text sitemaps beside the XML ones: the origin is written whole, by one worker, so
    the byte limit's cuts are those of one pass, the split asked for or not."""
    path, _ = feed
    settings = ("SITEMAPGEN_FORMATS=xml,txt", "SITEMAPGEN_MAX_BYTES=150000")
    _build(
        tmp_path,
        path,
        asked := tmp_path / "asked",
        3,
        f"SITEMAPGEN_BUILD_SPLIT_URLS={SPLIT}",
        *settings,
    )
    _build(tmp_path, path, off := tmp_path / "off", 3, "SITEMAPGEN_BUILD_SPLIT_URLS=0", *settings)
    assert _urlsets(asked) == _urlsets(off)
    counts = _counts(asked, BIG_NAME)
    # One pass fills each file up to the limit: no file ends early at a window's end.
    assert not set(range(MAX_URLS, sum(counts), MAX_URLS)) <= {
        sum(counts[:n]) for n in range(len(counts))
    }


def test_an_entry_larger_than_a_file_leaves_its_window_one_url_short(tmp_path: Path) -> None:
    """An entry that no file can hold (a byte limit smaller than the entry) is left out by
    the window that renders it, counted once, whatever the worker count."""
    path = tmp_path / "feed.jsonl"
    large = f"{BIG}/p/large"
    with path.open("w") as feed:
        for n in range(6000):
            feed.write(json.dumps({"loc": f"{BIG}/p/{n:05d}"}) + "\n")
        images = [f"{BIG}/img/large-{k:03d}-{'i' * 60}.jpg" for k in range(120)]
        feed.write(json.dumps({"loc": large, "images": images}) + "\n")
    written = {}
    for workers in (1, 3):
        out = tmp_path / f"w{workers}"
        stderr = _build(
            tmp_path,
            path,
            out,
            workers,
            "SITEMAPGEN_BUILD_SPLIT_URLS=3000",
            "SITEMAPGEN_MAX_BYTES=8192",
            "SITEMAPGEN_IMAGE_CHROME_SHARE=None",
        )
        assert _stats(stderr)["sitemapgen/skipped/entry_too_large"] == 1
        written[workers] = _urlsets(out)
        counts = _counts(out, BIG_NAME)
        assert sum(counts) == 6000
        assert large.encode() not in b"".join(
            gzip.decompress(data) for data in written[workers].values()
        )
    assert written[1] == written[3]
    # The next run is not refused by the guard on shrinking: the survey noted the entry,
    # and the previous run's count is the notes' own, not the files' entries.
    stderr = _build(
        tmp_path,
        path,
        tmp_path / "w3",
        3,
        "SITEMAPGEN_BUILD_SPLIT_URLS=3000",
        "SITEMAPGEN_MAX_BYTES=8192",
        "SITEMAPGEN_IMAGE_CHROME_SHARE=None",
    )
    assert "sitemapgen/output/refused" not in _stats(stderr)
    assert f"{BIG}/: 6000 URLs (+0, -0 since the previous run)" in stderr
