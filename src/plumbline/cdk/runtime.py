"""The CDK runtime a sandboxed worker needs: a shared jsii package cache and its environment.

The jsii runtime extracts each library tarball (aws-cdk-lib is about 180 MB unpacked) into a
package cache the first time it is loaded. The cache is filled once per library version by a
trusted process on the host (no model code involved), then bound read-only into every
sandbox, so a sample never re-extracts aws-cdk-lib. The runtime touches one marker file per
package when it uses the cache; each sandbox gets private writable copies of those markers.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from plumbline.compat import jsii as jsii_compat
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

#: The Node.js preload that restores aws-cdk-lib's built-in validator from a snapshot.
VALIDATOR_SCRIPT = Path(__file__).with_name("validator_snapshot.js")
VALIDATOR_SCRIPT_IN_SANDBOX = "/opt/plumbline/validator_snapshot.js"
VALIDATOR_SNAPSHOT_IN_SANDBOX = "/opt/plumbline/cfn-validate-snapshot"
#: Where aws-cdk-lib keeps its validator's rules and WebAssembly engine.
_VALIDATOR_PARTS = (
    "core/lib/validation/cloudformation-validate-plugin.js",
    "core/lib/validation/rules",
    "node_modules/@aws/cloudformation-validate/bindings_wasm_bg.wasm",
)


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


def _cdk_lib_directory(cache: Path) -> Path | None:
    """The unpacked aws-cdk-lib of the installed version in the jsii package cache."""
    version = library_versions()["aws-cdk-lib"]
    found = sorted(cache.glob(f"aws-cdk-lib/{version}/*/{MARKER}"))
    return found[0].parent if found else None


def _snapshot_key(library: Path) -> str:
    """What the validator's engine state depends on: its code, rules, Node.js and the script."""
    node = subprocess.run(
        ["node", "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout.strip()
    parts = [str(library), node, hashlib.sha256(VALIDATOR_SCRIPT.read_bytes()).hexdigest()]
    rules = library / _VALIDATOR_PARTS[1]
    for path in sorted(rules.glob("*")) if rules.is_dir() else []:
        parts.append(f"{path.name}:{hashlib.sha256(path.read_bytes()).hexdigest()}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def ensure_validator_snapshot(cache: Path | None = None) -> Path | None:
    """Build, once, the snapshot of aws-cdk-lib's built-in validator (see validator_snapshot.js).

    A trusted host process builds the validator's engine exactly as a synthesis does, with no
    model code involved, and saves its WebAssembly memory; sandboxed runtimes restore it
    instead of spending about 3.4 CPU seconds each building it. None when this aws-cdk-lib has
    no such validator or the snapshot cannot be made (runtimes then build the engine).
    """
    cache = cache or default_cache_dir()
    library = _cdk_lib_directory(cache)
    if library is None or shutil.which("node") is None:
        return None
    if not all((library / part).exists() for part in _VALIDATOR_PARTS):
        return None
    target = cache.parent / "cfn-validate-snapshot" / _snapshot_key(library)
    if (target / "snapshot.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".plumbline-fill.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "snapshot.json").is_file():
            _write_validator_snapshot(library, target)
    return target if (target / "snapshot.json").is_file() else None


def _write_validator_snapshot(library: Path, target: Path) -> None:
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
    building.chmod(0o755)  # readable like the jsii package cache next to it
    plugin = library / _VALIDATOR_PARTS[0]
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PLUMBLINE_CFN_VALIDATE_SNAPSHOT": str(building),
        "PLUMBLINE_CFN_VALIDATE_SNAPSHOT_WRITE": "1",
        **silence_node_warnings(),
    }
    script = f"require({json.dumps(str(plugin))}).CloudFormationValidatePlugin._singletonInstance()"
    try:
        completed = subprocess.run(
            ["node", "--require", str(VALIDATOR_SCRIPT), "-e", script],
            env=environment,
            capture_output=True,
            timeout=600,
            check=False,
        )
        if completed.returncode == 0 and (building / "snapshot.json").is_file():
            building.rename(target)
    finally:
        shutil.rmtree(building, ignore_errors=True)


def node_options(validator_script: str | None = None) -> str:
    """NODE_OPTIONS of the jsii runtime: its heap size and, if any, the validator preload."""
    options = f"--max-old-space-size={NODE_HEAP_MB}"
    if validator_script is not None:
        options += f" --require {json.dumps(validator_script)}"
    return options


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


def cdk_environment(
    *,
    cache_path: str,
    outdir: str,
    home: str,
    tmp: str,
    validator: tuple[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a synthesizing process, as `cdk synth` would set it (no secrets).

    ``validator``: (preload script, snapshot directory) as the process sees them, to restore
    aws-cdk-lib's built-in validator instead of building it (see `ensure_validator_snapshot`).
    """
    restore = {} if validator is None else {"PLUMBLINE_CFN_VALIDATE_SNAPSHOT": validator[1]}
    return {
        "CDK_DEFAULT_ACCOUNT": DUMMY_ACCOUNT,
        "CDK_DEFAULT_REGION": DUMMY_REGION,
        "CDK_OUTDIR": outdir,
        "CDK_CONTEXT_JSON": json.dumps(CLI_CONTEXT),
        "HOME": home,
        "TMPDIR": tmp,
        "JSII_RUNTIME_PACKAGE_CACHE_ROOT": cache_path,
        "NODE_OPTIONS": node_options(None if validator is None else validator[0]),
        "PYTHONUNBUFFERED": "1",
        **restore,
        **silence_node_warnings(),
    }


def sandbox_layout(cache: Path, validator_snapshot: Path | None = None) -> SandboxLayout:
    """Read-only jsii cache at JSII_CACHE_IN_SANDBOX with private copies of its markers, and
    the validator's preload script and snapshot (read-only) when there is one."""
    markers = []
    # <package>/<version>/<hash>/MARKER, or @scope/<package>/<version>/<hash>/MARKER
    found = [*cache.glob(f"*/*/*/{MARKER}"), *cache.glob(f"@*/*/*/*/{MARKER}")]
    for marker in sorted(found):
        inside = f"{JSII_CACHE_IN_SANDBOX}/{marker.relative_to(cache).as_posix()}"
        markers.append((marker.read_bytes(), inside))
    read_only_at = [
        (cache, JSII_CACHE_IN_SANDBOX),
        (jsii_compat.RUNTIME_SCRIPT, jsii_compat.RUNTIME_SCRIPT_IN_SANDBOX),
    ]
    if validator_snapshot is not None:
        read_only_at += [
            (VALIDATOR_SCRIPT, VALIDATOR_SCRIPT_IN_SANDBOX),
            (validator_snapshot, VALIDATOR_SNAPSHOT_IN_SANDBOX),
        ]
    return SandboxLayout(read_only_at=tuple(read_only_at), writable_copies=tuple(markers))
