"""A page's main text is its article: navigation, ads and footers stay out."""

from __future__ import annotations

from bot.tools.web.extract import render
from bot.tools.web.page import Page
from tests.tools.web.servers import ARTICLE


def page(body: str, media_type: str = "text/html") -> Page:
    return Page("https://news.example/fundy", media_type, "utf-8", body.encode(), cut=False)


def test_a_realistic_page_gives_its_title_and_article() -> None:
    text = render(page(ARTICLE))
    assert text.startswith("Title: Tidal power in the Bay of Fundy")
    assert "URL: https://news.example/fundy" in text
    assert "one hundred\nbillion tonnes" in text or "one hundred billion tonnes" in text
    assert "towed to shore for" in text
    for chrome in ("Subscribe now", "CHEAP WIDGETS", "Win a cruise", "All rights reserved"):
        assert chrome not in text


def test_a_page_without_an_article_falls_back_to_all_its_text() -> None:
    text = render(page("<html><body><ul><li>first item</li><li>second item</li></ul>"))
    assert "first item" in text and "second item" in text


def test_an_unnamed_type_is_sniffed_for_html() -> None:
    text = render(page(ARTICLE, media_type=""))
    assert "Bay of Fundy has the highest tides" in text
