"""The CDK runtime a sandboxed worker needs: a shared jsii package cache and its environment.

The jsii runtime extracts each library tarball (aws-cdk-lib is about 180 MB unpacked) into a
package cache the first time it is loaded. The cache is filled once per library version by a
trusted process on the host (no model code involved), then bound read-only into every
sandbox, so a sample never re-extracts aws-cdk-lib. The runtime touches one marker file per
package when it uses the cache; each sandbox gets private writable copies of those markers.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from plumbline.sandbox import SandboxLayout

#: Documented dummy deployment target: no real account is ever contacted.
DUMMY_ACCOUNT = "123456789012"
DUMMY_REGION = "us-east-1"

#: Context the `cdk synth` CLI passes to every app (CDK_CONTEXT_JSON).
CLI_CONTEXT = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:version-reporting": True,
    "aws:cdk:bundling-stacks": ["**"],
}

JSII_CACHE_IN_SANDBOX = "/opt/jsii-package-cache"
MARKER = ".jsii-runtime-package-cache"
NODE_HEAP_MB = 1536


class RuntimeMissing(RuntimeError):
    """aws-cdk-lib, jsii or Node.js is not installed: an infrastructure problem."""


def default_cache_dir() -> Path:
    root = os.environ.get("PLUMBLINE_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    base = Path(root) if root else Path.home() / ".cache"
    if not os.environ.get("PLUMBLINE_CACHE_DIR"):
        base = base / "plumbline"
    return base / "jsii-package-cache"


def library_versions() -> dict[str, str]:
    """Installed versions of the CDK Python packages (raises RuntimeMissing if absent)."""
    versions = {}
    for package in ("aws-cdk-lib", "constructs", "jsii"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError as error:
            raise RuntimeMissing(
                f"{package} is not installed; install plumbline[cdk] (pip install 'plumbline[cdk]')"
            ) from error
    return versions


def _cache_is_filled(cache: Path, versions: dict[str, str]) -> bool:
    for package in ("aws-cdk-lib", "constructs"):
        directory = cache / package / versions[package]
        if not directory.is_dir() or not any(directory.glob(f"*/{MARKER}")):
            return False
    return True


def ensure_jsii_cache(cache: Path | None = None) -> Path:
    """Fill the jsii package cache for the installed library versions, once."""
    cache = cache or default_cache_dir()
    versions = library_versions()
    if _cache_is_filled(cache, versions):
        return cache
    cache.mkdir(parents=True, exist_ok=True)
    # Several processes (pytest-xdist workers, parallel evals) may start at once: one fills.
    with open(cache / ".plumbline-fill.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _cache_is_filled(cache, versions):
            _fill_cache(cache, versions)
    return cache


def _fill_cache(cache: Path, versions: dict[str, str]) -> None:
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cache),
        "JSII_RUNTIME_PACKAGE_CACHE_ROOT": str(cache),
        **silence_node_warnings(),
    }
    completed = subprocess.run(
        [sys.executable, "-I", "-c", "import aws_cdk"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if completed.returncode != 0 or not _cache_is_filled(cache, versions):
        raise RuntimeMissing(
            f"could not fill the jsii package cache in {cache}: "
            f"{completed.stderr.strip()[-800:] or 'no cache written'}"
        )


def silence_node_warnings() -> dict[str, str]:
    """jsii prints a banner for unsupported Node.js versions on every start; keep logs clean.

    Each variable holds the comma-separated Node.js major versions to stay quiet about.
    """
    majors = ",".join(str(major) for major in range(14, 40))
    return {
        f"JSII_SILENCE_WARNING_{name}": majors
        for name in (
            "DEPRECATED_NODE_VERSION",
            "END_OF_LIFE_NODE_VERSION",
            "KNOWN_BROKEN_NODE_VERSION",
            "UNTESTED_NODE_VERSION",
        )
    }


def cdk_environment(*, cache_path: str, outdir: str, home: str, tmp: str) -> dict[str, str]:
    """The environment of a synthesizing process, as `cdk synth` would set it (no secrets)."""
    return {
        "CDK_DEFAULT_ACCOUNT": DUMMY_ACCOUNT,
        "CDK_DEFAULT_REGION": DUMMY_REGION,
        "CDK_OUTDIR": outdir,
        "CDK_CONTEXT_JSON": json.dumps(CLI_CONTEXT),
        "HOME": home,
        "TMPDIR": tmp,
        "JSII_RUNTIME_PACKAGE_CACHE_ROOT": cache_path,
        "NODE_OPTIONS": f"--max-old-space-size={NODE_HEAP_MB}",
        "PYTHONUNBUFFERED": "1",
        **silence_node_warnings(),
    }


def sandbox_layout(cache: Path) -> SandboxLayout:
    """Read-only jsii cache at JSII_CACHE_IN_SANDBOX with private copies of its markers."""
    markers = []
    # <package>/<version>/<hash>/MARKER, or @scope/<package>/<version>/<hash>/MARKER
    found = [*cache.glob(f"*/*/*/{MARKER}"), *cache.glob(f"@*/*/*/*/{MARKER}")]
    for marker in sorted(found):
        inside = f"{JSII_CACHE_IN_SANDBOX}/{marker.relative_to(cache).as_posix()}"
        markers.append((marker.read_bytes(), inside))
    return SandboxLayout(
        read_only_at=((cache, JSII_CACHE_IN_SANDBOX),), writable_copies=tuple(markers)
    )
