"""The documentation site builds in strict mode and covers what it promises: every command of
the CLI, the API of the public modules, every shipped JSON Schema, and tutorials whose commands
and options exist."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from plumbline.cli.main import COMMANDS, main
from plumbline.leaderboard.suite import load_suite

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SCHEMAS = ROOT / "src" / "plumbline" / "schemas"

# One xdist group: the module's tests share one `mkdocs build` (`site`), which `--dist
# loadgroup` would otherwise run once in each worker that gets one of them.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("docs_site")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as `make docs` builds it (strict: any warning fails the build). Under
    `make test`, which has just run `make docs`, it is that build ($PLUMBLINE_DOCS_SITE)."""
    built = os.environ.get("PLUMBLINE_DOCS_SITE")
    if built:
        assert (Path(built) / "index.html").is_file(), f"PLUMBLINE_DOCS_SITE={built}: no site"
        return Path(built)
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    src = str(ROOT / "src")  # this checkout's plumbline, for mkdocs-click's imports
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    result = subprocess.run(
        [*command, "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def command_paths(
    command: click.Command, path: tuple[str, ...], ctx: click.Context | None
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command and subcommand of the CLI, with its path of names."""
    yield path, command
    if isinstance(command, click.Group):
        context = click.Context(command, info_name=path[-1], parent=ctx)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None, name
            yield from command_paths(sub, (*path, name), context)


def test_cli_reference_lists_every_command_and_subcommand(site: Path) -> None:
    page = (site / "reference" / "cli" / "index.html").read_text("utf-8")
    paths = [path for path, _ in command_paths(main, ("plumbline",), None)]
    assert {path[1] for path in paths if len(path) == 2} == set(COMMANDS)
    assert any(len(path) == 3 for path in paths)  # groups' subcommands are walked too
    for path in paths:
        assert f'id="{"-".join(path)}"' in page, " ".join(path)
    # every option of a command is in its usage block, with its help text
    assert "--fail-unless" in page and "Exit with status 1 unless every treatment" in page
    # click's verbatim (\b) paragraphs stay verbatim, not links or HTML
    assert "[--errors zero|exclude]" in page


def test_api_reference_renders_the_docstrings(site: Path) -> None:
    stats = (site / "reference" / "api" / "stats" / "index.html").read_text("utf-8")
    assert 'id="plumbline.stats.proportions.proportion_interval"' in stats
    assert "wilson_interval" in stats and "ConfidenceInterval" in stats
    # each package page documents every module of the package but its views
    for package in ("stats", "leaderboard", "compare", "reliability", "records"):
        html = (site / "reference" / "api" / package / "index.html").read_text("utf-8")
        for path in (ROOT / "src" / "plumbline" / package).glob("*.py"):
            if not path.stem.startswith("_") and path.stem not in {"render", "outputs"}:
                assert f'id="plumbline.{package}.{path.stem}"' in html, path
    compare = (site / "reference" / "api" / "compare" / "index.html").read_text("utf-8")
    assert 'id="plumbline.compare.analysis.compare_runs"' in compare
    result = (site / "reference" / "api" / "result" / "index.html").read_text("utf-8")
    assert 'id="plumbline.core.result.Interval"' in result


def test_schema_page_lists_and_ships_every_schema_file(site: Path) -> None:
    page = (site / "schemas" / "index.html").read_text("utf-8")
    files = sorted(SCHEMAS.glob("*.schema.json"))
    assert len(files) >= 5
    for path in files:
        assert f'href="{path.name}"' in page, path.name
        assert (site / "schemas" / path.name).read_bytes() == path.read_bytes()
    for group in ("Suites", "Records", "Results"):
        assert f">{group}<" in page, group


def test_existing_pages_are_kept_and_linked(site: Path) -> None:
    for page in ("index.html", "statistics/index.html", "reports/index.html", "ci-example.yml"):
        assert (site / page).is_file(), page
    home = (site / "index.html").read_text("utf-8")
    assert 'href="ci-example.yml"' in home and 'src="leaderboard.png"' in home
    for tutorial in ("leaderboard", "compare", "reliability"):
        assert (site / "tutorials" / tutorial / "index.html").is_file(), tutorial


def tutorial_commands() -> Iterator[tuple[str, list[str]]]:
    """Each `plumbline ...` command line in the tutorials' code blocks, continuations joined."""
    for page in sorted((DOCS / "tutorials").glob("*.md")):
        text = page.read_text("utf-8").replace("\\\n", " ")
        in_block = False
        for line in text.splitlines():
            if line.startswith("```"):
                in_block = not in_block
            elif in_block and line.startswith("plumbline "):
                yield page.name, shlex.split(line)[1:]


#: The command a group runs when its first argument names none of its commands.
DEFAULT_COMMANDS = {"leaderboard": "build", "history": "show"}


def test_tutorial_commands_and_options_exist() -> None:
    """A tutorial shows commands and options the CLI has (no stale spellings)."""
    seen = 0
    for page, words in tutorial_commands():
        command: click.Command = main
        ctx = click.Context(main, info_name="plumbline")
        while isinstance(command, click.Group) and words and not words[0].startswith("-"):
            sub = command.get_command(ctx, words[0])
            if sub is None:
                break  # an argument (`plumbline leaderboard LOGDIR` runs the default command)
            command, words = sub, words[1:]
            ctx = click.Context(command, info_name=command.name, parent=ctx)
        if isinstance(command, click.Group):  # `leaderboard LOGDIR` is `leaderboard build`
            default = command.get_command(ctx, DEFAULT_COMMANDS[command.name or ""])
            assert default is not None, (page, words)
            command = default
        options = {name for param in command.params for name in param.opts + param.secondary_opts}
        for word in words:
            if word.startswith("-") and word != "-":
                assert word.split("=", 1)[0] in options, (page, command.name, word)
        seen += 1
    assert seen == 36  # every command line of the tutorials


def test_tutorial_suite_example_is_a_valid_suite() -> None:
    suite = load_suite(DOCS / "tutorials" / "platform-suite.toml")
    assert [category.key for category in suite.categories] == ["support", "infra"]


#: An attribute or CSS reference that makes a browser load something: `src=`, `href=` of a
#: stylesheet, script, font or icon, `url(...)` and `@import` in CSS.
_LOADS = re.compile(
    r"""(?:<(?:script|img|iframe|source|audio|video|embed)\b[^>]*?\bsrc\s*=\s*["']?|"""
    r"""<link\b[^>]*?\bhref\s*=\s*["']?|url\(\s*["']?|@import\s+(?:url\(\s*)?["']?)"""
    r"""((?:https?:)?//[^"')\s>]+)""",
    re.IGNORECASE,
)


def test_the_site_loads_nothing_from_the_network(site: Path) -> None:
    """Every page, stylesheet and script of the built site refers to files of the site only:
    no web fonts, scripts or stylesheets fetched from a CDN (issue 38, item 10). Links the
    reader follows (`<a href>`) may point anywhere."""
    remote: list[str] = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".html", ".css", ".js") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        remote += [f"{path.relative_to(site)}: {m.group(1)}" for m in _LOADS.finditer(text)]
    assert not remote, "\n".join(remote[:20])
