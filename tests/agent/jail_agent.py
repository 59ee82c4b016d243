"""An agent that tests its trial's walls from inside, run as a real process. `JAIL_ACTION`:

- `probe`: report as one JSON object on stdout what the network lets it reach: a direct TCP
  connection to `JAIL_HOST_PORT` on 127.0.0.1 and to `JAIL_OUTSIDE` (host:port), the host
  abstract Unix socket `JAIL_ABSTRACT`, what `/proc/net/tcp`, `/proc/net/tcp6` and
  `/proc/net/unix` show, and an HTTP request to the bridged model server on `JAIL_BRIDGE_PORT`;
  also what `/dev/shm` holds and whether a file larger than the disk limit fits there.
- `forkbomb`: every process forks until the kernel refuses, children included.
- `membomb`: allocate and touch 16 MiB blocks until stopped.
- `cpu`: spin until stopped.
- `diskfill`: write one file in the workspace until stopped.
- `diskspread`: write 1 MiB files in the workspace and HOME in turn until stopped.
- anything else: exit 0 at once.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import sys
import time
from pathlib import Path


def connects(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=3):
            return True
    except OSError:
        return False


def abstract_connects(name: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(3)
        try:
            client.connect("\0" + name)
            return True
        except OSError:
            return False


def read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as error:
        return f"unreadable: {error}"


def bridged(port: int) -> dict[str, object]:
    """A chat completion through the bridged port: its status and the model's answer."""
    body = json.dumps(
        {"model": "scripted", "stream": False, "messages": [{"role": "user", "content": "hi"}]}
    )
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request(
            "POST", "/v1/chat/completions", body, {"content-type": "application/json"}
        )
        response = connection.getresponse()
        return {"status": response.status, "body": json.loads(response.read())}
    except (OSError, ValueError) as error:
        return {"status": None, "error": str(error)}


def fits(path: str, size: int) -> bool:
    """Whether `size` bytes can be written to `path`."""
    try:
        with open(path, "wb") as handle:
            for _ in range(size // (1 << 20)):
                handle.write(b"\1" * (1 << 20))
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def probe() -> None:
    outside_host, _, outside_port = os.environ["JAIL_OUTSIDE"].rpartition(":")
    bridge = os.environ.get("JAIL_BRIDGE_PORT")
    too_big = int(os.environ.get("JAIL_TOO_BIG", "0"))
    report = {
        "host_port": connects("127.0.0.1", int(os.environ["JAIL_HOST_PORT"])),
        "outside": connects(outside_host, int(outside_port)),
        "abstract": abstract_connects(os.environ["JAIL_ABSTRACT"]),
        "proc_net_tcp": read("/proc/net/tcp") + read("/proc/net/tcp6"),
        "proc_net_unix": read("/proc/net/unix"),
        "bridged": bridged(int(bridge)) if bridge else None,
        "shm": sorted(os.listdir("/dev/shm")),
        "shm_fits": fits("/dev/shm/big", too_big) if too_big else None,
        "tmp_fits": fits("/tmp/big", too_big) if too_big else None,
    }
    print(json.dumps(report))


def forkbomb() -> None:
    while True:
        try:
            os.fork()
        except OSError:
            os._exit(1)


def membomb() -> None:
    blocks = []
    while True:
        blocks.append(b"\1" * (16 << 20))


def diskfill() -> None:
    """Write one file in the workspace, 1 MiB at a time, until stopped."""
    with open("fill.bin", "wb") as handle:
        while True:
            handle.write(b"\1" * (1 << 20))
            handle.flush()


def diskspread() -> None:
    """Write 1 MiB files, in turn in the workspace and in HOME, until stopped (no file is big)."""
    places = [Path("."), Path(os.environ["HOME"])]
    for number in range(1_000_000):
        (places[number % 2] / f"part-{number}.bin").write_bytes(b"\1" * (1 << 20))
        time.sleep(0.01)


def spin() -> None:
    while True:
        pass


def main() -> int:
    action = os.environ.get("JAIL_ACTION", "")
    actions = {
        "probe": probe,
        "forkbomb": forkbomb,
        "membomb": membomb,
        "cpu": spin,
        "diskfill": diskfill,
        "diskspread": diskspread,
    }
    if action in actions:
        actions[action]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
