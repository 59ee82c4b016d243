"""Untrusted text is data: one escaping helper per output format.

Model names, arm names, task ids, paths, exception messages and model output reach every view.
`terminal` makes such text print literally in a rich console (no markup, no terminal control
sequences); `markdown` makes it literal text in a Markdown document (no HTML, no links, no
emphasis, no table cells or lines of its own). HTML needs no helper here: every page is rendered
by the Jinja2 environment in `report.html`, which autoescapes everything it is given.
"""

from __future__ import annotations

import re

# C0 and C1 control characters (ESC starts ANSI sequences), DEL, and the Unicode line and
# paragraph separators; tab and newline are kept by `terminal` and turned into spaces by
# `markdown`.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_LINE_BREAK = re.compile(r"\r\n|[\r\n\t\u2028\u2029\x0b\x0c\x85]")
# Characters that start Markdown syntax, backslash-escaped: a backslash, code spans, emphasis,
# links and images (both need an unescaped `[`), table cell breaks, strikethrough; `_` only at a
# word boundary (`gpt_4o` stays readable, `_emphasis_` does not render).
_MARKDOWN_PUNCTUATION = re.compile(r"[\\`*\[|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def visible_controls(text: str) -> str:
    """Control characters (other than tab and newline) written as `\\x1b`-style escapes."""
    return _CONTROL.sub(_visible, text)


def terminal(value: object) -> str:
    """`value` as text that a rich console prints exactly as written.

    Rich markup (`[bold]`, `[/]`, `[link=...]`) is escaped, and control characters that a
    terminal would act on (ANSI escape sequences, carriage returns, backspaces) are shown as
    `\\x1b`-style escapes. Newlines and tabs are kept (exception logs span lines).
    """
    from rich.markup import escape  # here, so that importing this module (for --help) is light

    return escape(visible_controls(str(value)))


_NAMED_BREAKS = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible_line_break(match: re.Match[str]) -> str:
    return "".join(
        _NAMED_BREAKS.get(c) or (f"\\u{ord(c):04x}" if ord(c) > 0xFF else f"\\x{ord(c):02x}")
        for c in match.group(0)
    )


def terminal_line(value: object) -> str:
    """`value` as text that a rich console prints exactly as written, on the current line:
    like `terminal`, and line breaks and tabs are shown as `\\n`-style escapes too, so a
    name holding a newline cannot print a line of its own (a fake progress line)."""
    return terminal(_LINE_BREAK.sub(_visible_line_break, str(value)))


def markdown(value: object) -> str:
    """`value` as literal inline Markdown: safe in a paragraph, a heading, a list item or a
    table cell.

    HTML is entity-escaped (`<script>` shows as text), Markdown punctuation is backslash-escaped
    (no links, images, code spans, emphasis or table cell breaks), line breaks become spaces and
    other control characters `\\x1b`-style escapes.
    """
    text = _LINE_BREAK.sub(" ", str(value))
    text = visible_controls(text)
    text = _MARKDOWN_PUNCTUATION.sub(lambda m: "\\" + m.group(0), text)
    return "".join(_HTML.get(char, char) for char in text)


#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def spreadsheet_cell(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula.

    A text cell starting with `=`, `+`, `-`, `@`, a tab or a line break (or their full-width
    forms) gets a leading `'`, as OWASP's "CSV Injection" advises; numbers, booleans and
    other text are returned unchanged (a negative number stays a number).
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def from_spreadsheet_cell(text: str) -> str:
    """The text `spreadsheet_cell` neutralised, back (`'=x` -> `=x`); other text unchanged."""
    if text.startswith("'") and text[1:].startswith(_FORMULA_START):
        return text[1:]
    return text
