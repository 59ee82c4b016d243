"""Read named members of a local `.eval` log (a zip archive) without listing every member.

An `.eval` log holds one member per sample and epoch; the leaderboard needs two
(`header.json`, `summaries.json`). `zipfile.ZipFile` builds a `ZipInfo` for every member before
the first read (thousands per log); this walks the central directory for the names asked for
only, then reads and checks (CRC-32) just those members. Stored, deflate and zstd (Inspect's
default) members are read. Anything else (encryption, ZIP64, another compression, a damaged
archive) raises `Declined`: the caller then reads the log through Inspect, which reports what
is wrong in its own words.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Collection
from pathlib import Path
from typing import BinaryIO

_EOCD = b"PK\x05\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF
_STORED, _DEFLATED, _ZSTD = 0, 8, 93


class Declined(Exception):
    """The fast reader cannot vouch for this log: read it through Inspect instead."""


def _central_directory(handle: BinaryIO, size: int) -> bytes:
    """The archive's central directory (the end record is searched in the file's tail)."""
    tail_size = min(size, _EOCD_SIZE + _MAX_COMMENT)
    handle.seek(size - tail_size)
    tail = handle.read(tail_size)
    at = tail.rfind(_EOCD)
    if at < 0 or at + _EOCD_SIZE > len(tail):
        raise Declined("no zip end record")
    (disk, cd_disk, _, entries, cd_size, cd_offset, _) = struct.unpack_from(
        "<HHHHIIH", tail, at + 4
    )
    if disk or cd_disk or entries == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF:
        raise Declined("multi-disk or ZIP64 archive")
    if cd_offset + cd_size > size - tail_size + at:
        raise Declined("central directory out of bounds")
    handle.seek(cd_offset)
    directory = handle.read(cd_size)
    if len(directory) != cd_size:
        raise Declined("short central directory")
    return directory


def _top_level_entries(directory: bytes) -> dict[bytes, tuple[int, ...]]:
    """(method, flags, crc, compressed size, size, local header offset) of the last entry of
    each name outside any folder (the one `zipfile` reads when a name repeats)."""
    found: dict[bytes, tuple[int, ...]] = {}
    offset, end = 0, len(directory)
    unpack = struct.unpack_from
    while offset < end:
        if offset + 46 > end or directory[offset : offset + 4] != _CENTRAL:
            raise Declined("damaged central directory")
        name_length, extra_length, comment_length = unpack("<HHH", directory, offset + 28)
        name = directory[offset + 46 : offset + 46 + name_length]
        if b"/" not in name:
            flags, method = unpack("<HH", directory, offset + 8)
            crc, compressed, size = unpack("<III", directory, offset + 16)
            (local,) = unpack("<I", directory, offset + 42)
            found[name] = (method, flags, crc, compressed, size, local)
        offset += 46 + name_length + extra_length + comment_length
    return found


def _decompress(method: int, data: bytes, size: int) -> bytes:
    if method == _STORED:
        return data
    if method == _DEFLATED:
        return zlib.decompress(data, -15, max(size, 1))
    if method == _ZSTD:
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    raise Declined(f"compression method {method}")


def _read_entry(handle: BinaryIO, entry: tuple[int, ...]) -> bytes:
    method, flags, crc, compressed, size, local = entry
    if flags & 0x1 or compressed == 0xFFFFFFFF or size == 0xFFFFFFFF:
        raise Declined("encrypted or ZIP64 member")
    handle.seek(local)
    header = handle.read(30)
    if len(header) != 30 or header[:4] != _LOCAL:
        raise Declined("damaged local header")
    name_length, extra_length = struct.unpack_from("<HH", header, 26)
    handle.seek(local + 30 + name_length + extra_length)
    data = handle.read(compressed)
    if len(data) != compressed:
        raise Declined("truncated member")
    try:
        content = _decompress(method, data, size)
    except Declined:
        raise
    except Exception as error:  # zlib.error, zstandard.ZstdError: a damaged member
        raise Declined(f"cannot decompress: {error}") from error
    if len(content) != size or zlib.crc32(content) != crc:
        raise Declined("member size or CRC-32 mismatch")
    return content


#: The top-level entries of the archive read last, by (path, size, modification time): a
#: log's header and its summaries are read one after the other.
_last: tuple[tuple[str, int, int], dict[bytes, tuple[int, ...]]] | None = None


def read_members(path: str | Path, names: Collection[str]) -> dict[str, bytes]:
    """The content of each named member outside any folder (`header.json`, not
    `samples/...`) present in the archive; absent names are left out.

    Raises `Declined` when the archive cannot be read this way, `OSError` when the file cannot
    be opened.
    """
    global _last
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        if _last is not None and _last[0] == key:
            entries = _last[1]
        else:
            entries = _top_level_entries(_central_directory(handle, stat.st_size))
            _last = (key, entries)
        found = {name: entries.get(name.encode("utf-8")) for name in names}
        return {name: _read_entry(handle, entry) for name, entry in found.items() if entry}
