"""Writers of the results store's concurrency tests, run in processes of their own.

`write_many` stores `count` distinct results (a leaderboard renamed per worker and index);
`main` (`python -m tests.support.store_writers URL FILE`) stores distinct results until it is
killed, printing each id as it is committed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.support.store_results import renamed

from plumbline.results.stored import read_result
from plumbline.store.store import Store


def write_many(url: str, worker: int, count: int, document: dict[str, Any]) -> list[int]:
    ids = []
    with Store.open(url) as store:
        for index in range(count):
            result = read_result(renamed(document, f"writer-{worker}/result-{index}"))
            added = store.add(result, labels={"worker": str(worker), "index": str(index)})
            assert added.created
            ids.append(added.id)
    return ids


def write_same(url: str, document: dict[str, Any]) -> tuple[int, bool]:
    with Store.open(url) as store:
        added = store.add(read_result(document), labels={"same": "yes"})
    return added.id, added.created


def main() -> None:
    url, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    with Store.open(url) as store:
        index = 0
        while True:
            result = read_result(renamed(document, f"killed/result-{index}"))
            added = store.add(result, labels={"run": str(index)})
            print(added.id, flush=True)
            index += 1


if __name__ == "__main__":
    main()
