"""Checks that are more than one regular expression (codes in ``rules.DETECTOR_CODES``).

* SC301: a long base64 or hex blob (or a ``fromCharCode`` list) that decodes to
  printable text holding a command — the payload a reader cannot see;
* SC401: zero-width characters (a run of them can carry a hidden message);
* SC404: an HTML comment — invisible once rendered — that gives the model orders;
* SC405: Markdown hidden from the reader (``[//]: # (…)`` comments, ``display:none``);
* SC502: a credential file and a way to send data out in the same file.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from skilldeck.skills.scanning.findings import Finding
from skilldeck.skills.scanning.rules import DETECTOR_CODES, Severity

__all__ = ["LineOf", "detect"]

LineOf = Callable[[int], int]

_I = re.IGNORECASE
_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?:\\x[0-9a-fA-F]{2}){10,}|\b[0-9a-fA-F]{48,}\b")
_CHARCODES = re.compile(r"fromCharCode\s*\(\s*((?:\d{2,3}\s*,\s*){8,}\d{2,3})\s*\)", _I)
_COMMAND = re.compile(
    r"\b(?:curl|wget|iwr|irm)\s+\S|\|\s*(?:ba|z)?sh\b|\b(?:bash|sh)\s+-c\b|powershell|"
    r"invoke-expression|\biex\b|\beval\s*\(|\bexec\s*\(|subprocess|os\.system|"
    r"child_process|/dev/tcp/|\bnc\s+-e\b|chmod\s+\+x|rm\s+-rf\s+[/~]|\.ssh/|"
    r"ignore (?:all )?previous instructions",
    _I,
)
#: zero-width characters: ZWSP, ZWNJ, ZWJ, WJ, invisible operators, MVS, BOM
_ZERO_WIDTH_CHARS = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u180e\ufeff"
_ZERO_WIDTH = re.compile(f"[{_ZERO_WIDTH_CHARS}]+")
_ZWJ = "\u200d"
_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_LINK_COMMENT = re.compile(r"^[ \t]*\[(?://|comment|_|#)\]:\s*<?#>?\s*[(\"'](.+)[)\"']", re.M | _I)
_HIDDEN_TAG = re.compile(
    r"<(?:div|span|p|section|details)\b[^>]*(?:style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|"
    r"visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0)|\shidden[\s>=])",
    _I,
)
#: words in hidden text that make it an order to the model rather than a note
_ORDER = re.compile(
    r"\b(?:ignore|disregard)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|"
    r"system)|\b(?:secretly|silently|covertly)\b|\bwithout\s+(?:telling|asking|informing)\b|"
    r"\b(?:do\s+not|don't|never)\s+(?:tell|mention|reveal|inform)\b|"
    r"\b(?:curl|wget|iwr)\s|\bsend\s+(?:it|them|the|this|all|its)\b[^.]{0,60}\b(?:to|https?://)|"
    r"\.ssh\b|credentials|\bapi[_ -]?keys?\b[^.]{0,40}\b(?:send|post|upload)|"
    r"\b(?:you|assistant|AI|agent|model|claude)\s+(?:must|should|shall|will)\s+(?:now\s+)?"
    r"(?:also\s+)?(?:run|execute|download|send|upload|delete|read)\b",
    _I,
)
_MARKDOWN = (".md", ".markdown", ".mdx", ".txt", ".html", ".htm", ".rst")
_SEND = re.compile(
    r"\bcurl\b[^\n]*\s(?:-d|--data(?:-binary|-raw)?|-F|--form|-T|--upload-file)\s+[\"']?@"
    r"|\brequests\.(?:post|put)\(|\bscp\s+\S+\s+\S+@|\bnc\s+\S+\s+\d+\s*<",
    _I,
)
_SENDING_CODES = frozenset({"SC201", "SC202", "SC203", "SC204", "SC205"})
_CREDENTIAL_CODES = frozenset({"SC501", "SC503"})


def _finding(
    code: str, rel: str, line: int, detail: str, excerpt: str, sev: Severity | None = None
) -> Finding:
    severity, title = DETECTOR_CODES[code]
    return Finding(code, sev or severity, rel, line, f"{title}: {detail}", visible(excerpt))


def visible(text: str, limit: int = 80) -> str:
    """``text`` shortened, with invisible and control characters spelled out."""
    out = []
    for ch in text[: limit * 2]:
        cp = ord(ch)
        if ch in "\t" or (32 <= cp < 127) or (cp >= 160 and not _invisible(cp)):
            out.append(ch)
        else:
            out.append(f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
    short = "".join(out)
    return short if len(short) <= limit else short[: limit - 1] + "…"


def _invisible(cp: int) -> bool:
    return (
        0x200B <= cp <= 0x200F
        or 0x202A <= cp <= 0x202E
        or 0x2060 <= cp <= 0x2069
        or (cp in (0xFEFF, 0x180E) or 0xE0000 <= cp <= 0xE007F)
    )


def detect(rel: str, text: str, line_of: LineOf, so_far: list[Finding]) -> Iterator[Finding]:
    """Every detector's findings for one file; ``so_far`` are the rules' findings."""
    yield from _encoded(rel, text, line_of)
    yield from _zero_width(rel, text, line_of)
    if rel.lower().endswith(_MARKDOWN):
        yield from _hidden_markdown(rel, text, line_of)
    yield from _credentials_out(rel, text, line_of, so_far)


def _encoded(rel: str, text: str, line_of: LineOf) -> Iterator[Finding]:
    for match in _B64.finditer(text):
        blob = match.group()
        if blob.isalnum() and (blob.isdigit() or blob.isalpha()):
            continue  # a word or a number, not an encoding
        decoded = _decode_b64(blob)
        if decoded and _COMMAND.search(decoded):
            yield _finding(
                "SC301", rel, line_of(match.start()), f"base64 for {visible(decoded, 60)!r}", blob
            )
    for match in _HEX.finditer(text):
        decoded = _decode_hex(match.group())
        if decoded and _COMMAND.search(decoded):
            yield _finding(
                "SC301",
                rel,
                line_of(match.start()),
                f"hex for {visible(decoded, 60)!r}",
                match.group(),
            )
    for match in _CHARCODES.finditer(text):
        decoded = "".join(chr(int(n)) for n in re.findall(r"\d+", match.group(1)))
        if _COMMAND.search(decoded):
            yield _finding(
                "SC301",
                rel,
                line_of(match.start()),
                f"char codes for {visible(decoded, 60)!r}",
                match.group(),
            )


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    good = sum(ch.isprintable() or ch in "\n\r\t" for ch in text)
    return text if text and good >= 0.9 * len(text) else None


def _decode_b64(blob: str) -> str | None:
    padded = blob + "=" * (-len(blob) % 4)
    try:
        return _printable(base64.b64decode(padded, validate=True))
    except (binascii.Error, ValueError):
        return None


def _decode_hex(blob: str) -> str | None:
    digits = blob.replace("\\x", "")
    try:
        return _printable(bytes.fromhex(digits))
    except ValueError:
        return None


def _zero_width(rel: str, text: str, line_of: LineOf) -> Iterator[Finding]:
    if not any(ch in text for ch in _ZERO_WIDTH_CHARS):
        return
    longest: dict[int, re.Match[str]] = {}  # the longest run of each line
    for match in _ZERO_WIDTH.finditer(text):
        if match.start() == 0 and match.group() == "\ufeff":
            continue  # a byte-order mark at the start of a file is ordinary
        if _emoji_joiner(text, match):
            continue
        line = line_of(match.start())
        if line not in longest or len(match.group()) > len(longest[line].group()):
            longest[line] = match
    for line, match in longest.items():
        run = len(match.group())
        severity = Severity.HIGH if run >= 4 else None
        detail = f"{run} in a row" + (" (enough to carry a hidden message)" if severity else "")
        yield _finding(
            "SC401",
            rel,
            line,
            detail,
            text[max(0, match.start() - 20) : match.end() + 20],
            severity,
        )


def _emoji_joiner(text: str, match: re.Match[str]) -> bool:
    """A short run of ZWJ alone that is not between two ASCII characters: the joiner
    of an emoji sequence (👨‍👩‍👧) or of an Indic conjunct, which is ordinary text. A
    run that mixes in any other zero-width character, or is 4+ long, is not."""
    run = match.group()
    if set(run) != {_ZWJ} or len(run) >= 4:
        return False
    before = text[match.start() - 1] if match.start() > 0 else ""
    after = text[match.end()] if match.end() < len(text) else ""
    return not ("\x21" <= before <= "\x7e" and "\x21" <= after <= "\x7e")


def _hidden_markdown(rel: str, text: str, line_of: LineOf) -> Iterator[Finding]:
    for match in _COMMENT.finditer(text):
        body = match.group(1)
        if _ORDER.search(body):
            yield _finding(
                "SC404",
                rel,
                line_of(match.start()),
                "it does not render, yet the model reads it",
                body.strip(),
            )
    for match in _LINK_COMMENT.finditer(text):
        if _ORDER.search(match.group(1)):
            yield _finding(
                "SC405",
                rel,
                line_of(match.start()),
                "a link-reference comment that gives orders",
                match.group(1),
                Severity.HIGH,
            )
    for match in _HIDDEN_TAG.finditer(text):
        following = text[match.end() : match.end() + 400]
        severity = Severity.HIGH if _ORDER.search(following) else None
        yield _finding(
            "SC405",
            rel,
            line_of(match.start()),
            "an element styled to be invisible",
            match.group(),
            severity,
        )


def _credentials_out(
    rel: str, text: str, line_of: LineOf, so_far: list[Finding]
) -> Iterator[Finding]:
    mine = [f for f in so_far if f.file == rel]
    credentials = [f for f in mine if f.code in _CREDENTIAL_CODES]
    if not credentials:
        return
    sending = [f for f in mine if f.code in _SENDING_CODES]
    send_match = _SEND.search(text)
    if not sending and send_match is None:
        return
    how = sending[0].message.split(":")[0] if sending else "an upload command"
    first = min(credentials, key=lambda f: f.line)
    yield _finding(
        "SC502", rel, first.line, f"{first.excerpt!r} and {how} in one file", first.excerpt
    )
