"""Grep's regex engine, run in a child process that can be killed.

Python's ``re`` backtracks: ``(a+)+$`` on a line of many ``a`` and a ``b`` runs for
hours, and a thread cannot be stopped. So Grep hands every file to this worker
(``python -I -S _grepworker.py``: stdlib only, no site, no skilldeck import) and waits
for each answer no longer than its budget; when the budget ends, the worker is
killed and Grep reports partial results naming the limit.

Protocol on stdin/stdout, each message a 4-byte big-endian length then the bytes:

* parent → worker: a JSON header ``{"pattern", "ignore_case", "multiline",
  "want_lines"}``; the worker answers ``{"ok": true}`` or ``{"error": "…"}``;
* then per file: its raw bytes; the worker answers a JSON list of matched
  0-based line indexes (``[]``: no match; without ``want_lines`` at most one).

:func:`split_lines` is shared with the parent, which renders from the same lines.
"""

from __future__ import annotations

import bisect
import json
import re
import struct
import sys
from typing import BinaryIO

_LEN = struct.Struct(">I")


def split_lines(text: str) -> list[str]:
    """Lines as Grep numbers them: ``\\n``-separated, a final empty line dropped,
    a trailing ``\\r`` removed."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _prefilter(rx: re.Pattern[str]) -> re.Pattern[str] | None:
    """A whole-text version of a per-line pattern, to skip non-matching files fast
    (only when a whole-text miss provably means every line misses)."""
    if any(tok in rx.pattern for tok in ("(?", r"\A", r"\Z", r"\z")):
        return None
    return re.compile(rx.pattern, rx.flags | re.MULTILINE)


def match_lines(
    text: str, rx: re.Pattern[str], pre: re.Pattern[str] | None, *, multiline: bool, want: bool
) -> list[int]:
    """0-based indexes of the lines of ``text`` that ``rx`` matches."""
    if multiline:
        return _multiline(text, rx, want=want)
    if pre is not None and not pre.search(text):
        return []
    hits: list[int] = []
    for i, line in enumerate(split_lines(text)):
        if rx.search(line):
            hits.append(i)
            if not want:
                break
    return hits


def _multiline(text: str, rx: re.Pattern[str], *, want: bool) -> list[int]:
    if not want:
        return [0] if rx.search(text) else []
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    hit: set[int] = set()
    for m in rx.finditer(text):
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1
        hit.update(range(first, last + 1))
    count = len(multiline_lines(text))
    return sorted(i for i in hit if i < count)


def multiline_lines(text: str) -> list[str]:
    """The lines a multiline search renders (a lone empty text is one empty line)."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def read_message(stream: BinaryIO) -> bytes | None:
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (size,) = _LEN.unpack(head)
    data = stream.read(size)
    return data if len(data) == size else None


def frame(data: bytes) -> bytes:
    return _LEN.pack(len(data)) + data


def _serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    header = read_message(stdin)
    if header is None:
        return
    spec = json.loads(header)
    flags = re.IGNORECASE if spec.get("ignore_case") else 0
    multiline = bool(spec.get("multiline"))
    flags |= re.DOTALL | re.MULTILINE if multiline else 0
    try:
        rx = re.compile(spec["pattern"], flags)
    except (re.error, OverflowError, RecursionError) as e:
        stdout.write(frame(json.dumps({"error": str(e)}).encode()))
        stdout.flush()
        return
    stdout.write(frame(b'{"ok": true}'))
    stdout.flush()
    pre = None if multiline else _prefilter(rx)
    want = bool(spec.get("want_lines"))
    while (data := read_message(stdin)) is not None:
        text = data.decode("utf-8", errors="replace")
        hits = match_lines(text, rx, pre, multiline=multiline, want=want)
        stdout.write(frame(json.dumps(hits).encode()))
        stdout.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
