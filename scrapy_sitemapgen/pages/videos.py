"""The videos a page declares: JSON-LD ``VideoObject``, Open Graph ``og:video`` and
``<video>`` elements, with ISO 8601 durations read as seconds.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .elements import ASCII_LOWER, HTML_INTEGER_RE, collapse, nodes_of
from .hrefs import media_url
from .jsonld import has_type, ld_objects, ld_text, ld_url

if TYPE_CHECKING:
    from collections.abc import Iterator

    from parsel import Selector

    from .elements import PageNodes

__all__ = [
    "iso8601_duration",
    "videos",
]

# PnDTnHnMnS. Components are capped at 18 digits: no video lasts 10^18 days, and the cap
# keeps int() clear of Python's 4,300-digit conversion limit.
_DURATION_RE = re.compile(
    r"P(?:(\d{1,18})D)?"
    r"(?:T(?=\d)(?:(\d{1,18})H)?(?:(\d{1,18})M)?(?:(\d{1,18})(?:[.,](\d+))?S)?)?\Z",
    re.IGNORECASE,
)

# File extensions that make an og:video URL the media file itself rather than a player page.
_VIDEO_FILE_EXTENSIONS = (
    ".mp4", ".webm", ".ogv", ".ogg", ".mov", ".m4v", ".mkv",
    ".avi", ".wmv", ".flv", ".mpg", ".mpeg", ".m3u8", ".mpd",
)  # fmt: skip


def videos(selector: Selector | PageNodes, ld: list[Any], base: str) -> list[dict[str, str]]:
    """Video candidates with the raw fields the page gives for each.

    Keys are among ``thumbnail_loc``, ``title``, ``description``, ``content_loc``,
    ``player_loc``, ``duration`` (whole seconds as a decimal string) and
    ``publication_date``. A field the page does not give is absent: nothing is invented,
    and the caller decides which candidates meet G7. Sources, in this order:

    1. JSON-LD ``VideoObject`` objects at any depth of ``ld``: ``contentUrl``,
       ``embedUrl``, ``thumbnailUrl`` (a string, a list or an ImageObject), ``name``,
       ``description``, ``duration`` (ISO 8601) and ``uploadDate``.
    2. Open Graph: the first of ``og:video``, ``og:video:url`` and ``og:video:secure_url``
       is the ``content_loc`` when ``og:video:type`` is ``video/*`` or the URL path ends
       in a video file extension, and the ``player_loc`` otherwise. Alongside it come
       ``og:image`` (or ``og:image:url``/``og:image:secure_url``), ``og:title``,
       ``og:description`` and ``og:video:duration`` (seconds).
    3. Each ``<video>`` whose ``src`` or first ``<source src>`` is usable, with ``poster``
       as the thumbnail and ``title`` or ``aria-label`` as the title. Title and description
       fall back to ``og:title``/``og:description``, never to the ``<title>`` text, which
       names the page rather than the video.

    A candidate whose content or player URL equals a content or player URL of an earlier
    one describes the same video and is dropped, and so is a VideoObject with no usable
    field at all. Text is whitespace-collapsed; empty values and
    ``data:``/``javascript:``/``blob:``/``about:`` URLs are omitted.
    """
    nodes = nodes_of(selector)
    og = nodes.open_graph
    if not (ld or nodes.videos or _OG_VIDEO_PROPERTIES.intersection(og)):
        return []  # most pages: no source of a video at all
    candidates = [_ld_video(obj, base) for obj in ld_objects(ld) if has_type(obj, "VideoObject")]
    og_video = _og_video(og, base)
    if og_video is not None:
        candidates.append(og_video)
    candidates += _element_videos(nodes, og, base)

    kept: list[dict[str, str]] = []
    seen: set[str] = set()
    for candidate in candidates:
        locs = {candidate[key] for key in ("content_loc", "player_loc") if key in candidate}
        if candidate and not locs & seen:
            kept.append(candidate)
        seen |= locs
    return kept


_OG_VIDEO_PROPERTIES = frozenset({"og:video", "og:video:url", "og:video:secure_url"})


def _ld_video(obj: dict[str, Any], base: str) -> dict[str, str]:
    fields = {
        "content_loc": ld_url(obj.get("contentUrl"), base),
        "player_loc": ld_url(obj.get("embedUrl"), base),
        "thumbnail_loc": ld_url(obj.get("thumbnailUrl"), base),
        "title": ld_text(obj.get("name")),
        "description": ld_text(obj.get("description")),
        "publication_date": ld_text(obj.get("uploadDate")),
    }
    duration = obj.get("duration")
    if isinstance(duration, str):
        seconds = iso8601_duration(duration)
        if seconds is not None:
            fields["duration"] = str(seconds)
    return {key: value for key, value in fields.items() if value is not None}


def _og_url(og: dict[str, list[str]], base: str, *props: str) -> str | None:
    for prop in props:
        for raw in og.get(prop, ()):
            url = media_url(base, raw)
            if url is not None:
                return url
    return None


def _og_text(og: dict[str, list[str]], prop: str) -> str | None:
    for raw in og.get(prop, ()):
        text = collapse(raw)
        if text:
            return text
    return None


def _og_video(og: dict[str, list[str]], base: str) -> dict[str, str] | None:
    url = _og_url(og, base, "og:video", "og:video:url", "og:video:secure_url")
    if url is None:
        return None
    media_type = (_og_text(og, "og:video:type") or "").translate(ASCII_LOWER)
    try:
        path = urlsplit(url).path.translate(ASCII_LOWER)
    except ValueError:
        path = ""
    is_file = media_type.startswith("video/") or path.endswith(_VIDEO_FILE_EXTENSIONS)
    fields = {
        "content_loc" if is_file else "player_loc": url,
        "thumbnail_loc": _og_url(og, base, "og:image", "og:image:url", "og:image:secure_url"),
        "title": _og_text(og, "og:title"),
        "description": _og_text(og, "og:description"),
    }
    duration = _og_text(og, "og:video:duration")
    if duration is not None and HTML_INTEGER_RE.match(duration):
        fields["duration"] = duration.lstrip("0") or "0"
    return {key: value for key, value in fields.items() if value is not None}


def _element_videos(
    nodes: PageNodes, og: dict[str, list[str]], base: str
) -> Iterator[dict[str, str]]:
    for node in nodes.videos:
        sources = [node.get("src", "")]  # then ``.//source/@src``
        sources += [src for src in map(_get_src, node.iterdescendants("source")) if src is not None]
        content = next(
            (url for url in (media_url(base, raw) for raw in sources) if url is not None), None
        )
        if content is None:
            continue  # filled in by script: nothing on the page identifies the video
        fields = {
            "content_loc": content,
            "thumbnail_loc": media_url(base, node.attrib.get("poster", "")),
            "title": collapse(node.attrib.get("title", ""))
            or collapse(node.attrib.get("aria-label", ""))
            or _og_text(og, "og:title"),
            "description": _og_text(og, "og:description"),
        }
        yield {key: value for key, value in fields.items() if value}


def _get_src(element: Any) -> str | None:
    return element.get("src")  # type: ignore[no-any-return]


def iso8601_duration(value: str) -> int | None:
    """Whole seconds of an ISO 8601 duration ``PnDTnHnMnS``, or ``None`` when ``value`` is
    not one.

    Fractional seconds (``.`` or ``,``) are rounded half to even, like Python's
    :func:`round`: ``PT0.5S`` is 0 and ``PT1.5S`` is 2. Years, months and weeks are
    rejected because they have no fixed length in seconds. At least one component must be
    present (``P`` and ``PT`` are not durations), and a ``T`` must be followed by one.
    """
    match = _DURATION_RE.match(value.strip())
    if match is None:
        return None
    days, hours, minutes, seconds, fraction = match.groups()
    if days is hours is minutes is seconds is None:
        return None
    total = int(days or 0) * 86_400 + int(hours or 0) * 3_600 + int(minutes or 0) * 60
    total += int(seconds or 0)
    if fraction:
        # Exact half-to-even on the digits: no float, so no 0.49999... surprises.
        digits = fraction.rstrip("0")
        if digits > "5" or (digits == "5" and total % 2 == 1):
            total += 1
    return total
