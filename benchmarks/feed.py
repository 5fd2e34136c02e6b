"""The benchmarks' generated inputs, all deterministic.

The feed (:func:`build`): a seeded Scrapy JSON-lines feed of sitemap records, as
``scrapy sitemapgen-build --input`` reads it, cached under ``benchmarks/out/``, for the
build, memory, ab and profile-build runs (and the ``bench`` shape of ``levels``):

    python -m benchmarks feed --records 100000 --seed 1

Three origins (one on a non-default port), about 6 % of URLs with non-ASCII path characters
(percent-encoded, as Scrapy's ``response.url`` has them, and about one in ten of those raw
UTF-8), about 10 % with ``&`` in the query, 0-3 image URLs per record, some W3C
``lastmod``, ``changefreq`` and ``priority``, and about 1 % of records that repeat an
earlier page (a re-crawl with a newer lastmod), so the URL count is not the record count.
The feed is written as a Scrapy project with ``FEED_EXPORT_ENCODING = "utf-8"`` writes it.

That is the ``ours`` shape. ``--shape realistic`` is a second one, generated independently
(its own seed stream): slugs of 60-140 characters, a W3C date-time on about three records in
four in mixed forms (``Z``, ``+00:00``, ``+02:00``) and an explicit ``null`` lastmod on the
rest, 0-3 images each on a CDN host with long names, the same three origins, about 6 %
non-ASCII and about 10 % with ``&``. ``--shape site`` is the shape most sites have (issue
42): the ``realistic`` records, its own seed stream, with one origin holding 80 % of them
(15 % and 5 % on the other two). ``--origins N`` spreads any shape's records over N
origins instead of three (``host-000001.example.com`` ..., every seventh on a port), drawn
at random for each record as a broad crawl interleaves its hosts:

    python -m benchmarks feed --records 1000000 --shape realistic
    python -m benchmarks feed --records 1000000 --shape site
    python -m benchmarks feed --records 1000000 --origins 100000

The store's pages (:func:`store_pages`), for redis-memory: the same three origins, locs of
about 60 characters, a lastmod on every other page and an image on every third.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_sitemapgen.sitemaps.facts import UrlFacts

OUT = Path(__file__).with_name("out")
#: Bump when the generator changes, so cached feeds of the old shape are not reused.
VERSION = 1

ORIGINS = ("https://www.example.com", "https://shop.example.org", "http://blog.example.net:8080")
SHAPES = ("ours", "realistic", "site")
_ORIGIN_WEIGHTS = (0.5, 0.8)  # cumulative: 50 % www, 30 % shop, 20 % blog
# The shape most sites have (issue 42): one origin holds most of the URLs.
_SITE_WEIGHTS = (0.8, 0.95)  # cumulative: 80 % www, 15 % shop, 5 % blog
_WORDS = (
    "guide",
    "review",
    "news",
    "spring",
    "summer",
    "red",
    "blue",
    "classic",
    "modern",
    "travel",
    "garden",
    "kitchen",
    "coffee",
    "running",
    "winter",
    "linen",
    "wool",
    "oak",
    "steel",
    "city",
)
_NON_ASCII = (
    "café",
    "über-uns",
    "niño",
    "straße",
    "crème-brûlée",
    "東京",
    "москва",
    "smörgåsbord",
    "jalapeño",
    "façade",
    "αθήνα",
    "zürich",
)
_CATEGORIES = ("shoes", "shirts", "bags", "hats", "coats", "socks")
_CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
_START = 1_420_070_400  # 2015-01-01T00:00:00Z; every lastmod is in the past


@dataclass
class FeedInfo:
    """What a cached feed holds; written beside it as ``.meta.json``."""

    path: str
    records: int
    seed: int
    version: int
    bytes: int
    distinct_locs: int  # distinct after the pipeline's normalisation: what ours must write
    repeats: int
    non_ascii: int
    raw_non_ascii: int
    ampersand: int
    images: int
    with_lastmod: int
    seconds: float
    shape: str = "ours"
    origins: int = 3
    distinct_origins: int = 0  # origins with a URL (0: a feed cached before it was counted)


def _slug(rng: random.Random) -> str:
    return "-".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))


def _path(rng: random.Random, origin: int, i: int, word: str) -> str:
    if origin == 0:
        return f"/articles/{word}-{i}"
    if origin == 1:
        return f"/products/{rng.choice(_CATEGORIES)}/{word}-{i}.html"
    return f"/{2015 + i % 10}/{1 + i % 12:02d}/{word}-{i}/"


def _origin_root(k: int) -> str:
    """The root of origin ``k`` of a many-origins feed (``--origins``)."""
    if k % 7 == 6:
        return f"http://host-{k:06d}.example.net:8080"
    return f"https://host-{k:06d}.example.com"


def _long_slug(rng: random.Random) -> str:
    """A slug of 60-140 characters, as article and product pages have them."""
    length = rng.randint(60, 140)
    words: list[str] = []
    size = -1
    while size < length:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return "-".join(words)[:length].rstrip("-")


def _realistic_lastmod(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll >= 0.75:
        return None
    stamp = time.gmtime(_START + rng.randrange(10 * 365 * 86400))
    text = time.strftime("%Y-%m-%dT%H:%M:%S", stamp)
    if roll < 0.3:
        return text + "Z"
    if roll < 0.55:
        return text + "+00:00"
    return text + "+02:00"


def _lastmod(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll >= 0.65:
        return None
    stamp = time.gmtime(_START + rng.randrange(10 * 365 * 86400))
    if roll < 0.25:
        return time.strftime("%Y-%m-%d", stamp)
    if roll < 0.5:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp)
    return time.strftime("%Y-%m-%dT%H:%M:%S+02:00", stamp)


def records(count: int, seed: int, shape: str = "ours", origins: int = 0) -> Any:
    """Yield (record, flags) for ``count`` records; the same arguments give the same
    records. ``origins`` (0: the three of :data:`ORIGINS`) spreads them over that many."""
    if shape in ("realistic", "site"):
        yield from _realistic(count, seed, origins, shape)
        return
    rng = random.Random(seed)
    spread = random.Random(f"origins-{seed}") if origins else None
    recent: list[str] = []
    for i in range(count):
        if recent and rng.random() < 0.01:
            loc = rng.choice(recent)  # the same page again, as a re-crawl records it
            record: dict[str, Any] = {"loc": loc, "lastmod": "2025-01-01T00:00:00Z"}
            yield record, {"repeat": True, "amp": "&" in loc}
            continue
        roll = rng.random()
        origin = 0 if roll < _ORIGIN_WEIGHTS[0] else 1 if roll < _ORIGIN_WEIGHTS[1] else 2
        root = ORIGINS[origin] if spread is None else _origin_root(spread.randrange(origins))
        non_ascii = rng.random() < 0.06
        raw = non_ascii and rng.random() < 0.1
        if non_ascii:
            word = rng.choice(_NON_ASCII)
            word = word if raw else quote(word)
        else:
            word = _slug(rng)
        loc = root + _path(rng, origin, i, word)
        amp = rng.random() < 0.1
        if amp:
            loc += f"?color={rng.choice(_WORDS)}&size={rng.randint(1, 12)}"
        record = {"loc": loc}
        lastmod = _lastmod(rng)
        if lastmod:
            record["lastmod"] = lastmod
        if rng.random() < 0.3:
            record["changefreq"] = rng.choice(_CHANGEFREQS)
        if rng.random() < 0.3:
            value = rng.randint(0, 10) / 10
            record["priority"] = value if rng.random() < 0.5 else f"{value:.1f}"
        images = [
            f"https://cdn.example.com/img/{i}/{k}.jpg"
            + ("?w=800&h=600" if rng.random() < 0.05 else "")
            for k in range(rng.randint(0, 3))
        ]
        if images:
            record["images"] = images
        if len(recent) < 1000:
            recent.append(loc)
        else:
            recent[rng.randrange(1000)] = loc
        yield record, {"repeat": False, "amp": amp, "non_ascii": non_ascii, "raw": raw}


def _realistic(count: int, seed: int, origins: int, shape: str = "realistic") -> Any:
    """The ``realistic`` and ``site`` shapes (see the module's docstring): each its own
    random stream, so neither shares a sequence with ``ours`` or with the other."""
    rng = random.Random(f"{shape}-{seed}")
    spread = random.Random(f"{shape}-origins-{seed}") if origins else None
    weights = _SITE_WEIGHTS if shape == "site" else _ORIGIN_WEIGHTS
    for i in range(count):
        roll = rng.random()
        origin = 0 if roll < weights[0] else 1 if roll < weights[1] else 2
        root = ORIGINS[origin] if spread is None else _origin_root(spread.randrange(origins))
        non_ascii = rng.random() < 0.06
        raw = non_ascii and rng.random() < 0.1
        slug = _long_slug(rng)
        if non_ascii:
            word = rng.choice(_NON_ASCII)
            slug = f"{word if raw else quote(word)}-{slug}"[: max(60, len(slug))]
        loc = root + _path(rng, origin, i, slug)
        amp = rng.random() < 0.1
        if amp:
            loc += f"?utm_source={rng.choice(_WORDS)}&ref={rng.randint(1, 9999)}"
        record: dict[str, Any] = {"loc": loc, "lastmod": _realistic_lastmod(rng)}
        images = [
            f"https://images-cdn.static-assets.example-media.com/uploads/{2015 + i % 10}/"
            f"{1 + i % 12:02d}/{_long_slug(rng)[: rng.randint(30, 80)].rstrip('-')}-{i}-{k}"
            f"-1920x1080.jpg"
            for k in range(rng.randint(0, 3))
        ]
        if images:
            record["images"] = images
        yield record, {"repeat": False, "amp": amp, "non_ascii": non_ascii, "raw": raw}


def add_shape_arguments(parser: Any) -> None:
    """``--shape`` and ``--origins``, for every benchmark that reads a generated feed."""
    parser.add_argument(
        "--shape", choices=SHAPES, default="ours", help="the feed's shape (default: ours)"
    )
    parser.add_argument(
        "--origins", type=int, default=0, help="spread the records over this many origins"
    )


def feed_path(count: int, seed: int, shape: str = "ours", origins: int = 0) -> Path:
    # The ``ours`` shape on three origins keeps its name of before there were shapes.
    tag = ("" if shape == "ours" else f"-{shape}") + (f"-o{origins}" if origins else "")
    return OUT / f"feed-n{count}-s{seed}{tag}-v{VERSION}.jsonl"


def build(
    count: int, seed: int, *, shape: str = "ours", origins: int = 0, quiet: bool = False
) -> FeedInfo:
    """The cached feed of ``count`` records for ``seed`` (``shape``, ``origins``: see the
    module's docstring); generated on the first call."""
    if shape not in SHAPES:
        raise SystemExit(f"--shape: one of {', '.join(SHAPES)}, not {shape!r}")
    path = feed_path(count, seed, shape, origins)
    meta = path.with_suffix(".meta.json")
    if path.is_file() and meta.is_file():
        info = FeedInfo(**json.loads(meta.read_text()))
        if info.bytes == path.stat().st_size:
            return info
    # The very normalisation the item pipeline applies, so distinct_locs is what ours writes.
    from scrapy.settings import Settings

    from scrapy_sitemapgen.settings import Config

    normalise = Config.from_settings(Settings()).url_policy.loc
    if not quiet:
        print(
            f"generating {path.name} ({count:,} records, seed {seed}, shape {shape}) ...",
            flush=True,
        )
    started = time.perf_counter()
    OUT.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    seen: set[int] = set()
    roots: set[str] = set()
    totals = dict.fromkeys(("repeat", "non_ascii", "raw", "amp", "images", "lastmod"), 0)
    with part.open("w", encoding="utf-8") as sink:
        for record, flags in records(count, seed, shape, origins):
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            loc = normalise(record["loc"])
            seen.add(hash(loc))
            roots.add(loc[: loc.index("/", 8)])
            for name in ("repeat", "non_ascii", "raw", "amp"):
                totals[name] += bool(flags.get(name))
            totals["images"] += len(record.get("images", ()))
            totals["lastmod"] += record.get("lastmod") is not None
    os.replace(part, path)
    info = FeedInfo(
        path=str(path),
        records=count,
        seed=seed,
        version=VERSION,
        bytes=path.stat().st_size,
        distinct_locs=len(seen),
        repeats=totals["repeat"],
        non_ascii=totals["non_ascii"],
        raw_non_ascii=totals["raw"],
        ampersand=totals["amp"],
        images=totals["images"],
        with_lastmod=totals["lastmod"],
        seconds=round(time.perf_counter() - started, 1),
        shape=shape,
        origins=origins or len(ORIGINS),
        distinct_origins=len(roots),
    )
    meta.write_text(json.dumps(asdict(info), indent=1))
    return info


def store_pages(count: int) -> Iterator[UrlFacts]:
    """``count`` pages as the store records them: ``UrlFacts`` on the three origins."""
    from scrapy_sitemapgen.sitemaps.facts import UrlFacts

    for i in range(count):
        yield UrlFacts(
            f"{ORIGINS[i % 3]}/catalogue/section-{i % 97}/product-{i:08d}.html",
            "2024-05-06T07:08:09+00:00" if i % 2 else None,
            images=(f"https://cdn.example.net/img/{i:08d}.jpg",) if i % 3 == 0 else (),
        )
