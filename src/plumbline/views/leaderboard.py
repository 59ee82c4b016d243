"""Renderings of a leaderboard document: a terminal table, Markdown, and CSV.

Every view takes the typed `LeaderboardDocument` and formats through `plumbline.core.present`;
nothing here computes a number. A missing category is written "missing", never "0": it counts 0
in the overall, and the reader must see that it was not measured.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from plumbline.core import present
from plumbline.core.escape import markdown, spreadsheet_cell, terminal
from plumbline.core.result import Interval
from plumbline.leaderboard.result import (
    AdaptiveReplay,
    AdaptiveRun,
    AdjacentPair,
    JudgeCorrection,
    LeaderboardDocument,
    LeaderboardRow,
)
from plumbline.views import cost as cost_view

MISSING = "missing"
NOT_RUN = "not run"


def _interval(interval: Interval | None) -> str:
    return present.interval(interval, decimals=2)


def _counts_text(row: LeaderboardRow, key: str) -> str:
    counts = row.count(key)
    if counts is None:
        return ""
    return f"n={present.number(counts.n)}" + (
        f"×{present.number(counts.epochs)}" if counts.epochs > 1 else ""
    )


def _errors_of(row: LeaderboardRow, key: str) -> int:
    counts = row.count(key)
    return 0 if counts is None else counts.errors


def category_cell(row: LeaderboardRow, key: str) -> str:
    """A category score with its interval, or `missing` (with its excluded errors)."""
    value = row.score(key)
    if value is None:
        errors = _errors_of(row, key)
        return MISSING if not errors else f"{MISSING} ({present.number(errors)} errors excluded)"
    return f"{present.fixed(value)} {_interval(row.interval(key))}"


def overall_cell(row: LeaderboardRow) -> str:
    return f"{present.fixed(row.overall)} {_interval(row.interval('overall'))}"


CORRECTION_HEADER = [
    "model",
    "category",
    "judge only",
    "corrected (PPI)",
    "human only",
    "labelled / judged",
    "λ",
    "ρ",
    "more labels",
    "labels drawn at random?",
]


def selection_cell(fix: JudgeCorrection) -> str:
    """The check that the labelled questions are a uniform draw, in words: the judge's mean on
    the labelled vs the other questions and the p-value of the 1%-level test; "cannot tell"
    when the test cannot reach its level at this number of labels."""
    if fix.selection_pvalue is None:
        return present.MISSING
    if fix.labels_look_chosen:
        verdict = "NO: look chosen"
    elif fix.selection_can_tell is False:
        verdict = (
            f"cannot tell at {present.number(fix.n_labelled)} labels: even the judge's top or "
            "bottom answers would pass; draw them uniformly with `plumbline judge sample`"
        )
    else:
        verdict = "yes"
    return (
        f"{verdict} (judge {present.fixed(fix.judge_labelled_mean)} labelled vs "
        f"{present.fixed(fix.judge_unlabelled_mean)} others, p = "
        f"{present.number(fix.selection_pvalue, 2)}, a test at the "
        f"{present.percent(fix.selection_alpha or 0.01, 0)} level)"
    )


def correction_rows(document: LeaderboardDocument) -> list[list[str]]:
    """One row per corrected (model, category): the judge-only score next to the corrected
    one, with what the correction rests on."""
    rows: list[list[str]] = []
    for row in document.models:
        for key, fix in (row.corrections or {}).items():
            more = present.MISSING
            if fix.requested_half_width is not None:
                more = (
                    "unreachable"
                    if fix.more_labels_needed is None
                    else f"{present.number(fix.more_labels_needed)} for "
                    f"±{present.fixed(fix.requested_half_width, 3)}"
                )
            rows.append(
                [
                    row.model,
                    key,
                    f"{present.fixed(fix.judge_only)} {_interval(fix.judge_only_interval)}",
                    f"{present.fixed(fix.estimate)} {_interval(fix.interval)}",
                    present.fixed(fix.human_only),
                    f"{present.number(fix.n_labelled)} / {present.number(fix.n_judged)}",
                    present.fixed(fix.lambda_, 2),
                    present.fixed(fix.correlation, 2),
                    more,
                    selection_cell(fix),
                ]
            )
    return rows


def _title(document: LeaderboardDocument) -> str:
    suite = document.metadata.suite
    if suite is None:
        return "Leaderboard"
    return suite.title or suite.name


def _pair_cells(pair: AdjacentPair, *, interval_on: str) -> list[str]:
    """One adjacent pair as table cells (model names raw: each view escapes them); the paired
    difference and its interval are joined by `interval_on` (a new line in the terminal)."""
    return [
        pair.higher,
        pair.lower,
        present.points(pair.overall_difference),
        f"{present.points(pair.difference)}{interval_on}"
        f"{present.interval(pair.interval, as_percent=True)}",
        present.fixed(pair.pvalue_holm, 4),
        ("yes" if pair.tied else "no") + (" (unpaired)" if pair.unpaired else ""),
        "yes" if pair.sa_bench_equivalent else "no",
    ]


def _tie_note(document: LeaderboardDocument) -> str:
    if document.adaptive is not None:
        return (
            "tie: models sharing a number were not decided apart by the adaptive run (see "
            "below). A missing category counts 0 in overall."
        )
    alpha = document.metadata.alpha
    return (
        "tie: models sharing a number are not significantly different (paired MOVER interval "
        f"over shared questions, Holm-corrected, α = {present.number(alpha)}). "
        "A missing category counts 0 in overall."
    )


def _equivalence(document: LeaderboardDocument) -> str:
    return f"≤{present.number((document.metadata.sa_bench_equivalence or 0) * 100)} pts"


def _print_corrections(document: LeaderboardDocument, console: Console) -> None:
    """The judge-only score next to the corrected one, for every corrected category."""
    corrections = correction_rows(document)
    if not corrections:
        return
    fixes = Table(
        title="Judge corrected with human labels (prediction-powered inference)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    for header in CORRECTION_HEADER:
        left = header in ("model", "category")
        fixes.add_column(header, justify="left" if left else "right", no_wrap=left)
    for cells in corrections:
        fixes.add_row(*(terminal(cell) for cell in cells))
    console.print(fixes)


def _terminal_cells(document: LeaderboardDocument, row: LeaderboardRow) -> list[str]:
    """A model's row of the terminal table: rank, tie group, name, categories, overall."""
    cells = [present.number(row.rank), present.number(row.tie_group), terminal(row.model)]
    for key, category in document.categories.items():
        value = row.score(key)
        if category.not_run is not None:
            cells.append(f"[yellow]{NOT_RUN}[/yellow]")
        elif value is None:
            cells.append(f"[yellow]{category_cell(row, key)}[/yellow]")
        else:
            interval = _interval(row.interval(key))
            detail = _counts_text(row, key)
            cells.append(f"{present.fixed(value)}\n{interval}\n[dim]{detail}[/dim]")
    cells += [
        f"{present.fixed(row.overall)}\n{_interval(row.interval('overall'))}",
        present.number(row.errors),
    ]
    return cells


def _pairs_table(document: LeaderboardDocument) -> Table:
    """The adjacent comparisons as a terminal table."""
    pairs = Table(
        title="Adjacent pairs",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    pairs.add_column("higher", no_wrap=True)
    pairs.add_column("lower", no_wrap=True)
    for header in (
        "Δ overall",
        "paired Δ\n[CI]",
        "p\n(Holm)",
        "tied",
        f"SA Bench:\n{_equivalence(document)}",
    ):
        pairs.add_column(header, justify="right", overflow="fold")
    for pair in document.comparisons:
        higher, lower, *numbers = _pair_cells(pair, interval_on="\n")
        pairs.add_row(terminal(higher), terminal(lower), *numbers)
    return pairs


def render_terminal(document: LeaderboardDocument, console: Console) -> None:
    """The leaderboard table, the adjacent comparisons, and the input problems."""
    metadata = document.metadata
    table = Table(
        title=f"{terminal(_title(document))} leaderboard ({present.number(metadata.model_count)} "
        f"models, {present.number(metadata.log_count)} logs, "
        f"errors={metadata.errors_policy or present.MISSING})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("#", justify="right")
    table.add_column("tie", justify="right")
    longest = max((len(model.model) for model in document.models), default=5)
    table.add_column("model", no_wrap=True, min_width=min(longest, 40))
    for category in document.categories.values():
        table.add_column(
            f"{terminal(category.name)}\n×{present.shortest(category.weight)}",
            justify="right",
            min_width=5,
            overflow="fold",
        )
    table.add_column(
        f"overall\n[{present.level(metadata.level or 0.95)} CI]",
        justify="right",
        style="bold",
        overflow="fold",
    )
    table.add_column("errors", justify="right")
    for row in document.models:
        table.add_row(*_terminal_cells(document, row))
    console.print(table)
    if document.metadata.overall_note:
        console.print(f"[yellow]{terminal(document.metadata.overall_note)}[/yellow]")
    console.print(_tie_note(document))
    if document.comparisons:
        console.print(_pairs_table(document))
    _print_corrections(document, console)
    _print_problems(document, console)


def _print_problems(document: LeaderboardDocument, console: Console) -> None:
    if document.problems:
        console.print(
            f"[bold yellow]{present.number(document.metadata.problem_count)} problem(s) with "
            "the input:[/bold yellow]"
        )
        for problem in document.problems:
            console.print(f"  [yellow]{terminal(problem.kind)}[/yellow] {terminal(str(problem))}")


def render_markdown(document: LeaderboardDocument) -> str:
    """A Markdown page: the table, how to read it, the pairs, and the problems."""
    metadata = document.metadata
    policies = {"zero": "0", "exclude": "excluded", None: "not recorded"}
    policy = policies[metadata.errors_policy]
    lines = [
        f"# {markdown(_title(document))} leaderboard",
        "",
        f"Generated {markdown(metadata.generated_at)} · run {markdown(metadata.run_id or '')} · "
        f"{present.number(metadata.model_count)} models · {present.number(metadata.log_count)} "
        f"logs · errors counted as {policy}",
        "",
        f"`{metadata.overall_formula}`; a missing category counts 0 and is shown as *missing*.",
        "",
        *([markdown(metadata.overall_note), ""] if metadata.overall_note else []),
    ]
    level = present.level(metadata.level or 0.95)
    header = ["#", "tie group", "model"]
    header += [f"{c.name} ({present.shortest(c.weight)})" for c in document.categories.values()]
    header += [f"overall [{level} CI]", "errors"]
    priced = cost_view.has_cost(document)
    if priced:
        header += [f"cost/sample [{level} CI]", "total cost", "P(on front)"]
    rows: list[list[str]] = []
    for row in document.models:
        cells = [present.number(row.rank), present.number(row.tie_group), row.model]
        for key, category in document.categories.items():
            if category.not_run is not None:
                cells.append(f"*{NOT_RUN}*")
            else:
                cells.append(f"*{MISSING}*" if row.score(key) is None else category_cell(row, key))
        cells += [f"**{overall_cell(row)}**", present.number(row.errors)]
        if priced:
            cells += cost_view.markdown_cells(document, row)
        rows.append(cells)
    # cells carry their own emphasis (`*missing*`, `**0.8**`): only the text inside is escaped
    align = "rrl" + "r" * (len(document.categories) + 2 + (3 if priced else 0))
    lines.append(present.markdown_table(header, rows, align=align, cell=_cell))
    if priced:
        lines += ["", *cost_view.markdown_section(document)]
    lines += ["", "## Categories", "", _categories_table(document)]
    lines += _adaptive_lines(document)
    if document.comparisons:
        lines += ["", "## Adjacent pairs", ""]
        lines.append(
            present.markdown_table(
                [
                    "higher",
                    "lower",
                    "Δ overall",
                    f"paired Δ [{level} CI]",
                    "p (Holm)",
                    "tied",
                    f"SA Bench: within {_equivalence(document)}",
                ],
                [_pair_cells(pair, interval_on=" ") for pair in document.comparisons],
                align="llrrrll",
            )
        )
    corrections = correction_rows(document)
    if corrections:
        lines += ["", "## Judge corrected with human labels", ""]
        lines.append(present.markdown_table(CORRECTION_HEADER, corrections, align="llrrrrrrrl"))
    if document.problems:
        lines += ["", "## Problems with the input", ""]
        lines += [f"- **{markdown(p.kind)}**: {markdown(str(p))}" for p in document.problems]
    return "\n".join(lines) + "\n"


def _categories_table(document: LeaderboardDocument) -> str:
    """The Markdown table of the categories: weight, scoring, questions, confidence, margin."""
    return present.markdown_table(
        ["category", "key", "weight", "scoring", "questions scored", "confidence", "margin"],
        [
            [
                meta.name,
                key,
                present.shortest(meta.weight),
                meta.scoring,
                present.number(meta.sample_count),
                meta.confidence or present.MISSING,
                meta.margin or present.MISSING,
            ]
            for key, meta in document.categories.items()
        ],
        align="llrlrlr",
    )


def _adaptive_lines(document: LeaderboardDocument) -> list[str]:
    """An adaptive run's summary for the Markdown page (none for a full run)."""
    run = document.adaptive
    if run is None:
        return []
    lines = ["", f"Adaptive run: {markdown(adaptive_summary(run))}."]
    open_pairs = open_pair_names(run)
    if open_pairs:
        lines += ["", f"Still open: {markdown(', '.join(open_pairs))}."]
    within = margin_pair_names(run)
    if within:
        lines += ["", f"{margin_heading(run)}: {markdown(', '.join(within))}."]
    return [*lines, "", f"Guarantee: {markdown(run.guarantee)}."]


def _cell(text: str) -> str:
    """A ranking cell escaped as literal text, keeping its own `*`/`**` emphasis."""
    for mark in ("**", "*"):
        if text.startswith(mark) and text.endswith(mark) and len(text) > 2 * len(mark):
            return mark + markdown(text[len(mark) : -len(mark)]) + mark
    return markdown(text)


def csv_rows(document: LeaderboardDocument) -> list[dict[str, Any]]:
    """One row per model; a missing category has an empty value and `<key>.missing` true.

    A category's columns are its key and `<key>.<what>`: a key is letters, digits and `_`, so
    the dot keeps `qa`'s columns apart from those of a category `qa_low`."""
    rows: list[dict[str, Any]] = []
    for model in document.models:
        overall = model.interval("overall")
        row: dict[str, Any] = {
            "rank": model.rank,
            "tie_group": model.tie_group,
            "sa_bench_group": model.sa_bench_group,
            "model": model.model,
            "overall": model.overall,
            "overall.low": None if overall is None else overall.low,
            "overall.high": None if overall is None else overall.high,
            "overall.se": model.standard_error("overall"),
        }
        for key in document.categories:
            interval = model.interval(key)
            counts = model.count(key)
            row[key] = model.score(key)
            row[f"{key}.low"] = None if interval is None else interval.low
            row[f"{key}.high"] = None if interval is None else interval.high
            row[f"{key}.se"] = model.standard_error(key)
            row[f"{key}.n"] = None if counts is None else counts.n
            row[f"{key}.epochs"] = None if counts is None else counts.epochs
            row[f"{key}.errors"] = None if counts is None else counts.errors
            row[f"{key}.missing"] = model.score(key) is None
        if cost_view.has_cost(document):
            row.update(cost_view.csv_columns(document, model))
        rows.append(row)
    return rows


def render_csv(document: LeaderboardDocument) -> str:
    rows = csv_rows(document)
    buffer = io.StringIO()
    if not rows:
        return ""
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else spreadsheet_cell(v) for k, v in row.items()})
    return buffer.getvalue()


def adaptive_summary(run: AdaptiveRun) -> str:
    """ "ranked with N of M calls (share)" and why the run stopped."""
    share = run.calls_used / run.calls_full if run.calls_full else 0.0
    reasons = {
        "decided": "every pair settled",
        "budget": "the budget reached",
        "questions": "every question asked",
    }
    return (
        f"ranked with {present.number(run.calls_used)} of {present.number(run.calls_full)} "
        f"calls ({present.percent(share)}); stopped: {reasons[run.stop_reason]}"
    )


def open_pair_names(run: AdaptiveRun) -> list[str]:
    """The pairs still open when the run stopped, as `a – b`."""
    return [f"{pair.first} – {pair.second}" for pair in run.pairs if pair.status == "open"]


def margin_pair_names(run: AdaptiveRun) -> list[str]:
    """The pairs ordered only up to the tie margin, as `a over b` (a is not behind b by the
    margin or more)."""
    names = []
    for pair in run.pairs:
        if pair.status == "ahead_within_margin":
            names.append(f"{pair.first} over {pair.second}")
        elif pair.status == "behind_within_margin":
            names.append(f"{pair.second} over {pair.first}")
    return names


def margin_heading(run: AdaptiveRun) -> str:
    """What a pair within the margin means, for the list of them."""
    margin = present.shortest(run.tie_margin)
    return f"Within δ = {margin} (the first not behind by {margin} or more; not decided apart)"


def render_adaptive(run: AdaptiveRun, console: Console) -> None:
    """An adaptive run's summary: the calls it used, the open pairs, the pairs ordered only up
    to the tie margin, and the guarantee."""
    console.print(f"[bold]Adaptive:[/bold] {terminal(adaptive_summary(run))}")
    open_pairs = open_pair_names(run)
    if open_pairs:
        console.print(f"  still open: {terminal(', '.join(open_pairs))}")
    within = margin_pair_names(run)
    if within:
        console.print(f"  {terminal(margin_heading(run))}: {terminal(', '.join(within))}")
    console.print(f"  guarantee: {terminal(run.guarantee)}")


def render_replay(report: AdaptiveReplay, console: Console) -> None:
    """`leaderboard --replay-adaptive`: the share of calls and each pair's agreement."""
    console.print(
        f"[bold]Adaptive replay[/bold]: {present.number(report.replays)} random orders over "
        f"{present.number(report.questions)} questions answered by "
        f"{present.number(len(report.models))} models "
        f"(tie margin {present.shortest(report.tie_margin)}, "
        f"rounds of {present.number(report.round_size)})"
    )
    console.print(
        f"median share of a full run's calls: {present.percent(report.median_share)} "
        f"(10–90%: {present.percent(report.share_low)}–{present.percent(report.share_high)}); "
        f"replays where any pair disagrees with all the data: "
        f"{present.percent(report.any_disagreement)}"
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("pair", overflow="fold")
    table.add_column("full difference", justify="right")
    table.add_column("decided", justify="right")
    table.add_column("tied", justify="right")
    table.add_column("within δ", justify="right")
    table.add_column("disagree", justify="right")
    for pair in report.pairs:
        table.add_row(
            f"{terminal(pair.first)} – {terminal(pair.second)}",
            present.signed(pair.full_difference),
            present.percent(pair.decided),
            present.percent(pair.tied),
            present.percent(pair.within_margin),
            present.percent(pair.disagree),
        )
    console.print(table)
    console.print(f"guarantee: {terminal(report.guarantee)}")
