"""MkDocs hooks of the documentation site (`mkdocs.yml`, `hooks:`).

The schema page lists every `*.schema.json` under `src/plumbline/schemas/`, read when the site
is built, so a new or regenerated schema appears without editing the docs: each gets a section
(title, description, a table of its top-level fields with type, unit and whether required, and
the whole file in a fold), and the file itself is shipped with the site under `schemas/`.

An API page names a package with `<!-- api: plumbline.compare -->`; the hook expands it to the
package's docstring and a mkdocstrings section per module of the package (in file name order;
private modules and the views, `render` and `outputs`, left out), so a module added, renamed or
removed needs no edit here.

The CLI reference (mkdocs-click) renders a command's help as Markdown; click's help is plain
text, so `command_description` renders it as click does: a paragraph that starts with `\\b` is
kept verbatim (a code block), other text keeps its `code spans`, and `<`, `[`, `*` outside them
are text, not HTML, links or emphasis; `subcommand_links` lists a group's subcommands with
click's short help.
"""

from __future__ import annotations

import html
import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import mkdocs_click._docs
from markdown.extensions.toc import slugify
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "src" / "plumbline" / "schemas"
SCHEMA_PAGE = "schemas.md"
MARKER = "<!-- schemas: generated from src/plumbline/schemas/ -->"
API_MARKER = re.compile(r"<!-- api: (plumbline(?:\.\w+)*) -->")
VIEW_MODULES = frozenset({"render", "outputs"})

# (heading, what the group holds); a schema joins the first group whose test accepts its name.
GROUPS: tuple[tuple[str, str], ...] = (
    ("Suites", "What to run: the inputs you write."),
    ("Records", "What happened, one record per run or trial: inputs of the analyses."),
    ("Results", "What the analyses conclude: the documents every view renders."),
    ("Data sets and answers", "The built-in SA Bench data and the answers its scorers read."),
)


def schema_files() -> list[Path]:
    """Every shipped JSON Schema, sorted by file name."""
    return sorted(SCHEMA_DIR.glob("*.schema.json"))


def group_of(name: str, schema: dict[str, Any]) -> str:
    """The group of a schema file: by its name, or by the `schema_version` a result carries."""
    properties = schema.get("properties", {})
    if "suite" in name:
        return "Suites"
    if "record" in name:
        return "Records"
    if (
        name.startswith("leaderboard")
        or name.endswith("_report.schema.json")
        or "schema_version" in properties
    ):
        return "Results"
    return "Data sets and answers"


def cell(text: str) -> str:
    """Text made safe for one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def type_of(node: dict[str, Any]) -> str:
    """A short reading of a property's type: `string`, `array of Run`, `number or null`..."""
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            return " or ".join(type_of(option) for option in node[key])
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array" and isinstance(node.get("items"), dict):
        return f"array of {type_of(node['items'])}"
    return str(kind) if kind else "any"


def unit_of(node: dict[str, Any]) -> str:
    """The unit a number states (`unit`), looked up through `anyOf` options too."""
    if "unit" in node:
        return str(node["unit"])
    for option in node.get("anyOf", []) + node.get("oneOf", []):
        if isinstance(option, dict) and "unit" in option:
            return str(option["unit"])
    return ""


def field_table(schema: dict[str, Any]) -> list[str]:
    """The top-level fields of a schema as a Markdown table (none: no table)."""
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return []
    required = set(schema.get("required", []))
    lines = ["| field | type | unit | required | description |", "|---|---|---|---|---|"]
    for name, node in properties.items():
        node = node if isinstance(node, dict) else {}
        lines.append(
            f"| `{cell(name)}` | {cell(type_of(node))} | {cell(unit_of(node))} | "
            f"{'yes' if name in required else ''} | {cell(str(node.get('description', '')))} |"
        )
    return lines


def schema_section(path: Path, schema: dict[str, Any]) -> list[str]:
    """One schema's section of the page."""
    text = path.read_text("utf-8").rstrip("\n")
    title = schema.get("title", path.name)
    lines = [
        f"### {path.name}",
        "",
        f"**{title}**: [download](schemas/{path.name}); in the package: "
        f"`plumbline/schemas/{path.name}`"
        + (f"; `$id` `{schema['$id']}`" if "$id" in schema else ""),
        "",
    ]
    if schema.get("description"):
        lines += [str(schema["description"]), ""]
    table = field_table(schema)
    if table:
        lines += [*table, ""]
    lines += [f'??? note "The whole schema: {path.name}"', "", "    ```json"]
    lines += [f"    {line}" if line else "" for line in text.splitlines()]
    lines += ["    ```", ""]
    return lines


def schemas_markdown() -> str:
    """Every schema, grouped: the generated part of the schema page."""
    loaded = [(path, json.loads(path.read_text("utf-8"))) for path in schema_files()]
    lines: list[str] = []
    for heading, blurb in GROUPS:
        members = [(p, s) for p, s in loaded if group_of(p.name, s) == heading]
        if not members:
            continue
        lines += [f"## {heading}", "", blurb, ""]
        for path, schema in members:
            lines += schema_section(path, schema)
    return "\n".join(lines)


def package_modules(package: str) -> list[str]:
    """The public modules of a package of src/, in file name order (views left out)."""
    directory = ROOT / "src" / Path(*package.split("."))
    if not (directory / "__init__.py").is_file():
        raise ValueError(f"{package} is not a package under src/")
    return [
        f"{package}.{path.stem}"
        for path in sorted(directory.glob("*.py"))
        if not path.stem.startswith("_") and path.stem not in VIEW_MODULES
    ]


def api_markdown(package: str) -> str:
    """A package's docstring, then each of its modules, as mkdocstrings directives."""
    lines = [f"::: {package}", "    options:", "      members: false", ""]
    for module in package_modules(package):
        lines += [f"::: {module}", ""]
    return "\n".join(lines)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Ship each schema file with the site, under `schemas/`."""
    for path in schema_files():
        files.append(File.generated(config, f"schemas/{path.name}", abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Fill the schema page's marker with a section per schema file, and API pages' markers
    with a section per module."""
    markdown = API_MARKER.sub(lambda match: api_markdown(match.group(1)), markdown)
    if page.file.src_uri != SCHEMA_PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{SCHEMA_PAGE}: the marker {MARKER!r} is missing")
    return markdown.replace(MARKER, schemas_markdown())


def on_serve(server: Any, config: MkDocsConfig, builder: Any) -> Any:
    """`mkdocs serve` rebuilds when a schema file changes."""
    server.watch(str(SCHEMA_DIR))
    return server


def plain_text(text: str) -> str:
    """Help text as Markdown that shows it literally, `code spans` kept."""
    pieces = re.split(r"(`[^`]*`)", text)
    for index in range(0, len(pieces), 2):  # the text between code spans
        escaped = html.escape(pieces[index], quote=False)
        pieces[index] = re.sub(r"([\\\[\]*_])", r"\\\1", escaped)
    return "".join(pieces)


def command_description(ctx: click.Context, remove_ascii_art: bool = False) -> Iterator[str]:
    """A command's help as Markdown lines: click's `\\b` paragraphs verbatim, the rest as text."""
    help_string = ctx.command.help or ctx.command.short_help
    if not help_string:
        return
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(help_string)):
        lines = paragraph.splitlines()
        if lines and lines[0].strip() == "\b":
            yield from ["```text", *lines[1:], "```", ""]
        else:
            yield from [plain_text(" ".join(line.strip() for line in lines)), ""]


def subcommand_links(
    subcommands: list[click.Command],
    parent: click.Context,
    has_attr_list: bool,
    show_hidden: bool,
) -> Iterator[str]:
    """A group's list of subcommands, each linked to its section with click's short help."""
    yield from ["**Subcommands**", ""]
    for command in subcommands:
        name = str(command.name)
        if command.hidden and not show_hidden:
            continue
        path = f"{parent.command_path} {name}"
        anchor = f"[{name}](#{slugify(path, '-')})" if has_attr_list else name
        yield f"- *{anchor}*: {plain_text(command.get_short_help_str(limit=120))}"
    yield ""


mkdocs_click._docs._make_description = command_description
mkdocs_click._docs._make_subcommands_links = subcommand_links
