"""The jsii runtime's early stop, run inside the sandboxed CDK worker.

The sandbox worker (`plumbline.sandbox.worker`) runs by path with the standard library only,
so this file does too; the host binds it into the sandbox and names it in the worker's
environment (``PLUMBLINE_JSII_ADAPTER``) only when `compat.jsii.ADAPTER` found the private
names below in the installed jsii (see `compat.jsii`).
"""

from __future__ import annotations


def stop_runtime() -> None:
    """Stop the jsii runtime (Node.js) this process started, so that the output its reader
    thread still relays reaches the log before the worker's `os._exit`. jsii keeps the process
    in a private attribute of its kernel's provider; its `stop` closes Node's input, waits for
    it and joins the reader thread."""
    from jsii._runtime import kernel

    kernel.provider._process.stop()  # type: ignore[attr-defined]
