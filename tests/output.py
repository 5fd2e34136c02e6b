"""Reading a generated output folder back, schema-checking every file on the way."""

from __future__ import annotations

from typing import TYPE_CHECKING
from xml.etree import ElementTree

from scrapy_sitemapgen.validate.checker import validate

from .xmlcheck import NS, assert_valid

if TYPE_CHECKING:
    from pathlib import Path


def assert_validator_accepts(folder: Path) -> None:
    """The package's own validator (sitemapgen-validate) finds nothing wrong with a set,
    read through its robots.txt as a search engine would, with its published origin."""
    scheme, rest = folder.name.split("_", 1)
    host, port = rest.rsplit("_", 1)
    default = {"http": "80", "https": "443"}[scheme]
    root = f"{scheme}://{host}{'' if port == default else ':' + port}/"
    problems = validate([str(folder / "robots.txt")], base_url=root)
    assert problems == [], "\n".join(map(str, problems))


def files(out: Path) -> set[str]:
    """Every file under ``out``, as ``origin/name`` paths."""
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}


def read_urls(out: Path) -> dict[str, dict[str, dict[str, str | None]]]:
    """origin folder -> {loc: {lastmod, changefreq, priority}}, following each index, with
    every urlset and index validated against the schemas and no loc listed twice."""
    result: dict[str, dict[str, dict[str, str | None]]] = {}
    for index in sorted(out.glob("*/sitemap.xml")):
        assert_validator_accepts(index.parent)
        urls: dict[str, dict[str, str | None]] = {}
        root = ElementTree.fromstring(assert_valid(index))
        for loc in root.iter(f"{NS}loc"):
            name = loc.text.rsplit("/", 1)[1]
            urlset = ElementTree.fromstring(assert_valid(index.parent / name))
            for url in urlset.iter(f"{NS}url"):
                fields = {
                    tag: (url.findtext(f"{NS}{tag}"))
                    for tag in ("lastmod", "changefreq", "priority")
                }
                key = url.findtext(f"{NS}loc")
                assert key not in urls, f"{key} listed twice"
                urls[key] = fields
        result[index.parent.name] = urls
    return result


def lastmods(out: Path) -> dict[str, dict[str, str | None]]:
    return {o: {loc: f["lastmod"] for loc, f in urls.items()} for o, urls in read_urls(out).items()}


IMAGE = "{http://www.google.com/schemas/sitemap-image/1.1}"
VIDEO = "{http://www.google.com/schemas/sitemap-video/1.1}"
NEWS = "{http://www.google.com/schemas/sitemap-news/0.9}"
XHTML = "{http://www.w3.org/1999/xhtml}"


def _entry(url: ElementTree.Element) -> dict[str, object]:
    entry: dict[str, object] = {
        tag: url.findtext(f"{NS}{tag}") for tag in ("lastmod", "changefreq", "priority")
    }
    entry["images"] = [i.findtext(f"{IMAGE}loc") for i in url.iter(f"{IMAGE}image")]
    entry["videos"] = [
        {child.tag.removeprefix(VIDEO): child.text for child in video}
        for video in url.iter(f"{VIDEO}video")
    ]
    entry["alternates"] = [
        (link.get("hreflang"), link.get("href")) for link in url.iter(f"{XHTML}link")
    ]
    news = url.find(f"{NEWS}news")
    entry["news"] = (
        None
        if news is None
        else {
            "name": news.findtext(f"{NEWS}publication/{NEWS}name"),
            "language": news.findtext(f"{NEWS}publication/{NEWS}language"),
            "publication_date": news.findtext(f"{NEWS}publication_date"),
            "title": news.findtext(f"{NEWS}title"),
        }
    )
    return entry


def read_entries(out: Path, origin: str, kind: str = "sitemap-") -> dict[str, dict[str, object]]:
    """{loc: every fact of its <url>} for the files of one origin whose names start with
    ``kind`` (``sitemap-news-`` for the news sitemaps), following the index; each file
    schema-validated, and the index must list exactly the files on disk."""
    folder = out / origin
    assert_validator_accepts(folder)
    index = ElementTree.fromstring(assert_valid(folder / "sitemap.xml"))
    listed = [loc.text.rsplit("/", 1)[1] for loc in index.iter(f"{NS}loc")]
    on_disk = sorted(p.name for p in folder.iterdir() if p.name.startswith("sitemap-"))
    assert sorted(listed) == on_disk
    entries: dict[str, dict[str, object]] = {}
    for name in listed:
        if not name.startswith(kind) or (kind == "sitemap-" and name.startswith("sitemap-news-")):
            continue
        for url in ElementTree.fromstring(assert_valid(folder / name)).iter(f"{NS}url"):
            loc = url.findtext(f"{NS}loc")
            assert loc not in entries, f"{loc} listed twice"
            entries[loc] = _entry(url)
    return entries
