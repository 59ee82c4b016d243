"""The shared HTML layer: filters, script-safe JSON, page paths and autoescaping."""

from __future__ import annotations

import json

import jinja2
import pytest
from markupsafe import Markup

from plumbline.views.html import (
    environment,
    json_for_script,
    render_page,
    root_prefix,
)


def test_json_for_script_cannot_close_the_script_element() -> None:
    value = {"text": "</script><script>alert(1)</script> & <!-- \u2028"}
    encoded = json_for_script(value)
    assert isinstance(encoded, Markup)
    assert "<" not in encoded and ">" not in encoded and "&" not in encoded
    assert "\u2028" not in encoded
    assert json.loads(str(encoded)) == value


def test_root_prefix() -> None:
    assert root_prefix("index.html") == ""
    assert root_prefix("compare/index.html") == "../"
    assert root_prefix("board/models/a.html") == "../../"


def test_render_page_escapes_context_and_links_to_root() -> None:
    env = environment()
    assert env.autoescape is True
    loader = jinja2.ChoiceLoader(
        [
            jinja2.DictLoader(
                {
                    "probe.html.j2": '{% extends "base.html.j2" %}'
                    "{% block content %}<p id=v>{{ value }}</p>{% endblock %}"
                }
            ),
            env.loader,  # type: ignore[list-item]
        ]
    )
    page = env.overlay(loader=loader).get_template("probe.html.j2")
    html = page.render(
        root="../", title="<b>t</b>", path="x/index.html", value="<script>x</script>"
    )
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<b>t</b>" not in html
    assert 'href="../index.html"' in html


def test_render_page_refuses_paths_outside_the_site() -> None:
    with pytest.raises(ValueError, match="inside the site"):
        render_page("base.html.j2", path="../escape.html", title="t")


def test_base_page_has_no_external_resources() -> None:
    page = render_page("base.html.j2", path="a/index.html", title="T")
    assert page.path == "a/index.html"
    assert "http://" not in page.html.replace("http://www.w3.org", "")
    assert "https://" not in page.html
    assert 'href="../index.html"' in page.html
