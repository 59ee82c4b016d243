"""The environment a sandboxed process sees: built from an allow-list, never inherited."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

#: Parent variables that may pass through (locale and time zone only).
PASS_THROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")

#: Names that look like credentials are refused even when a caller asks for them explicitly.
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|SESSION|COOKIE|PRIVATE|CERT", re.IGNORECASE
)

BASE = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}


def sandbox_environment(
    fixed: Mapping[str, str], parent: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Return the complete environment for a sandboxed process.

    It is ``BASE``, then the ``PASS_THROUGH`` variables of ``parent`` (default ``os.environ``),
    then ``fixed``. Nothing else from the parent reaches the sandbox, so API keys and tokens in
    the caller's environment cannot leak whatever they are called.

    Raises:
        ValueError: if ``fixed`` names a variable that looks like a credential.
    """
    source = os.environ if parent is None else parent
    environment = dict(BASE)
    environment.update({name: source[name] for name in PASS_THROUGH if name in source})
    for name, value in fixed.items():
        if SECRET_NAME.search(name):
            raise ValueError(
                f"refusing to pass {name!r} into the sandbox: it looks like a credential"
            )
        environment[name] = value
    return environment
