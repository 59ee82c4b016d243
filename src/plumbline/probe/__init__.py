"""The probe: the same prompts, many times, against one or more models (`plumbline probe`).

Collection only; `reliability` analyses the journal it writes, as `compare` analyses what
`agent` collects.

- `settings`: the prompts, `ProbeSettings`, the shuffled plan of (model, prompt, trial) keys
- `caller`: `InspectCaller`, one trial through Inspect AI's model API (retries off unless
  allowed, an exact timeout per attempt); `direct_call` and `answers`, its fast path to an
  `openai-api` provider
- `trials`: a bounded pool of async workers running trial keys
- `shards`: worker processes sharing a probe's calls (`ProbeProcesses`)
- `journal`: the group-committed JSONL journal (durable before counted)
- `resume`: what a journal already holds under this run's generation configuration
- `runner`: `run_probe`, one writer per journal, resumable
- `errors`: failed calls classified by exception type and HTTP status; secret redaction
"""

from plumbline.probe.errors import Classification, classify_exception, redact

__all__ = ["Classification", "classify_exception", "redact"]
