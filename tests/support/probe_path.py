"""Run one probe through a chosen call path in a fresh interpreter, as `plumbline probe` runs.

    python -m tests.support.probe_path OUT MODEL TRIALS DIRECT LEAN PATH

The model is asked one prompt TRIALS times at concurrency 1 (timeout 1 s); the journal goes to
OUT; PATH is the call path the caller must take (`TrialRecord.call_path`: prepared_request,
inspect_provider, model_generate). LOCAL_BASE_URL, LOCAL_API_KEY and PLUMBLINE_COMPAT come from
the environment. The identity test of the call
paths runs each path here so that nothing an earlier test left in its process reaches the
comparison (an `eval_set` leaves its generate config behind: `probe.caller.outside_any_eval`
keeps a probe's calls from it, tested on its own in `test_direct_call.py`).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from plumbline.probe.caller import InspectCaller
from plumbline.probe.runner import run_probe
from plumbline.probe.settings import ProbeSettings, Prompt

PROMPT = Prompt("p", "Explain what a circuit breaker does.")


def main(argv: list[str]) -> int:
    out, model, trials, direct, lean, path = argv
    settings = ProbeSettings(
        models=(model,), prompts=(PROMPT,), trials=int(trials), concurrency=1, timeout=1.0
    )
    caller = InspectCaller(settings, direct=direct == "1", lean=lean == "1")
    taken = caller.call_path(model)
    if taken != path:
        print(f"path not taken: asked {path}, got {taken}", file=sys.stderr)
        return 3
    summary = asyncio.run(run_probe(settings, Path(out), caller=caller))
    return 0 if summary.completed == int(trials) else 4


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
