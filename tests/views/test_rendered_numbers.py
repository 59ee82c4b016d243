"""The check behind "a view cannot show a number the document lacks" finds what it should."""

from __future__ import annotations

from tests.support.rendered_numbers import page_text, unexplained_numbers


def test_numbers_shown_at_their_precision_match() -> None:
    document = {"model": "gpt-4o-2024", "score": 0.84123, "n": 1234, "rate": 4.5}
    text = page_text(
        "<p>gpt-4o-2024 scored 84.1% (0.841) on 1,234 questions; errors 4.5%</p>"
        "<script>var x = 999;</script>"
    )
    assert unexplained_numbers(text, document) == []


def test_a_number_the_document_lacks_is_reported() -> None:
    document = {"score": 0.84123}
    problems = unexplained_numbers(page_text("<td>84.1%</td><td>0.912</td>"), document)
    assert len(problems) == 1 and "0.912" in problems[0]


def test_a_number_shown_more_precisely_than_it_is_known_is_reported() -> None:
    assert unexplained_numbers("0.8413", {"score": 0.84123}) != []
