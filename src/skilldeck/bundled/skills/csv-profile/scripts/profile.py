#!/usr/bin/env python3
"""Profile a CSV/TSV/JSON/JSONL file; skill-script contract: JSON in (argv[1]), JSON out."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import statistics
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MISSING = {"", "na", "n/a", "null", "none", "nan", "nil"}
DISTINCT_CAP = 10_000
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_BOOL = {"true", "false", "yes", "no"}
# most specific first; a column's type is the first one every present value fits
_ORDER = ["boolean", "integer", "float", "date", "datetime", "string"]


def classify(value: Any) -> str:
    """The type of one present value (JSON values keep their own types)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    text = str(value).strip()
    if text.lower() in _BOOL:
        return "boolean"
    if _INT.match(text):
        return "integer"
    if _FLOAT.match(text):
        return "float"
    if _DATE.match(text):
        return "date"
    if _DATETIME.match(text):
        return "datetime"
    return "string"


def is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip().lower() in MISSING


class Column:
    def __init__(self, name: str) -> None:
        self.name = name
        self.missing = 0
        self.types: Counter[str] = Counter()
        self.values: Counter[str] = Counter()
        self.capped = False
        self.numbers: list[float] = []
        self.lengths: list[int] = []
        self.lowest: str | None = None
        self.highest: str | None = None

    def add(self, value: Any) -> None:
        if is_missing(value):
            self.missing += 1
            return
        kind = classify(value)
        self.types[kind] += 1
        key = json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else str(value)
        if key in self.values or len(self.values) < DISTINCT_CAP:
            self.values[key] += 1
        else:
            self.capped = True
        if kind in ("integer", "float") and not isinstance(value, bool):
            self.numbers.append(float(value))
        elif kind in ("date", "datetime", "string"):
            text = str(value)
            self.lengths.append(len(text))
            self.lowest = text if self.lowest is None else min(self.lowest, text)
            self.highest = text if self.highest is None else max(self.highest, text)

    def column_type(self) -> tuple[str, bool]:
        """(type, mixed): integer+float is float; anything else mixed is string."""
        present = set(self.types)
        if not present:
            return "empty", False
        if len(present) == 1:
            return present.pop(), False
        if present <= {"integer", "float"}:
            return "float", False
        if present <= {"date", "datetime"}:
            return "datetime", False
        return "string", True

    def profile(self, rows: int, top: int) -> dict[str, Any]:
        kind, mixed = self.column_type()
        out: dict[str, Any] = {
            "name": self.name,
            "type": kind,
            "missing": self.missing,
            "missing_pct": round(100.0 * self.missing / rows, 2) if rows else 0.0,
            "distinct": len(self.values),
            "top": [[value, count] for value, count in self.values.most_common(top)],
        }
        if self.capped:
            out["distinct_capped"] = True
        if mixed:
            out["mixed_types"] = dict(self.types)
        if kind in ("integer", "float") and self.numbers:
            out.update(_numeric(self.numbers, integer=kind == "integer"))
        elif self.lengths:
            out["min"], out["max"] = self.lowest, self.highest
            out["min_length"], out["max_length"] = min(self.lengths), max(self.lengths)
        return out


def _numeric(numbers: list[float], *, integer: bool) -> dict[str, Any]:
    def num(x: float) -> float | int:
        return int(x) if integer and x.is_integer() else round(x, 6)

    return {
        "min": num(min(numbers)),
        "max": num(max(numbers)),
        "mean": round(statistics.fmean(numbers), 6),
        "median": num(statistics.median(numbers)),
        "stdev": round(statistics.pstdev(numbers), 6) if len(numbers) > 1 else 0.0,
        "sum": num(math.fsum(numbers)),
    }


def detect_format(path: Path, given: str | None) -> str:
    if given:
        return given.lower()
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    return "csv"


def csv_records(path: Path, delimiter: str | None, fmt: str) -> Iterator[Any]:
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        sample = fh.read(65536)
        fh.seek(0)
        if delimiter is None:
            if fmt == "tsv":
                delimiter = "\t"
            else:
                try:
                    delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
                except csv.Error:
                    delimiter = ","
        reader = csv.reader(fh, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            return
        names = _unique([h.strip() or f"column_{i + 1}" for i, h in enumerate(header)])
        yield names
        for row in reader:
            if not row:
                continue
            padded = row + [""] * (len(names) - len(row))
            yield dict(zip(names, padded[: len(names)], strict=True))


def _unique(names: list[str]) -> list[str]:
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


def json_records(path: Path, fmt: str) -> Iterator[Any]:
    yield None  # column names come from the records themselves
    if fmt == "jsonl":
        with path.open(encoding="utf-8-sig", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ValueError(f"line {number} is not JSON: {e.msg}") from e
        return
    data = json.loads(path.read_text(encoding="utf-8-sig", errors="replace"))
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise ValueError("a JSON file must hold an array of records (or one object with one)")
        data = lists[0]
    if not isinstance(data, list):
        raise ValueError("a JSON file must hold an array of records")
    yield from data


def profile(args: dict[str, Any]) -> dict[str, Any]:
    raw = args.get("path") or (args.get("args") or [None])[0]
    if not raw:
        raise ValueError('give "path": the data file to profile')
    path = Path(os.path.expanduser(str(raw)))
    if not path.is_absolute():
        path = Path(os.environ.get("WORKSPACE", ".")) / path
    if not path.is_file():
        raise ValueError(f"no such file: {path}")
    fmt = detect_format(path, args.get("format"))
    max_rows = int(args.get("max_rows", 1_000_000))
    top = int(args.get("top", 5))
    source = (
        json_records(path, fmt)
        if fmt in ("json", "jsonl")
        else csv_records(path, args.get("delimiter"), fmt)
    )
    names = next(source, None)
    columns: dict[str, Column] = {n: Column(n) for n in names or []}
    rows, truncated = 0, False
    for record in source:
        if rows >= max_rows:
            truncated = True
            break
        rows += 1
        if not isinstance(record, dict):
            record = {"value": record}
        for key in record:
            if key not in columns:
                columns[key] = Column(key)
                columns[key].missing = rows - 1  # absent in earlier records
        for key, column in columns.items():
            column.add(record.get(key))
    return {
        "file": str(path),
        "format": fmt,
        "bytes": path.stat().st_size,
        "rows": rows,
        "truncated": truncated,
        "columns": len(columns),
        "profile": [c.profile(rows, top) for c in columns.values()],
    }


def main() -> int:
    raw = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
    args = json.loads(raw or "{}")
    if not isinstance(args, dict):
        args = {"path": args}
    try:
        result = profile(args)
    except (ValueError, OSError, UnicodeError) as e:
        print(f"csv-profile: {e}", file=sys.stderr)
        return 2
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
