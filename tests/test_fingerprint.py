"""The content fingerprint's case table (docs/lastmod.rst, "Content"): pairs of pages that
must count as the same content, and pairs that must not. The expectations are written from
the issue's rule (markup, attributes, scripts, styles, whitespace and footers do not count;
any change of the main text does), not read from the code."""

from __future__ import annotations

import pytest
from parsel import Selector

from scrapy_sitemapgen.pages.fingerprint import (
    FINGERPRINT_LENGTH,
    NOT_CONTENT,
    content_fingerprint,
    text_fingerprint,
)

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
