"""jsii's private names plumbline uses: the CDK worker's early stop of the jsii runtime.

The jsii runtime relays what an app's JavaScript side prints (aws-cdk-lib's validation report)
through a reader thread of its own; the sandbox worker ends with `os._exit`, which would drop
what that thread had not yet written, so the worker stops the runtime first
(`compat/jsii_runtime.py`, which runs inside the sandbox). jsii offers no public way to stop
its runtime: the stop goes through its kernel's private process attribute.

When `ADAPTER` is not fast, the worker is not told where the stop is (`worker_environment`
returns nothing): a job that used jsii then ends with a normal interpreter exit, whose exit
handlers include the stop jsii registers itself (slower than `os._exit`, same log): the public
path.
"""

from __future__ import annotations

from pathlib import Path

from plumbline.compat import Adapter, CheckedRange

#: The worker-side stop, a standard-library-only file (bound into the sandbox).
RUNTIME_SCRIPT = Path(__file__).with_name("jsii_runtime.py")
#: Where the sandbox sees it.
RUNTIME_SCRIPT_IN_SANDBOX = "/opt/plumbline/compat/jsii_runtime.py"
#: The worker's environment variable naming the stop's file (absent: no early stop).
ENVIRONMENT = "PLUMBLINE_JSII_ADAPTER"

ADAPTER = Adapter(
    name="jsii",
    distribution="jsii",
    checked=CheckedRange("1.142.0", "2"),
    names=(
        "jsii._runtime:kernel.provider",
        "jsii._kernel.providers.process:ProcessProvider._process",
        "jsii._kernel.providers.process:_NodeProcess.stop",
    ),
)


def worker_environment(script: str) -> dict[str, str]:
    """The worker's environment that enables the early stop (`script`: the path of
    `RUNTIME_SCRIPT` as the worker sees it); empty when the adapter is not fast."""
    return {ENVIRONMENT: script} if ADAPTER.fast else {}


__all__ = [
    "ADAPTER",
    "ENVIRONMENT",
    "RUNTIME_SCRIPT",
    "RUNTIME_SCRIPT_IN_SANDBOX",
    "worker_environment",
]
