"""A real PostgreSQL server for the tests: `initdb` and `pg_ctl` from Debian's `postgresql`
package, in a temporary directory, on 127.0.0.1 and a free port.

The server runs as the `postgres` user when the tests run as root (PostgreSQL refuses to run
as root), else as the current user. Authentication is `trust` on the loopback address only,
except for the roles `add_login` makes, which must give their password.
A machine without the binaries fails the tests that need them, with the package to install:
they are never skipped.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MISSING = (
    "PostgreSQL's server binaries (initdb, pg_ctl) are not installed: the results store's "
    "tests run a real PostgreSQL server. Install Debian's `postgresql` package (listed in "
    ".ci/debian-packages.txt): apt-get install -y postgresql"
)


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def server_binaries() -> Path:
    """The directory holding `initdb` and `pg_ctl` (the newest installed version)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[4]) if Path(path).parts[4].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).parent
    raise PostgresUnavailable(MISSING)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class PostgresServer:
    """A running server: connect as `postgres` to `url(database)`."""

    port: int
    root: Path

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server at once (`pg_ctl stop -m immediate`), as a crash or an
        administrator would: its clients' connections break."""
        subprocess.run(  # type: ignore[call-overload]
            [
                str(server_binaries() / "pg_ctl"),
                "-D",
                str(self.root / "data"),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
            check=False,
            capture_output=True,
            timeout=120,
            **_as_server_user(),
        )

    def add_login(self, user: str, password: str, database: str) -> str:
        """A role that must give `password` (scram-sha-256) from 127.0.0.1, owning a new
        `database`; its URL, without the password."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute("SET password_encryption = 'scram-sha-256'")
            connection.execute(f"CREATE ROLE \"{user}\" LOGIN PASSWORD '{password}'")
            connection.execute(f'CREATE DATABASE "{database}" OWNER "{user}"')
            hba = self.root / "data" / "pg_hba.conf"
            rule = f"host all {user} 127.0.0.1/32 scram-sha-256\n"
            hba.write_text(rule + hba.read_text())
            connection.execute("SELECT pg_reload_conf()")
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _as_server_user() -> dict[str, object]:
    """`subprocess.run` options that run a command as the server's user."""
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam("postgres")
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """Start a server for the duration of the block, then stop it and remove its files."""
    binaries = server_binaries()
    as_user = _as_server_user()
    root = Path(tempfile.mkdtemp(prefix="plumbline-pg-"))
    if as_user:
        os.chown(root, int(as_user["user"]), int(as_user["group"]))  # type: ignore[call-overload]
    data = root / "data"
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120, **as_user}
    try:
        subprocess.run(  # type: ignore[call-overload]
            [
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            **run,
        )
        port = _start(binaries, data, root, run)
        try:
            yield PostgresServer(port=port, root=root)
        finally:
            subprocess.run(  # type: ignore[call-overload]
                [str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                **{**run, "check": False},
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _start(binaries: Path, data: Path, root: Path, run: dict[str, object]) -> int:
    """Start the server on a free port (another free one if that port was taken meanwhile)."""
    last: subprocess.CalledProcessError | None = None
    for _ in range(3):
        port = _free_port()
        options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=60"
        try:
            subprocess.run(  # type: ignore[call-overload]
                [
                    str(binaries / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-l",
                    str(root / "server.log"),
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
                **run,
            )
            return port
        except subprocess.CalledProcessError as error:
            last = error
    log = (root / "server.log").read_text(errors="replace")[-2000:]
    raise RuntimeError(f"PostgreSQL did not start: {last and last.stderr}\n{log}")
