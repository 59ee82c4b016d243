"""Open report pages in Debian's chromium through Playwright and record everything that went wrong.

A `PageVisit` collects console errors and warnings, uncaught page errors, failed requests, and any
request that leaves the machine (a URL that is not `file:`, `data:` or `about:`): a report page
must work offline from `file://`, so a network attempt is a failure even when it would succeed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Request

#: Debian's chromium: the real binary first (the /usr/bin wrapper is a shell script).
CHROMIUM_PATHS = (Path("/usr/lib/chromium/chromium"), Path("/usr/bin/chromium"))
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
)
LOCAL_SCHEMES = ("file:", "data:", "about:")

T = TypeVar("T")


def outside_event_loop(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `function` on a fresh thread and return its result.

    Playwright's sync API leaves its event loop marked as running on the test thread, so code
    that calls `asyncio.run` (Inspect's `eval`, async runners) fails there once the session's
    browser has started. A fresh thread has no running loop.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args, **kwargs).result()


def chromium_path() -> Path:
    """The chromium binary, or a failure (never a skip) saying how to install it."""
    for candidate in CHROMIUM_PATHS:
        if candidate.is_file():
            return candidate
    raise AssertionError(
        "Debian chromium not found at "
        + " or ".join(str(p) for p in CHROMIUM_PATHS)
        + ": run `apt-get install chromium` (.ci/run installs it)"
    )


@dataclass
class PageVisit:
    """A page opened in the browser and the problems seen while loading and using it."""

    page: Page
    problems: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def screenshot(self, directory: Path, name: str) -> Path:
        """Save a full-page PNG as `directory/<name>.png` and return its path."""
        directory.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        path = directory / f"{safe}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.page.close()


def open_page(browser: Browser, path: Path, *, width: int = 1280, height: int = 900) -> PageVisit:
    """Open `path` as a `file://` URL in a fresh page and record its problems.

    Any JavaScript dialog (`alert(...)`) is recorded in `dialogs` and dismissed: an injected
    script that runs shows up there.
    """
    page = browser.new_page(viewport={"width": width, "height": height})
    visit = PageVisit(page)

    def on_console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            visit.problems.append(f"console {message.type}: {message.text}")

    def on_request(request: Request) -> None:
        if not request.url.startswith(LOCAL_SCHEMES):
            visit.problems.append(f"network request: {request.url}")

    def on_failed(request: Request) -> None:
        visit.problems.append(f"request failed: {request.url} ({request.failure})")

    def on_dialog(dialog: Dialog) -> None:
        visit.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("console", on_console)
    page.on("pageerror", lambda error: visit.problems.append(f"page error: {error}"))
    page.on("request", on_request)
    page.on("requestfailed", on_failed)
    page.on("dialog", on_dialog)
    response = page.goto(path.resolve().as_uri(), wait_until="load")
    if response is not None and not response.ok:
        visit.problems.append(f"page load: status {response.status}")
    return visit
