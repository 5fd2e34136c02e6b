"""The content fingerprint's case tables (docs/lastmod.rst, "Content"): pairs of pages that
must count as the same content, and pairs that must not. The expectations are written from
the issues' rules, not read from the code: for the text (the duplicate key), markup,
attributes, scripts, styles, whitespace and footers do not count and any change of the
main text does; for a change (the fingerprint the lastmod follows), the structured data,
the canonical URL and the main content's link targets count too, as Google counts them,
while JSON key order and whitespace, footer and navigation links, copyright years and
CSRF tokens do not."""

from __future__ import annotations

import unicodedata
from hashlib import blake2b
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parsel import Selector
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.settings import Settings

from scrapy_sitemapgen.crawl.extract import page_facts
from scrapy_sitemapgen.pages.fingerprint import (
    FINGERPRINT_LENGTH,
    LAST_SPACE,
    MAX_PROPERTIES,
    MAX_PROPERTY_TEXT,
    NOT_CONTENT,
    change_fingerprint,
    content_fingerprint,
    main_text,
    microdata_values,
    structured_data,
    text_fingerprint,
)
from scrapy_sitemapgen.settings import Config

from .helpers import PROPERTY

if TYPE_CHECKING:
    from scrapy_sitemapgen.sitemaps.facts import Content

_PAGE = (
    "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Ice cream</title>"
    "{head}</head><body><nav><a href=/>Home</a></nav><main><h1>Ice cream</h1>"
    "<p>Vanilla is the most popular flavour.</p>{main}</main>"
    "<footer>Built at 2024-05-01 10:00</footer></body></html>"
)


def page(main: str = "", head: str = "") -> str:
    return _PAGE.format(main=main, head=head)


BASE = page()

# (case, page a, page b): a change that is not one of content.
SAME = [
    ("identical bytes", BASE, BASE),
    (
        "a CSRF token in a hidden input",
        page("<form><input type=hidden name=csrf value=a1b2></form>"),
        page("<form><input type=hidden name=csrf value=z9y8></form>"),
    ),
    (
        "a nonce in an inline script",
        page('<script nonce="r4nd0m">var t = 1;</script>'),
        page('<script nonce="0th3r">var t = 1;</script>'),
    ),
    (
        "script contents",
        page("<script>var build = 1714557600;</script>"),
        page("<script>var build = 1714561200;</script>"),
    ),
    (
        "style contents",
        page("<style>p { color: red }</style>"),
        page("<style>p { color: blue }</style>"),
    ),
    ("a timestamp inside <footer>", BASE, BASE.replace("2024-05-01 10:00", "2024-06-02 11:30")),
    (
        "whitespace and line breaks",
        page("<p>Chocolate comes second.</p>"),
        page("<p>\n   Chocolate   comes\n\tsecond.  </p>\n"),
    ),
    (
        "inline markup around words",
        page("<p>Chocolate comes second.</p>"),
        page("<p><strong>Chocolate</strong> comes <em>second</em>.</p>"),
    ),
    ("a word split by inline markup", page("<p>Chocolate</p>"), page("<p>Choc<b>olate</b></p>")),
    (
        "attributes: class, id, style, data-*",
        page("<p class=a id=x>Mint.</p>"),
        page('<p class="b c" id=y style="margin:0" data-track=42>Mint.</p>'),
    ),
    ("a comment", page("<!-- cache: hit 12ms -->"), page("<!-- cache: miss 340ms -->")),
    (
        "the head's meta tags and links",
        page(head='<meta name=generator content="v1">'),
        page(head='<meta name=generator content="v2"><link rel=stylesheet href=/s.css?v=9>'),
    ),
    (
        "image sources and alt text",
        page('<img src=/a.png alt="a cone">'),
        page('<img src=/b.webp?v=2 alt="two cones">'),
    ),
    (
        "a changed navigation menu",
        BASE,
        BASE.replace("<a href=/>Home</a>", "<a href=/>Home</a> <a href=/new>New</a>"),
    ),
    (
        "a script inside a paragraph, deep in the page",
        page("<div><section><p>Buy <script>track(1)</script>now.</p></section></div>"),
        page("<div><section><p>Buy <script>track(2)</script>now.</p></section></div>"),
    ),
    (
        "noscript and template",
        page("<noscript>Enable JS</noscript><template>x</template>"),
        page("<noscript>Please enable JavaScript</noscript><template>y</template>"),
    ),
    (
        "entities for the same characters",
        page("<p>Caf&eacute; &amp; bar</p>"),
        page("<p>Caf\u00e9 &#38; bar</p>"),
    ),
    ("composed and decomposed accents (NFC)", page("<p>Caf\u00e9</p>"), page("<p>Cafe\u0301</p>")),
    (
        "block markup rearranged around the same text",
        page("<div><p>Strawberry.</p></div>"),
        page("<section><p>Strawberry.</p></section>"),
    ),
    ("a non-breaking space for a space", page("<p>10 km</p>"), page("<p>10&nbsp;km</p>")),
    (
        # the text's table: a change of structured data is one of content (below), but
        # no reader sees it, so it makes no two pages different pages
        "a JSON-LD block changed",
        page('<script type="application/ld+json">{"a":1}</script>'),
        page('<script type="application/ld+json">{"a":2}</script>'),
    ),
    (
        "doctype, charset and unclosed tags",
        "<html><body><p>Plain.<p>Text.</body></html>",
        "<!DOCTYPE html><html><head><meta charset=utf-8></head><body><p>Plain.</p><p>Text.</p>"
        "</body></html>",
    ),
]

# (case, page a, page b): a change of the text a reader sees.
DIFFERENT = [
    (
        "one word changed",
        page("<p>Chocolate comes second.</p>"),
        page("<p>Chocolate comes third.</p>"),
    ),
    (
        "one word added",
        page("<p>Chocolate comes second.</p>"),
        page("<p>Chocolate now comes second.</p>"),
    ),
    ("a sentence removed", page("<p>One.</p><p>Two.</p>"), page("<p>One.</p>")),
    ("one letter changed", page("<p>colour</p>"), page("<p>color</p>")),
    ("case changed", page("<p>Apple</p>"), page("<p>apple</p>")),
    ("punctuation changed", page("<p>Yes.</p>"), page("<p>Yes!</p>")),
    ("a digit in a price", page("<p>Price: 10 EUR</p>"), page("<p>Price: 12 EUR</p>")),
    ("the title", BASE, BASE.replace("<title>Ice cream</title>", "<title>Gelato</title>")),
    ("the heading", BASE, BASE.replace("<h1>Ice cream</h1>", "<h1>Sorbet</h1>")),
    (
        "paragraphs swapped",
        page("<p>First.</p><p>Second.</p>"),
        page("<p>Second.</p><p>First.</p>"),
    ),
    ("text moved out of a footer", page(), page("<p>Built at 2024-05-01 10:00</p>")),
    (
        "a table cell",
        page("<table><tr><td>3</td></tr></table>"),
        page("<table><tr><td>4</td></tr></table>"),
    ),
    ("a list item added", page("<ul><li>a</li></ul>"), page("<ul><li>a</li><li>b</li></ul>")),
    ("text in a link", page("<a href=/x>Read more</a>"), page("<a href=/x>Read less</a>")),
    ("non-ASCII letter", page("<p>Stra\u00dfe</p>"), page("<p>Strasse</p>")),
    (
        "a date in the article body",
        page("<p>Updated 2024-05-01</p>"),
        page("<p>Updated 2024-05-02</p>"),
    ),
    (
        "the text right after a script (outside it)",
        page("<p><script>x()</script>Tail one.</p>"),
        page("<p><script>x()</script>Tail two.</p>"),
    ),
    (
        "a footer's text moved into the main content",
        page("<div><footer>Shipping is free.</footer></div>"),
        page("<div><p>Shipping is free.</p></div>"),
    ),
    (
        "near duplicates one word apart",
        page("<p>Tours in Paris and Lyon.</p>"),
        page("<p>Tours in Paris and Nice.</p>"),
    ),
    (
        "text appears in an empty page",
        "<html><body></body></html>",
        "<html><body><p>Now there is text.</p></body></html>",
    ),
    (
        "a text node added beside an inline element",
        page("<p><b>Bold</b></p>"),
        page("<p><b>Bold</b> move</p>"),
    ),
]


def _fp(html: str) -> str | None:
    return content_fingerprint(Selector(text=html))


@pytest.mark.parametrize(("case", "a", "b"), SAME, ids=[c for c, _, _ in SAME])
def test_same_content(case: str, a: str, b: str) -> None:
    assert a != b or case == "identical bytes"
    fp = _fp(a)
    assert fp is not None and len(fp) == FINGERPRINT_LENGTH
    assert _fp(b) == fp


@pytest.mark.parametrize(("case", "a", "b"), DIFFERENT, ids=[c for c, _, _ in DIFFERENT])
def test_different_content(case: str, a: str, b: str) -> None:
    assert _fp(b) is not None
    assert _fp(a) != _fp(b)


@pytest.mark.parametrize(
    "html",
    [
        "<html><body></body></html>",
        "<html><body>  \n\t </body></html>",
        "<html><body><script>only()</script><style>p{}</style></body></html>",
        "<html><body><footer>(c) 2024</footer><nav>Home</nav></body></html>",
        "<html><body><img src=/x.png alt=picture></body></html>",
    ],
)
def test_no_text_no_fingerprint(html: str) -> None:
    """A page without visible text has no fingerprint, so it is nobody's duplicate."""
    assert _fp(html) is None


def test_text_fingerprint_is_the_page_text() -> None:
    """The page's fingerprint is the fingerprint of its visible text, title first."""
    assert _fp(page("<p>Mint.</p>")) == text_fingerprint(
        "Ice cream Ice cream Vanilla is the most popular flavour. Mint."
    )
    assert text_fingerprint("a b") == text_fingerprint("ab") == text_fingerprint(" a\u00a0b ")


def test_not_a_tree() -> None:
    assert content_fingerprint(object()) is None


def _reference_text(html: str) -> str:
    """The definition read plainly, one node at a time: the title's text, then every text
    node of the body outside the left-out elements (comments are not text)."""
    root = Selector(text=html).root
    parts: list[str] = []
    title = root.find(".//title")
    if title is not None:
        parts.append("".join(title.itertext()))

    def walk(element: object) -> None:
        if not isinstance(element.tag, str) or element.tag in NOT_CONTENT:  # type: ignore[attr-defined]
            return
        if element.text:  # type: ignore[attr-defined]
            parts.append(element.text)  # type: ignore[attr-defined]
        for child in element:  # type: ignore[attr-defined]
            walk(child)
            if child.tail:
                parts.append(child.tail)

    body = root.find(".//body")
    if body is not None:
        walk(body)
    return "".join(parts)


@pytest.mark.parametrize(
    "html",
    [a for _, a, _ in SAME + DIFFERENT]
    + [b for _, _, b in SAME + DIFFERENT]
    + [
        "<body><nav><script>a</script>N</nav>x<footer>f<nav>n</nav></footer>y<!--c-->z</body>",
        "<body><div><div><style>s</style>a</div>b<noscript><p>n</p></noscript>c</div>d</body>",
        # chrome at both ends of the body, non-ASCII tails (lengths are in bytes)
        "<body>é<nav>Ñav</nav>ü<script>s</script>€<p>mid</p>dle<footer>fö</footer>ß"
        "<script>x</script>✓</body>",
        # comments at the ends and in the middle, beside left-out elements
        "<body><!--a-->1<nav>n</nav>2<p>p</p><!--b-->3<footer>f</footer>4<!--c-->5</body>",
        # everything left out
        "<body><nav>n</nav>t<script>s</script></body>",
        # a chain at the end (a nav inside a header, after the content)
        "<body><p>first</p><header><h1>H</h1><nav>N</nav>after</header>end</body>",
        # left out in the middle, between kept children
        "<body><p>a</p><script>s</script><p>b</p><style>t</style>c</body>",
        # nested: a script inside a footer inside a nav
        "<body><p>x</p><nav><footer><script>s</script>f</footer>n</nav>y</body>",
    ],
)
def test_fast_walk_is_the_definition(html: str) -> None:
    """The libxml2 serialisation a subtree at a time gives the text the plain walk gives."""
    assert content_fingerprint(Selector(text=html)) == text_fingerprint(_reference_text(html))


def _reference_links(html: str) -> set[str]:
    """The main content's links read plainly: the href of each <a> with no left-out
    element above it."""
    root = Selector(text=html).root
    return {
        a.get("href")
        for a in root.iter("a")
        if a.get("href") is not None
        and not any(isinstance(e.tag, str) and e.tag in NOT_CONTENT for e in a.iterancestors())
    }


@pytest.mark.parametrize(
    "html",
    [
        "<body><nav><a href=/>Home</a><a href=/x>X</a></nav><p><a href=/x>X again</a></p>"
        "<a href=/y>y</a><a>no href</a><a href=''>empty</a><footer><a href=/z>z</a></footer>"
        "<a href=/y>y twice</a></body>",
        "<body><a href=/a>a</a></body><a href=/after>markup after the html element</a>",
        "<body><nav><a href=/n>n</a><a href=/n>n</a></nav><p><a href=/n>n</a></p></body>",
        "<body><nav><a href=/only>only here</a></nav>text</body>",
        "<body><script>document.write('<a href=/s>')</script><p>t</p></body>",
        "<body><p>no links</p></body>",
    ],
)
def test_main_text_links_are_the_main_contents(html: str) -> None:
    """Counted per href, not per element: each href of the main content once, none of
    the chrome's alone, one in both kept."""
    _, hrefs = main_text(Selector(text=html))
    assert len(hrefs) == len(set(hrefs))
    assert set(hrefs) == _reference_links(html)


@settings(PROPERTY, max_examples=500)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_text_fingerprint_is_the_text_without_whitespace_in_nfc(text: str) -> None:
    """The definition: the characters without any whitespace (str.split()'s), in NFC."""
    compact = unicodedata.normalize("NFC", "".join(text.split())).encode()
    expected = (
        blake2b(compact, digest_size=FINGERPRINT_LENGTH // 2).hexdigest() if compact else None
    )
    assert text_fingerprint(text) == expected


@pytest.mark.parametrize("space", [chr(c) for c in range(0x110000) if chr(c).isspace()])
def test_every_whitespace_character_is_removed(space: str) -> None:
    """Each of them, alone and between letters; none lies past the last one the
    fingerprint's table holds."""
    assert ord(space) <= LAST_SPACE
    assert text_fingerprint(f"a{space}b{space}") == text_fingerprint("ab")
    assert text_fingerprint(space) is None


# What counts as a change: read from whole pages by the crawl's page reader, as a crawl
# reads them, at one URL (links resolve against it).
URL = "https://shop.example/p/1"


def _ld(text: str) -> str:
    return f'<script type="application/ld+json">{text}</script>'


_PRICE = '{"@context":"https://schema.org","@type":"Product","name":"Cone","offers":{"@type":"Offer","price":"10.00","priceCurrency":"EUR"}}'
_PRICE_REORDERED = '{"offers":{"priceCurrency":"EUR","price":"10.00","@type":"Offer"},"name":"Cone","@type":"Product","@context":"https://schema.org"}'
_PRICE_SPACED = (
    '{\n  "@context": "https://schema.org",\n  "@type": "Product",\n  "name": "Cone",\n'
    '  "offers": {"@type": "Offer", "price": "10.00", "priceCurrency": "EUR"}\n}\n'
)
_FOOTER_PAGE = (
    "<!DOCTYPE html><html><head><title>Cone</title>{head}</head><body>"
    "<header><nav><a href=/>Home</a> <a href=/shop>Shop</a></nav></header>"
    "<main><h1>Cone</h1><p>A waffle cone. See <a href=/p/2>the cup</a>.</p>{main}</main>"
    "<footer><a href=/legal>Legal</a> \u00a9 {year} Shop</footer></body></html>"
)


def shop(main: str = "", head: str = "", year: str = "2024") -> str:
    return _FOOTER_PAGE.replace("{head}", head).replace("{main}", main).replace("{year}", year)


SHOP = shop()

# (case, page a, page b): no change of what counts.
CHANGE_SAME = [
    ("identical bytes", SHOP, SHOP),
    ("reordered JSON-LD keys", shop(_ld(_PRICE)), shop(_ld(_PRICE_REORDERED))),
    ("JSON-LD whitespace and line breaks", shop(_ld(_PRICE)), shop(_ld(_PRICE_SPACED))),
    ("JSON-LD in an HTML comment", shop(_ld(_PRICE)), shop(_ld(f"<!--{_PRICE}-->"))),
    ("a footer link's target", SHOP, SHOP.replace("href=/legal", "href=/terms")),
    ("a copyright year in the footer", shop(year="2024"), shop(year="2025")),
    (
        "a CSRF token in a hidden input",
        shop("<form><input type=hidden name=csrf value=a1b2></form>"),
        shop("<form><input type=hidden name=csrf value=z9y8></form>"),
    ),
    (
        "a CSRF token in a meta tag",
        shop(head='<meta name="csrf-token" content="a1b2c3">'),
        shop(head='<meta name="csrf-token" content="z9y8x7">'),
    ),
    ("a navigation link's target", SHOP, SHOP.replace("href=/shop", "href=/store")),
    (
        "body links reordered and repeated (the same words read)",
        shop("<p><a href=/p/3>more</a> <a href=/p/4>more</a></p>"),
        shop("<p><a href=/p/4>more</a> <a href=/p/3>more</a><a href=/p/4><img src=/c.png></a></p>"),
    ),
    (
        "one target written absolute, relative, with a fragment",
        shop("<p><a href=/p/3>three</a></p>"),
        shop('<p><a href="../p/3#top">three</a></p>'),
    ),
    (
        "a session id in a body link (stripped as in a <loc>, G4)",
        shop("<p><a href=/p/3>three</a></p>"),
        shop("<p><a href=/p/3?sid=8f00d>three</a></p>"),
    ),
    (
        "microdata text re-spaced",
        shop('<p><span itemprop="name">Waffle cone</span></p>'),
        shop('<p><span itemprop="name">Waffle\n   cone</span></p>'),
    ),
    (
        "a link in a script or noscript",
        shop("<noscript><a href=/js>enable</a></noscript>"),
        shop("<noscript><a href=/js-help>enable</a></noscript>"),
    ),
]

# (case, page a, page b): a change of content.
CHANGE_DIFFERENT = [
    (
        "a price in JSON-LD",
        shop(_ld(_PRICE)),
        shop(_ld(_PRICE.replace('"10.00"', '"12.00"'))),
    ),
    ("a JSON-LD block added", SHOP, shop(_ld(_PRICE))),
    (
        "availability in JSON-LD",
        shop(_ld('{"@type":"Offer","availability":"https://schema.org/InStock"}')),
        shop(_ld('{"@type":"Offer","availability":"https://schema.org/OutOfStock"}')),
    ),
    (
        "a JSON-LD block that does not parse, changed",
        shop(_ld('{"price": "10.00",}')),
        shop(_ld('{"price": "12.00",}')),
    ),
    ("a body link's target", SHOP, SHOP.replace("href=/p/2", "href=/p/9")),
    ("a body link added", SHOP, shop("<p><a href=/p/3>three</a></p>")),
    (
        "a body link removed",
        shop("<p><a href=/p/3>three</a></p>"),
        shop("<p><a>three</a></p>"),
    ),
    (
        "a mailto link in the body",
        shop("<p><a href=mailto:a@shop.example>mail</a></p>"),
        shop("<p><a href=mailto:b@shop.example>mail</a></p>"),
    ),
    (
        "the canonical link added (the page names itself)",
        SHOP,
        shop(head=f'<link rel="canonical" href="{URL}">'),
    ),
    (
        "a microdata value in an attribute",
        shop('<div itemscope><meta itemprop="price" content="10.00"></div>'),
        shop('<div itemscope><meta itemprop="price" content="12.00"></div>'),
    ),
    (
        "a microdata link value",
        shop('<link itemprop="availability" href="https://schema.org/InStock">'),
        shop('<link itemprop="availability" href="https://schema.org/OutOfStock">'),
    ),
    (
        "a microdata time's datetime",
        shop('<time itemprop="dateModified" datetime="2024-05-01">May</time>'),
        shop('<time itemprop="dateModified" datetime="2024-05-02">May</time>'),
    ),
    (
        "a microdata property renamed",
        shop('<meta itemprop="lowPrice" content="10">'),
        shop('<meta itemprop="highPrice" content="10">'),
    ),
]


def _conf(**extra: object) -> Config:
    return Config.from_settings(Settings({"SITEMAPGEN_URI": "sitemaps", **extra}))


CONFIG = _conf()


class _Reporter:
    """The page reader's reporter: what it counted, by reason (a skip or an exclusion)."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def skip(self, reason: str, url: str, detail: object = None) -> None:
        self.reasons.append(reason)

    exclude = skip


def _content(document: str, url: str = URL, conf: Config = CONFIG) -> Content:
    response = HtmlResponse(
        url,
        body=document.encode(),
        headers={"Content-Type": "text/html; charset=utf-8"},
        request=Request(url),
    )
    facts = page_facts(response, conf, _Reporter())  # type: ignore[arg-type]
    assert facts is not None and facts.content is not None
    return facts.content


@pytest.mark.parametrize(("case", "a", "b"), CHANGE_SAME, ids=[c for c, _, _ in CHANGE_SAME])
def test_no_change(case: str, a: str, b: str) -> None:
    assert a != b or case == "identical bytes"
    first = _content(a)
    assert len(first.fingerprint) == FINGERPRINT_LENGTH
    assert _content(b).fingerprint == first.fingerprint


@pytest.mark.parametrize(
    ("case", "a", "b"), CHANGE_DIFFERENT, ids=[c for c, _, _ in CHANGE_DIFFERENT]
)
def test_change(case: str, a: str, b: str) -> None:
    assert _content(a).fingerprint != _content(b).fingerprint


def test_canonical_target_changed() -> None:
    """With the canonical not obeyed (the page stays listed), the URL it names counts."""
    conf = _conf(SITEMAPGEN_RESPECT_CANONICAL=False)
    a = _content(shop(head='<link rel="canonical" href="/p/1-old">'), conf=conf)
    b = _content(shop(head='<link rel="canonical" href="/p/1-new">'), conf=conf)
    same = _content(
        shop(head='<link rel="canonical" href="https://shop.example/p/1-new#x">'), conf=conf
    )
    assert a.fingerprint != b.fingerprint
    assert same.fingerprint == b.fingerprint  # resolved and normalised as a <loc>


def test_duplicates_are_the_text() -> None:
    """Two URLs of one page, each naming itself canonical and linking to itself: their
    changes differ (the canonical and the self-link are the URL's), their duplicate key
    is the text, as a reader sees it."""
    body = '<p><a href="?tab=reviews">Reviews</a></p>'
    a = _content(shop(body, head=f'<link rel="canonical" href="{URL}">'))
    other = URL + "?ref=mail"
    b = _content(shop(body, head=f'<link rel="canonical" href="{other}">'), url=other)
    assert a.fingerprint != b.fingerprint
    assert a.duplicate_key == b.duplicate_key == content_fingerprint(Selector(text=shop(body)))
    assert a.canonical and b.canonical


def test_text_alone_keeps_its_fingerprint() -> None:
    """A page with no structured data, canonical nor body link: its change fingerprint is
    its text's, the one the text-only version wrote (its notes need no re-baseline)."""
    document = "<html><head><title>T</title></head><body><p>Only words.</p></body></html>"
    content = _content(document)
    assert content.fingerprint == text_fingerprint("TOnly words.")
    assert content.text is None and content.duplicate_key == content.fingerprint
    with_link = _content(document.replace("words.", "<a href=/x>words</a>."))
    assert with_link.fingerprint != content.fingerprint
    assert with_link.duplicate_key == text_fingerprint("TOnly words.")


def test_microdata_values_as_microdata_defines_them() -> None:
    root = Selector(
        text="<body><div itemscope itemprop=offers><meta itemprop=price content=' 10 '>"
        "<a itemprop=url href=/buy>buy</a><img itemprop=image src=/i.png>"
        "<time itemprop='dateModified'> 1 May </time><data itemprop=sku value=A1>x</data>"
        "<span itemprop='name  alt'>Cone\n  cup</span><object itemprop=o data=/d></object>"
        "<meta itemprop=empty></div></body>"
    ).root
    assert microdata_values(root) == [
        "offers\t",
        "price\t10",
        "url\t/buy",
        "image\t/i.png",
        "dateModified\t1 May",
        "sku\tA1",
        "name alt\tCone cup",
        "o\t/d",
        "empty\t",
    ]


def test_structured_data_canonical_json() -> None:
    assert structured_data([{"b": [1, {"d": 1, "c": "\u00e9"}], "a": None}], ["  {x  y} "], []) == [
        '{"a":null,"b":[1,{"c":"\u00e9","d":1}]}',
        "{x y}",
    ]


def test_change_fingerprint_parts_do_not_pass_for_each_other() -> None:
    """A piece moved from one part to another, or split in two, is a change."""
    text = "0123456789abcdef"
    prints = {
        change_fingerprint(text, ["https://a.example/"], None, []),
        change_fingerprint(text, [], "https://a.example/", []),
        change_fingerprint(text, [], None, ["https://a.example/"]),
        change_fingerprint(text, [], None, ["https://a.", "example/"]),
        change_fingerprint(text, [], None, []),
    }
    assert len(prints) == 5


def test_microdata_bounded() -> None:
    """A page of many properties, nested so that each holds the text of all below it,
    costs a bounded read: the first properties, each text cut."""
    nested = "<span itemprop=p>" + "word " * 300
    root = Selector(text=f"<body>{nested * 200}{'</span>' * 200}</body>").root
    values = microdata_values(root)
    assert len(values) == 200
    assert all(len(v) <= len("p\t") + MAX_PROPERTY_TEXT for v in values)
    many = Selector(text="<body>" + "<i itemprop=q>x</i>" * (MAX_PROPERTIES + 5) + "</body>").root
    assert microdata_values(many) == ["q\tx"] * MAX_PROPERTIES
