"""The extension schemas the package ships (G7: image, video, news; hreflang links) and
the rules helpers.py checks beside them must reject what Google's documentation
forbids, and accept the extension elements exactly as the project writes them."""

from __future__ import annotations

import pytest
from lxml import etree

from .helpers import XSD_DIR, errors

ROOT = (
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
    '        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"\n'
    '        xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"\n'
    '        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"\n'
    '        xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
)

# The document the package is about to write, verbatim.
FULL_EXAMPLE = (
    f"{ROOT}"
    "<url><loc>https://example.com/a</loc><lastmod>2024-01-02T03:04:05+00:00</lastmod>\n"
    '<xhtml:link rel="alternate" hreflang="en" href="https://example.com/a"/>\n'
    '<xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/"/>\n'
    "<image:image><image:loc>https://cdn.example.net/x.jpg</image:loc></image:image>\n"
    "<video:video><video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
    "<video:title>T</video:title><video:description>D</video:description>"
    "<video:content_loc>https://example.com/v.mp4</video:content_loc>"
    "<video:player_loc>https://example.com/player?v=1</video:player_loc>"
    "<video:duration>600</video:duration>"
    "<video:publication_date>2024-01-02T03:04:05+00:00</video:publication_date></video:video>\n"
    "<news:news><news:publication><news:name>The Example Times</news:name>"
    "<news:language>en</news:language></news:publication>"
    "<news:publication_date>2024-01-02T03:04:05+00:00</news:publication_date>"
    "<news:title>Headline</news:title></news:news>\n"
    "</url>\n"
    "</urlset>\n"
).encode()


def urlset(*urls: str, root: str = ROOT) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{root}{"".join(urls)}</urlset>'.encode()


def url(*extensions: str, core: str = "<loc>https://example.com/a</loc>") -> str:
    return f"<url>{core}{''.join(extensions)}</url>"


def image(loc: str = "https://cdn.example.net/x.jpg") -> str:
    return f"<image:image><image:loc>{loc}</image:loc></image:image>"


def video(
    *,
    thumbnail: str = "<video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>",
    title: str = "<video:title>T</video:title>",
    description: str = "<video:description>D</video:description>",
    content: str = "<video:content_loc>https://example.com/v.mp4</video:content_loc>",
    player: str = "<video:player_loc>https://example.com/player?v=1</video:player_loc>",
    rest: str = "<video:duration>600</video:duration>"
    "<video:publication_date>2024-01-02T03:04:05+00:00</video:publication_date>",
) -> str:
    return f"<video:video>{thumbnail}{title}{description}{content}{player}{rest}</video:video>"


def news(
    *,
    name: str = "The Example Times",
    language: str = "en",
    date: str = "2024-01-02T03:04:05+00:00",
    title: str = "<news:title>Headline</news:title>",
) -> str:
    return (
        f"<news:news><news:publication><news:name>{name}</news:name><news:language>{language}"
        f"</news:language></news:publication><news:publication_date>{date}</news:publication_date>"
        f"{title}</news:news>"
    )


def link(attributes: str = 'rel="alternate" hreflang="en" href="https://example.com/a"') -> str:
    return f"<xhtml:link {attributes}/>"


def test_full_example_passes() -> None:
    assert errors(FULL_EXAMPLE) == []


def test_plain_urlsets_still_pass() -> None:
    plain = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    assert errors(urlset("<url><loc>https://example.com/</loc></url>", root=plain)) == []
    assert errors(urlset(url(core="<loc>https://example.com/</loc><priority>0.5</priority>"))) == []


@pytest.mark.parametrize(
    "extension",
    [
        pytest.param(image() * 1000, id="1,000 images in one url"),
        pytest.param(video(player=""), id="video: content_loc only"),
        pytest.param(video(content=""), id="video: player_loc only"),
        pytest.param(video(rest=""), id="video: no optional tags"),
        pytest.param(
            video(title=f"<video:title>{'é' * 100}</video:title>"), id="video: title 100 chars"
        ),
        pytest.param(
            video(description=f"<video:description>{'d' * 2048}</video:description>"),
            id="desc 2,048",
        ),
        pytest.param(video(rest="<video:duration>1</video:duration>"), id="duration 1"),
        pytest.param(video(rest="<video:duration>28800</video:duration>"), id="duration 28,800"),
        pytest.param(
            video(rest="<video:publication_date>2024-01-02</video:publication_date>"),
            id="video: date",
        ),
        pytest.param(
            video(
                player='<video:player_loc allow_embed="yes" autoplay="ap=1">https://example.com/p</video:player_loc>',
                rest="<video:duration>600</video:duration>"
                "<video:expiration_date>2030-01-01</video:expiration_date>"
                "<video:rating>5.0</video:rating><video:view_count>0</video:view_count>"
                "<video:publication_date>2024-01-02T03:04:05Z</video:publication_date>"
                "<video:family_friendly>yes</video:family_friendly>"
                '<video:restriction relationship="allow">IE GB US CA</video:restriction>'
                '<video:platform relationship="deny">tv mobile</video:platform>'
                "<video:requires_subscription>no</video:requires_subscription>"
                '<video:uploader info="https://example.com/u">Someone</video:uploader>'
                "<video:live>no</video:live>" + "<video:tag>t</video:tag>" * 32,
            ),
            id="video: every optional tag, in Google's order",
        ),
        pytest.param(
            news(language="zh-cn") + news(language="zh-tw") + news(language="haw"),
            id="news: languages",
        ),
        pytest.param(news(date="2024-01-02"), id="news: date"),
        pytest.param(news() * 1000, id="news: 1,000 in one file"),
        pytest.param(
            "<image:image><image:loc>https://e.com/x.jpg</image:loc><image:caption>c</image:caption>"
            "<image:geo_location>Limerick, Ireland</image:geo_location><image:title>t</image:title>"
            "<image:license>https://e.com/l</image:license></image:image>",
            id="image: deprecated tags",
        ),
        *(
            pytest.param(
                link(f'rel="alternate" hreflang="{tag}" href="https://example.com/a"'),
                id=f"hreflang {tag}",
            )
            for tag in (
                "en",
                "en-GB",
                "en-gb",
                "zh-Hant-TW",
                "zh-Hans",
                "es-419",
                "de-CH-1996",
                "x-default",
                "yue",
            )
        ),
        pytest.param(
            link() + image() + video() + news() + link() + image() + video(),
            id="extensions in any order and number",
        ),
    ],
)
def test_extensions_pass(extension: str) -> None:
    assert errors(urlset(url(extension))) == []


def test_extensions_after_every_core_tag_pass() -> None:
    core = (
        "<loc>https://example.com/a</loc><lastmod>2024-01-02</lastmod>"
        "<changefreq>daily</changefreq><priority>0.8</priority>"
    )
    assert errors(urlset(url(link(), image(), video(), news(), core=core))) == []


def video_tag(tag: str, text: str) -> str:
    return video(rest=f"<video:{tag}>{text}</video:{tag}>")


@pytest.mark.parametrize(
    ("document", "rule"),
    [
        # image
        (urlset(url("<image:image></image:image>")), "image: <image:loc> required"),
        (urlset(url(image("/x.jpg"))), "image: absolute URL"),
        (urlset(url(image("x.jpg"))), "image: absolute URL"),
        (urlset(url(image("ftp://example.com/x.jpg"))), "image: http(s)"),
        (urlset(url(image("https://example.com/a b.jpg"))), "image: URL-escaped"),
        (urlset(url(image(f"https://example.com/{'a' * 2028}"))), "image: < 2,048 chars"),
        (urlset(url(image() * 1001)), "image: at most 1,000 per <url>"),
        (
            urlset(
                url(
                    image().replace(
                        "</image:loc>", "</image:loc><image:loc>https://e.com/y</image:loc>"
                    )
                )
            ),
            "one loc",
        ),
        (
            urlset(
                url(image().replace("</image:loc>", "</image:loc><image:width>3</image:width>"))
            ),
            "unknown tag",
        ),
        (
            urlset(url("<image:loc>https://e.com/x.jpg</image:loc>")),
            "image: <image:loc> only inside <image:image>",
        ),
        # video
        (urlset(url(video(title=""))), "video: title required"),
        (urlset(url(video(thumbnail=""))), "video: thumbnail_loc required"),
        (urlset(url(video(description=""))), "video: description required"),
        (urlset(url(video(content="", player=""))), "video: content_loc or player_loc"),
        (
            urlset(url(video(title=f"<video:title>{'t' * 101}</video:title>"))),
            "video: title <= 100 chars",
        ),
        (urlset(url(video(title="<video:title></video:title>"))), "video: title not empty"),
        (urlset(url(video(title="<video:title>  </video:title>"))), "video: title not blank"),
        (
            urlset(url(video(description=f"<video:description>{'d' * 2049}</video:description>"))),
            "desc <= 2,048",
        ),
        (urlset(url(video_tag("duration", "0"))), "video: duration >= 1"),
        (urlset(url(video_tag("duration", "28801"))), "video: duration <= 28,800"),
        (urlset(url(video_tag("duration", "60.5"))), "video: duration whole seconds"),
        (urlset(url(video_tag("rating", "5.1"))), "video: rating <= 5.0"),
        (urlset(url(video_tag("rating", "-0.1"))), "video: rating >= 0.0"),
        (urlset(url(video_tag("view_count", "-1"))), "video: view_count >= 0"),
        (
            urlset(url(video_tag("publication_date", "2024-01-02T03:04:05"))),
            "video: date-time with zone",
        ),
        (urlset(url(video_tag("expiration_date", "tomorrow"))), "video: W3C date"),
        (urlset(url(video_tag("family_friendly", "Yes"))), "video: yes/no"),
        (urlset(url(video_tag("live", "true"))), "video: yes/no"),
        (urlset(url(video_tag("restriction", "US"))), "video: restriction needs relationship"),
        (
            urlset(
                url(video(rest='<video:restriction relationship="allow">usa</video:restriction>'))
            ),
            "ISO 3166",
        ),
        (
            urlset(
                url(video(rest='<video:platform relationship="allow">desktop</video:platform>'))
            ),
            "platform",
        ),
        (urlset(url(video(rest="<video:tag>t</video:tag>" * 33))), "video: at most 32 tags"),
        (
            urlset(
                url(
                    video(
                        content="<video:player_loc>https://example.com/player?v=1</video:player_loc>",
                        player="<video:content_loc>https://example.com/v.mp4</video:content_loc>",
                    )
                )
            ),
            "video: content_loc before player_loc",
        ),
        (
            urlset(url(video(player="<video:player_loc>https://e.com/p</video:player_loc>" * 2))),
            "one player_loc",
        ),
        (
            urlset(
                url(
                    video(
                        rest="<video:publication_date>2024-01-02</video:publication_date>"
                        "<video:duration>600</video:duration>"
                    )
                )
            ),
            "video: documented order",
        ),
        (
            urlset(url(video(rest="<video:category>c</video:category>"))),
            "video: deprecated category",
        ),
        (
            urlset(url(video(content="<video:content_loc>/v.mp4</video:content_loc>"))),
            "video: absolute URL",
        ),
        # news
        (urlset(url(news(language="english"))), "news: ISO 639 language"),
        (urlset(url(news(language="EN"))), "news: lower-case language"),
        (urlset(url(news(language="en-gb"))), "news: only zh-cn / zh-tw carry a region"),
        (urlset(url(news(title=""))), "news: title required"),
        (urlset(url(news(title="<news:title></news:title>"))), "news: title not empty"),
        (urlset(url(news(name=""))), "news: publication name not empty"),
        (urlset(url(news(date="2024-01-02T03:04:05"))), "news: date-time with zone"),
        (urlset(url(news(date="02/01/2024"))), "news: W3C date"),
        (
            urlset(url("<news:news><news:title>T</news:title></news:news>")),
            "news: publication required",
        ),
        (urlset(*[url(news())] * 1001), "news: at most 1,000 per file"),
        # xhtml:link
        (urlset(url(link('rel="alternate" href="https://example.com/a"'))), "hreflang required"),
        (
            urlset(url(link('rel="canonical" hreflang="en" href="https://example.com/a"'))),
            "rel=alternate",
        ),
        (urlset(url(link('hreflang="en" href="https://example.com/a"'))), "rel required"),
        (urlset(url(link('rel="alternate" hreflang="en"'))), "href required"),
        (
            urlset(url(link('rel="alternate" hreflang="not a tag" href="https://example.com/a"'))),
            "hreflang tag",
        ),
        (
            urlset(url(link('rel="alternate" hreflang="english" href="https://example.com/a"'))),
            "hreflang tag",
        ),
        (
            urlset(url(link('rel="alternate" hreflang="en_GB" href="https://example.com/a"'))),
            "hreflang tag",
        ),
        (
            urlset(url(link('rel="alternate" hreflang="x-other" href="https://example.com/a"'))),
            "hreflang tag",
        ),
        (urlset(url(link('rel="alternate" hreflang="en" href="/a"'))), "href absolute"),
        (
            urlset(
                url(
                    '<xhtml:link rel="alternate" hreflang="en" href="https://e.com/a">x</xhtml:link>'
                )
            ),
            "empty",
        ),
        (urlset(url('<xhtml:a href="https://example.com/a"/>')), "only <xhtml:link>"),
        # namespaces and placement
        (
            urlset(url('<ext:thing xmlns:ext="http://example.com/ext">x</ext:thing>')),
            "P14: undeclared extension",
        ),
        (
            urlset(
                url("<mobile:mobile/>"),
                root=ROOT.replace(
                    ">\n", ' xmlns:mobile="http://www.google.com/schemas/sitemap-mobile/1.0">\n'
                ),
            ),
            "G7: mobile is retired, no schema",
        ),
        (urlset(url('<thing xmlns="">x</thing>')), "P14: extensions need a namespace"),
        (urlset(url("<thing>x</thing>")), "P2: no unknown tag in the sitemap namespace"),
        (
            urlset(
                url(image()), root='<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            ).replace(
                b"<image:image>",
                b'<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">',
            ),
            "P14/G7: namespace declared on the root",
        ),
        (
            urlset(
                url(core=f"<loc>https://example.com/a</loc>{image()}<lastmod>2024-01-02</lastmod>")
            ),
            "after core",
        ),
        (urlset(f"<url>{image()}<loc>https://example.com/a</loc></url>"), "extensions after <loc>"),
    ],
)
def test_schema_rejects(document: bytes, rule: str) -> None:
    assert errors(document), rule


def test_rule_errors_name_their_rule() -> None:
    (images,) = errors(urlset(url(image() * 1001)))
    assert "G7 image extension" in images and "1001 <image:image>" in images
    (items,) = errors(urlset(*[url(news())] * 1001))
    assert "G7 news extension" in items and "1001 <news:news>" in items
    local = urlset(
        url(image()), root='<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ).replace(
        b"<image:image>",
        b'<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">',
    )
    assert errors(local) == [
        "line 2: P14/G7: namespace http://www.google.com/schemas/sitemap-image/1.1 is not declared on the root"
    ]


def test_images_are_counted_per_url() -> None:
    assert errors(urlset(url(image() * 1000), url(image() * 1000))) == []


def test_parsing_resolves_no_entities() -> None:
    document = (
        b'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        + urlset(url(image("https://example.com/&x;"))).split(b"\n", 1)[1]
    )
    problems = errors(
        document
    )  # the entity stays unresolved: /etc/passwd ("root:...") is never read
    assert problems and not any("root:" in problem for problem in problems)


def simple_type(schema_file: str, name: str) -> tuple[str | None, list[tuple[str, str | None]]]:
    tree = etree.parse(str(XSD_DIR / schema_file))
    (node,) = tree.xpath(f"/*/*[local-name()='simpleType'][@name='{name}']")
    (restriction,) = node.iterchildren("{http://www.w3.org/2001/XMLSchema}restriction")
    facets = [
        (etree.QName(facet).localname, facet.get("value"))
        for facet in restriction.iterchildren(etree.Element)
    ]
    return (restriction.get("base"), facets)


@pytest.mark.parametrize(
    ("schema_file", "name"),
    [
        ("sitemap-image.xsd", "tLoc"),
        ("sitemap-video.xsd", "tLoc"),
        ("xhtml-link.xsd", "tLoc"),
        ("sitemap-video.xsd", "tDateTimeWithZone"),
        ("sitemap-news.xsd", "tDateTimeWithZone"),
    ],
)
def test_copied_types_match_the_core_schema(schema_file: str, name: str) -> None:
    assert simple_type(schema_file, name) == simple_type("sitemap.xsd", name)
