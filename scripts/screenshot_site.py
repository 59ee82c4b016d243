#!/usr/bin/env python3
"""Screenshot the demo site's leaderboard page for the README (`docs/leaderboard.png`).

    .venv/bin/plumbline demo -o /tmp/demo
    .venv/bin/python scripts/screenshot_site.py /tmp/demo/site            # → docs/leaderboard.png
    .venv/bin/python scripts/screenshot_site.py /tmp/demo/site --page compare/index.html -o x.png

Drives Debian's chromium (`apt-get install chromium`) through Playwright, opening the page from
`file://` exactly as a reader would. Fails if the page logs an error or tries the network.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = (Path("/usr/lib/chromium/chromium"), Path("/usr/bin/chromium"))
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
]


def chromium() -> Path:
    for candidate in CHROMIUM:
        if candidate.is_file():
            return candidate
    raise SystemExit("chromium not found: apt-get install chromium")


def screenshot(page_path: Path, output: Path, *, width: int, height: int, full: bool) -> list[str]:
    """Save a PNG of the page; return the problems seen while loading it."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium()), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on(
                "console",
                lambda m: (
                    problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning")
                    else None
                ),
            )
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on(
                "request",
                lambda r: (
                    None
                    if r.url.startswith(("file:", "data:", "about:"))
                    else problems.append(f"network request: {r.url}")
                ),
            )
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(output), full_page=full)
        finally:
            browser.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("site", type=Path, help="the site directory (e.g. DEMO_DIR/site)")
    parser.add_argument("--page", default="leaderboard/index.html", help="page inside the site")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "leaderboard.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--full-page", action="store_true", help="the whole page, not the viewport")
    args = parser.parse_args(argv)
    page_path = args.site / args.page
    if not page_path.is_file():
        print(f"{page_path}: no such page (run `plumbline demo -o DIR` first)", file=sys.stderr)
        return 2
    problems = screenshot(
        page_path, args.output, width=args.width, height=args.height, full=args.full_page
    )
    for problem in problems:
        print(f"{page_path}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
