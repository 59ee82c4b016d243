"""The page of an agent run (`plumbline agent run --json`): what ran, and how each arm's runs
ended, from the typed `AgentRunDocument`; its comparison, when it has one, is named by its
decision (its own page is the A/B comparison's: `agent run --html`)."""

from __future__ import annotations

from typing import Any

from plumbline.agent.result import AgentRunDocument
from plumbline.core import present
from plumbline.views.html import Page, environment, root_prefix
from plumbline.views.site import SiteInput

#: The kind's name on the site's index.
TITLE = "Agent run"
#: The index card's headline for an earlier site's agent run this version cannot read.
UNREADABLE = "an agent run this version cannot read: regenerate it"

_TEMPLATE = """{% extends "base.html.j2" %}
{% block content %}
<h1>{{ title }}</h1>
<p class="muted">{{ run.ran }} of {{ run.scheduled }} unit(s) run by this invocation,
{{ run.skipped }} skipped as already recorded ({{ run.executor }} executor); run records in
<code>{{ run.records }}</code>.</p>
{% if decision %}<p><strong>A/B decision:</strong> {{ decision }}</p>{% endif %}
<section class="card">
<h2>Runs per arm</h2>
<table class="sortable">
<thead><tr><th>arm</th><th class="num">runs</th><th class="num">successes</th>
<th class="num">timed out</th><th class="num">infrastructure failures</th>
<th class="num">protected paths edited</th></tr></thead>
<tbody>
{% for name, arm in run.arms.items() %}
<tr><td>{{ name }}</td><td class="num">{{ number(arm.runs) }}</td>
<td class="num">{{ number(arm.successes) }}</td><td class="num">{{ number(arm.timed_out) }}</td>
<td class="num">{{ number(arm.infra_failures.values()|sum) }}</td>
<td class="num">{{ number(arm.protected_paths_modified) }}</td></tr>
{% endfor %}
</tbody>
</table>
</section>
{% if run.record_errors %}
<section class="card">
<h2>Record errors</h2>
<ul>{% for error in run.record_errors %}<li><code>{{ error }}</code></li>{% endfor %}</ul>
</section>
{% endif %}
<p class="muted small">The run's document:
<a href="{{ root }}{{ data_path }}">{{ data_path }}</a>.</p>
{% endblock %}
"""


def _decision(run: AgentRunDocument) -> str | None:
    decision = (run.compare or {}).get("decision")
    return decision if isinstance(decision, str) else None


def render(site_input: SiteInput[AgentRunDocument], slug: str) -> list[Page]:
    """The agent run's page: `<slug>/index.html`."""
    run = site_input.typed()
    path = f"{slug}/index.html"
    title = f"Agent run: {', '.join(run.arms) or site_input.name}"
    html = (
        environment()
        .from_string(_TEMPLATE)
        .render(
            root=root_prefix(path),
            title=title,
            path=path,
            run=run,
            decision=_decision(run),
            number=present.number,
            data_path=f"data/{slug}.json",
        )
    )
    return [Page(path=path, title=title, html=html)]


def card(site_input: SiteInput[AgentRunDocument]) -> dict[str, Any]:
    """The index card of an agent run: its arms, what ran, and its decision when analysed."""
    run = site_input.typed()
    return {
        "title": ", ".join(run.arms) or site_input.name,
        "headline": _decision(run) or f"{run.ran} of {run.scheduled} unit(s) run",
        "facts": [
            f"{present.number(sum(arm.runs for arm in run.arms.values()))} run records",
            f"{len(run.record_errors)} record error(s)",
        ],
    }
