"""The hreflang code lists are the ISO lists, as the ``pycountry`` package ships them."""

from __future__ import annotations

import pycountry

from scrapy_sitemapgen.sitemaps.langtags import ISO_639_1, ISO_3166_1_ALPHA_2, ISO_15924


def test_languages_are_iso_639_1() -> None:
    source = {lang.alpha_2 for lang in pycountry.languages if hasattr(lang, "alpha_2")}
    assert source == ISO_639_1, (sorted(source - ISO_639_1), sorted(ISO_639_1 - source))


def test_scripts_are_iso_15924() -> None:
    source = {script.alpha_4 for script in pycountry.scripts}
    assert source == ISO_15924, (sorted(source - ISO_15924), sorted(ISO_15924 - source))


def test_regions_are_iso_3166_1_alpha_2() -> None:
    source = {country.alpha_2 for country in pycountry.countries}
    assert source == ISO_3166_1_ALPHA_2, (
        sorted(source - ISO_3166_1_ALPHA_2),
        sorted(ISO_3166_1_ALPHA_2 - source),
    )
