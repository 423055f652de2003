"""Hover help for the Traffic tab's terms (explorer/views/glossary.py)."""

from __future__ import annotations

from html import escape

from explorer.views.glossary import GLOSSARY, with_terms


def test_the_first_mention_of_each_term_gets_its_sentence_and_no_tag_is_touched():
    html = ("<b class='flit'>Flits</b> wait for a credit; more flits, more credits. "
            "<span title='saturation'>past saturation</span>, back-pressure spreads.")  # fmt: skip
    marked = with_terms(html)
    for term in ("flit", "credit", "saturation", "back-pressure"):
        assert marked.count(f'title="{escape(GLOSSARY[term])}"') == 1, term
    assert "<b class='flit'>" in marked and "<span title='saturation'>" in marked  # tags intact
    assert f'<abbr title="{escape(GLOSSARY["flit"])}">Flits</abbr>' in marked  # its own case
    assert "more flits, more credits" in marked  # only the first mention


def test_a_text_without_the_terms_is_unchanged():
    assert with_terms("<i>nothing to explain here</i>") == "<i>nothing to explain here</i>"
