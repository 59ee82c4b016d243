"""Ray's private names plumbline uses: re-reading the authentication settings once imported.

Ray reads `RAY_AUTH_MODE` and its token once, when it first reads its configuration; the
cluster connection (`cluster.connect`) sets them and then makes an already imported Ray read
them again through its private `_raylet` module. When `ADAPTER` is not fast, that refresh is
skipped: a Ray imported before the settings were made keeps the ones it read (the public
path: set them before Ray is imported, as `plumbline` does when it starts a cluster itself).
"""

from __future__ import annotations

import importlib
from typing import Any

from plumbline.compat import Adapter, CheckedRange

ADAPTER = Adapter(
    name="ray",
    distribution="ray",
    checked=CheckedRange("2.60.0", "3"),
    names=(
        "ray._raylet:Config.initialize",
        "ray._raylet:AuthenticationTokenLoader.instance",
    ),
)


def refresh_auth_settings() -> bool:
    """Make an imported Ray read its authentication settings again; False on the public path."""
    if not ADAPTER.fast:
        return False
    raylet: Any = importlib.import_module("ray._raylet")
    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()
    return True


__all__ = ["ADAPTER", "refresh_auth_settings"]
