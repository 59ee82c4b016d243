"""The demo's coding agent: a small, real agent process that asks a model for edits.

Run by `plumbline agent run` inside the trial's sandbox (`--profile claude-code`), in the task's
workspace:

    python3 demo_agent.py PROMPT

It sends the prompt, the workspace's code files and any `HINT.md` in one Anthropic Messages call
to `$ANTHROPIC_BASE_URL` (in a metered trial: the harness's proxy, the only way out of the
trial), applies the edits the model answers with (a JSON object `{"edits": [{"file", "old",
"new"}]}` in its text), and prints its session the way `claude -p --output-format json` does,
with the usage the model's response reported. Standard library only: it runs on the sandbox's
`python3`.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path


def files_message(prompt: str) -> str:
    """The prompt and the workspace's files (code, not tests; `HINT.md` when there is one)."""
    names = sorted(p.name for p in Path(".").glob("*.py") if not p.name.startswith("test_"))
    names += ["HINT.md"] if Path("HINT.md").is_file() else []
    blocks = [f'<file name="{name}">\n{Path(name).read_text()}\n</file>' for name in names]
    return "\n\n".join([prompt, *blocks])


def ask(message: str) -> dict[str, object]:
    """One Messages call (not streamed) to the base URL the agent was given."""
    body = {
        "model": os.environ.get("ANTHROPIC_MODEL", "scripted/coder"),
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": message}],
    }
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "anthropic-version": "2023-06-01",
            "x-api-key": os.environ.get("ANTHROPIC_API_KEY", "none"),
        },
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, object] = json.load(response)
    return answer


def apply(edits: list[dict[str, str]]) -> int:
    """Apply the edits to files of this directory; the number applied."""
    applied = 0
    for edit in edits:
        target = Path(edit["file"])
        if target.name != edit["file"] or not target.is_file():
            continue
        text = target.read_text()
        if edit["old"] in text:
            target.write_text(text.replace(edit["old"], edit["new"], 1))
            applied += 1
    return applied


def main() -> None:
    started = time.monotonic()
    answer = ask(files_message(sys.argv[1]))
    content = answer.get("content")
    text = content[0]["text"] if isinstance(content, list) and content else "{}"
    applied = apply(json.loads(text).get("edits", []))
    reported = answer.get("usage")
    usage: dict[str, object] = reported if isinstance(reported, dict) else {}
    model = str(answer.get("model", "unknown"))
    print(
        json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "duration_ms": round((time.monotonic() - started) * 1000),
                "num_turns": 1,
                "result": f"Applied {applied} edit(s).",
                "session_id": f"demo-{os.getpid()}",
                "usage": usage,
                "modelUsage": {
                    model: {
                        "inputTokens": usage.get("input_tokens"),
                        "outputTokens": usage.get("output_tokens"),
                    }
                },
            }
        )
    )


if __name__ == "__main__":
    main()
