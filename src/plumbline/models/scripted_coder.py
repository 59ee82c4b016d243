"""`scripted/coder`: an offline, SCRIPTED model behind Anthropic's Messages API, for the demo's
coding agent.

It is not a language model. It serves `POST /v1/messages` on loopback (not streamed), reads the
files an agent sends in its message (each as `<file name="NAME">` ... `</file>`), and answers
with edits as a JSON object in its text reply:

    {"edits": [{"file": "calc.py", "old": "return a - b", "new": "return a + b"}]}

- With a hint in the request (a line "replace `OLD` with `NEW` in `FILE`", as the example
  suite's `HINT.md` gives), it answers exactly those edits.
- Without one it fixes only what it recognises on sight (`OBVIOUS_FIXES`: a sum that
  subtracts); anything else gets a harmless comment, so that task stays broken.

Every reply reports token usage the way the Messages API does, `characters / 4` of the request
body and of the reply text (rounded up), so the harness's metering proxy has real usage to count
and the agent real usage to report. The model name it answers with is `scripted/coder`.

    with ScriptedCoder() as coder:
        print(coder.base_url)   # http://127.0.0.1:PORT (ANTHROPIC_BASE_URL for an agent)
"""

from __future__ import annotations

import json
import math
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

MODEL = "scripted/coder"
#: A hint line the model follows: replace `OLD` with `NEW` in `FILE`.
HINT = re.compile(r"replace `([^`]+)` with `([^`]+)` in `([^`]+)`")
#: Bugs the model fixes without a hint: (what it sees, what it writes).
OBVIOUS_FIXES = (("return a - b", "return a + b"),)
#: A file the agent sends, inside its message.
FILE = re.compile(r'<file name="([^"]+)">\n(.*?)\n</file>', re.DOTALL)
#: The largest request body read (an agent sends a few small files).
MAX_BODY = 1024 * 1024


def edits_for(text: str, files: dict[str, str]) -> list[dict[str, str]]:
    """The edits the model answers for a request's `text` (its prompt and files) and `files`
    (name to content): the hint's when the text has one, else the obvious fixes it sees, else
    a comment in the first file (changing nothing that runs)."""
    hinted = [{"file": f, "old": old, "new": new} for old, new, f in HINT.findall(text)]
    if hinted:
        return hinted
    seen = [
        {"file": name, "old": old, "new": new}
        for name, content in sorted(files.items())
        for old, new in OBVIOUS_FIXES
        if old in content
    ]
    if seen or not files:
        return seen
    first = min(files)
    return [{"file": first, "old": files[first], "new": files[first] + "\n# Looked here.\n"}]


def tokens(text: str) -> int:
    """The usage the model reports for a text: characters / 4, rounded up."""
    return math.ceil(len(text) / 4)


def message_text(body: Any) -> str:
    """The text of a request's messages (string contents and text blocks), in order."""
    messages = body.get("messages") if isinstance(body, dict) else None
    parts: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [{"text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "\n".join(parts)


def reply(body: Any, raw: str) -> dict[str, Any]:
    """The Messages API response to a request body (`raw` is its text, for the usage)."""
    asked = message_text(body)
    text = json.dumps({"edits": edits_for(asked, dict(FILE.findall(asked)))})
    return {
        "id": f"msg_scripted_{tokens(raw)}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": tokens(raw), "output_tokens": tokens(text)},
    }


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if self.path.split("?")[0] != "/v1/messages" or not 0 < length <= MAX_BODY:
            self._send(HTTPStatus.NOT_FOUND, {"type": "error", "error": {"type": "not_found"}})
            return
        raw = self.rfile.read(length).decode("utf-8", errors="replace")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            error = {"type": "invalid_request_error", "message": "the body is not JSON"}
            self._send(HTTPStatus.BAD_REQUEST, {"type": "error", "error": error})
            return
        self._send(HTTPStatus.OK, reply(body, raw))

    def _send(self, status: HTTPStatus, document: dict[str, Any]) -> None:
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the harness's proxy records every call."""


class ScriptedCoder:
    """The scripted model served on 127.0.0.1 (a free port) while the context is open."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def host(self) -> str:
        """HOST:PORT, for `--allow-host`."""
        return self.base_url.removeprefix("http://")

    def __enter__(self) -> ScriptedCoder:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
