"""The scanner's rules, as data: a stable code, a severity, what it flags and why.

Each :class:`Rule` is one regular expression over the text of a skill's files. With
``benign``, matched text that also matches it (a known installer host for ``curl … |
sh``) keeps its code at ``benign_severity``: still there to read, not what a
supply-chain attack looks like. What a regular expression cannot express (blobs that
decode to commands, comments addressing the model, credentials beside an exfiltration
endpoint) lives in :mod:`.detectors`, its codes in :data:`DETECTOR_CODES`.

Codes are stable: SC1xx download-and-execute, SC2xx exfiltration endpoints, SC3xx
encoded payloads, SC4xx invisible text, SC5xx credentials, SC6xx safety settings.
The hostile samples in ``tests/unit/skills/scanning/`` hold one test per code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["DETECTOR_CODES", "RULES", "Rule", "Severity", "describe"]


class Severity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    severity: Severity
    #: what was found, as a finding's message starts
    title: str
    #: why it matters, appended to the message
    why: str
    pattern: re.Pattern[str]
    #: matched text that makes the finding ordinary (e.g. a well-known installer host)
    #: lower-case strings one of which the text must hold for the rule to run: a
    #: substring test costs far less than the regular expression (most files hold none)
    needles: tuple[str, ...] = ()
    #: lines after a needle's line the expression may reach (a multi-line pattern)
    lines_after: int = 0
    benign: re.Pattern[str] | None = None
    benign_severity: Severity = Severity.MEDIUM


_I = re.IGNORECASE
_SHELL = r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+\S+=\S*\s+)*(?:ba|z|k|da|fi|c|tc)?sh\b"
_INTERP = rf"(?:{_SHELL}|python[23]?\b|perl\b|ruby\b|node\b|php\b)"
_FETCH = r"\b(?:curl|wget|aria2c|invoke-webrequest|iwr)\b"
#: installers that vendors publish as ``curl … | sh`` (tuned on half of the corpus)
_KNOWN_INSTALLERS = re.compile(
    r"(?:astral\.sh|sh\.rustup\.rs|get\.docker\.com|raw\.githubusercontent\.com/"
    r"(?:Homebrew|nvm-sh|anthropics|pnpm|oven-sh|ollama|helm|cli)/|brew\.sh|bun\.sh|"
    r"deno\.land|deno\.com|get\.pnpm\.io|ollama\.com|claude\.ai/install|"
    r"install\.python-poetry\.org|sdk\.cloud\.google\.com|cli\.github\.com|fly\.io|"
    r"get\.helm\.sh|foundry\.paradigm\.xyz|starship\.rs|tailscale\.com|"
    r"supabase\.com|vercel\.com|railway\.app|get\.k3s\.io|nixos\.org|"
    r"dot\.net|aka\.ms|opencode\.ai|cursor\.com|mise\.run|pixi\.sh|"
    r"lambdalabs\.com|neon\.tech|code-server\.dev|deb\.nodesource\.com|rpm\.nodesource\.com|"
    r"fluxcd\.io|run\.linkerd\.io|ncbi\.nlm\.nih\.gov|community\.chocolatey\.org|"
    r"github\.com/[\w.-]+/[\w.-]+/releases|\$\{?[A-Z_]+\}?/install|"
    # placeholders: documentation of the pattern, not a working attack
    r"(?:^|[/.@\s])example\.(?:com|org|net)\b|attacker\.com|\[url\]|<url>|\{url\})",
    _I,
)
#: a phrase quoted or discussed (guardrail and security skills cite injections)
_CITED = re.compile(
    r"[\"'`\u201c\u2018]\s*(?:ignore|disregard|forget|override)\b|inject|attack|jailbreak|"
    r"detect|guardrail|malicious|adversar",
    _I,
)
_LOCAL_IP = r"(?!(?:127|10|0)\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.)"

RULES: tuple[Rule, ...] = (
    Rule(
        "SC101",
        Severity.HIGH,
        "download piped into a shell or interpreter",
        "whatever the server sends runs unseen, and it can change after review",
        re.compile(
            rf"{_FETCH}\s+[^\s|;&][^\n|;&]*?\|\s*{_INTERP}"
            rf"|{_SHELL}\s+<\(\s*{_FETCH}"
            rf"|{_SHELL}\s+-c\s+[\"']?\$\(\s*{_FETCH}"
            rf"|\b(?:python[23]?|perl|ruby)\s+-c\s+[\"'][^\n]*urlopen[^\n]*(?:exec|eval)\(",
            _I,
        ),
        needles=("curl", "wget", "aria2c", "iwr", "invoke-webrequest", "urlopen"),
        benign=_KNOWN_INSTALLERS,
    ),
    Rule(
        "SC102",
        Severity.HIGH,
        "decoded data piped into a shell",
        "an encoded command hides what will run from the reader",
        re.compile(
            rf"\b(?:base64\s+(?:-d|--decode|-D)|openssl\s+(?:enc\s+)?(?:-d\s+)?-?base64\s+-d|"
            rf"xxd\s+-r(?:\s+-p)?|uudecode)\b[^\n;&]*\|\s*{_INTERP}"
            r"|\beval\s+[\"']?\$\([^\n)]*\|\s*(?:base64\s+(?:-d|--decode)|rev|xxd\s+-r)",
            _I,
        ),
        needles=("base64", "xxd", "uudecode", "eval"),
    ),
    Rule(
        "SC103",
        Severity.HIGH,
        "PowerShell download-and-execute or encoded command",
        "it fetches and runs code, or runs a command no one can read",
        re.compile(
            r"\b(?:iex|invoke-expression)\b\s*[\(\s]*(?:\(\s*)?(?:iwr|irm|curl|wget|"
            r"invoke-webrequest|invoke-restmethod|new-object\s+(?:system\.)?net\.webclient)"
            r"|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]*\|\s*(?:iex|"
            r"invoke-expression)\b"
            r"|\.downloadstring\s*\("
            r"|\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]*?\s[-/](?:e|ec|enc|encodedcommand)\s+"
            r"[A-Za-z0-9+/]{16,}={0,2}",
            _I,
        ),
        needles=("iex", "invoke-expression", "downloadstring", "powershell", "pwsh"),
        benign=_KNOWN_INSTALLERS,
    ),
    Rule(
        "SC104",
        Severity.HIGH,
        "password-protected archive",
        "a password keeps the payload away from malware scanners (the ClawHavoc pattern)",
        re.compile(
            r"\bunzip\b[^\n]*\s(?-i:-P)\s*\S+|\b(?:7z|7za|7zz|unrar|rar)\b[^\n]*\s-p\S+"
            r"|\b(?:zip|archive|rar|7z|7-zip)\b[^\n]{0,80}\b(?:password|passcode|pass)\b"
            r"\s*(?:is\s*|[:=]\s*)[`'\"*]*[\w!@#$%^&-]{3,}"
            r"|\b(?:password|passcode)\b\s*(?:is\s*|[:=]\s*)[`'\"*]*[\w!@#$%^&-]{3,}"
            r"[^\n]{0,60}\b(?:zip|archive|rar|7z|extract|unpack)\b",
            _I,
        ),
        needles=("unzip", "7z", "unrar", "rar ", "pass"),
    ),
    Rule(
        "SC105",
        Severity.MEDIUM,
        "downloaded file made executable and run",
        "a binary fetched at run time was never reviewed",
        re.compile(
            rf"{_FETCH}[^\n]*\s(?:-o|-O|--output)\s*\S+[^\n]*(?:&&|;|\n)\s*"
            r"(?:sudo\s+)?chmod\s+\+?[0-7]*x[^\n]*(?:&&|;|\n)\s*(?:sudo\s+)?\./",
            _I,
        ),
        needles=("curl", "wget", "iwr"),
        lines_after=2,
        benign=_KNOWN_INSTALLERS,
    ),
    Rule(
        "SC106",
        Severity.HIGH,
        "reverse shell",
        "it hands a shell on this machine to a remote host",
        re.compile(
            r"/dev/tcp/\d|\b(?:nc|ncat|netcat)\b[^\n]*\s-[ce]\s+/?(?:bin/)?(?:ba)?sh\b"
            r"|\bbash\s+-i\s+>&|\bsocat\b[^\n]*exec:[\"']?(?:/bin/)?(?:ba)?sh",
            _I,
        ),
        needles=("/dev/tcp", "nc ", "ncat", "netcat", "bash -i", "socat"),
    ),
    Rule(
        "SC201",
        Severity.HIGH,
        "request-collector endpoint",
        "webhook.site, RequestBin, Pipedream and their kind exist to catch data sent out",
        re.compile(
            r"\b(?:webhook\.site|requestbin\.(?:net|com)|[\w-]+\.m\.pipedream\.net|"
            r"hookbin\.com|beeceptor\.com|requestcatcher\.com|[\w-]+\.oast\.(?:fun|me|site|"
            r"live|online|pro)|[\w-]+\.interact\.sh|burpcollaborator\.net|"
            r"[\w-]+\.requestrepo\.com|pipedream\.net/[\w-]+|webhook\.cool|rbaskets\.in)",
            _I,
        ),
        needles=(
            "webhook.site",
            "requestbin",
            "pipedream",
            "hookbin",
            "beeceptor",
            "requestcatcher",
            "oast.",
            "interact.sh",
            "burpcollaborator",
            "requestrepo",
            "webhook.cool",
            "rbaskets",
        ),
    ),
    Rule(
        "SC202",
        Severity.HIGH,
        "Discord or Telegram webhook with its secret",
        "a hard-coded chat webhook is a common exfiltration channel",
        re.compile(
            r"discord(?:app)?\.com/api/webhooks/\d{15,}/[\w-]{20,}"
            r"|api\.telegram\.org/bot\d{6,}:[\w-]{30,}",
            _I,
        ),
        needles=("/api/webhooks/", "api.telegram.org/bot"),
    ),
    Rule(
        "SC203",
        Severity.MEDIUM,
        "paste or anonymous file-drop site",
        "paste sites host payloads and receive stolen data; a skill rarely needs one",
        re.compile(
            r"\b(?:pastebin\.com/raw|paste\.ee/r|hastebin\.com|ghostbin\.\w+|0x0\.st|"
            r"transfer\.sh|termbin\.com|file\.io|paste\.rs|dpaste\.(?:com|org)|"
            r"pastebin\.com/\w{6,}|rentry\.co|temp\.sh|bashupload\.com|gofile\.io)\b",
            _I,
        ),
        needles=(
            "pastebin",
            "paste.ee",
            "hastebin",
            "ghostbin",
            "0x0.st",
            "transfer.sh",
            "termbin",
            "file.io",
            "paste.rs",
            "dpaste",
            "rentry.co",
            "temp.sh",
            "bashupload",
            "gofile",
        ),
    ),
    Rule(
        "SC204",
        Severity.MEDIUM,
        "hard-coded tunnel host",
        "a tunnel hostname points at someone's laptop, not at a service",
        re.compile(
            r"\b[\w-]{6,}\.(?:ngrok(?:-free)?\.(?:io|app|dev)|trycloudflare\.com|loca\.lt|"
            r"serveo\.net|pinggy\.(?:io|link)|localhost\.run|bore\.pub)\b",
            _I,
        ),
        needles=(
            "ngrok",
            "trycloudflare",
            "loca.lt",
            "serveo",
            "pinggy",
            "localhost.run",
            "bore.pub",
        ),
    ),
    Rule(
        "SC205",
        Severity.MEDIUM,
        "URL on a bare public IP address",
        "malware servers rarely have names; ClawHavoc's did not",
        re.compile(rf"\bhttps?://{_LOCAL_IP}\d{{1,3}}(?:\.\d{{1,3}}){{3}}(?::\d+)?/[\w./?=&%-]*"),
        needles=("http://", "https://"),
    ),
    Rule(
        "SC302",
        Severity.HIGH,
        "code decoded and executed in one step",
        "decoding right before exec/eval hides the real program",
        re.compile(
            r"\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|"
            r"zlib\.decompress|marshal\.loads|__import__\(['\"](?:base64|zlib)|atob\s*\(|"
            r"Buffer\.from\s*\([^)]*['\"](?:base64|hex)['\"])",
            _I,
        ),
        needles=("exec", "eval"),
    ),
    Rule(
        "SC402",
        Severity.HIGH,
        "bidirectional control character",
        "it makes text render differently from what is stored (Trojan Source)",
        re.compile("[\u202a-\u202e\u2066-\u2069]"),
        needles=tuple(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))),
    ),
    Rule(
        "SC403",
        Severity.HIGH,
        "Unicode tag characters",
        "tag characters are invisible ASCII: a hidden message for the model",
        re.compile("[\U000e0000-\U000e007f]+"),
    ),
    Rule(
        "SC406",
        Severity.HIGH,
        "terminal escape sequence",
        "it hides or redraws text in a terminal (cat, less -R), or sets the clipboard",
        re.compile("\x1b[\\[\\]PX^_c78M]|[\x90\x9b\x9d-\x9f]"),
        needles=("\x1b", "\x90", "\x9b", "\x9d", "\x9e", "\x9f"),
    ),
    Rule(
        "SC501",
        Severity.MEDIUM,
        "reference to credential files",
        "SSH keys, cloud credentials and token files are what stealers collect",
        re.compile(
            r"(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%)/?\.ssh/(?:id_|authorized_keys|\*)"
            r"|\bcat\s+[^\n]*\.ssh/id_\w+"
            r"|\.aws/credentials\b|\.config/gcloud/(?:credentials|application_default)"
            r"|(?:~|\$HOME)/\.(?:netrc|git-credentials|pypirc|npmrc|docker/config\.json|"
            r"kube/config)\b"
            r"|\b(?:wallet\.dat|key4\.db|logins\.json)\b|Login Data\b",
            _I,
        ),
        needles=(
            ".ssh",
            ".aws",
            "gcloud",
            ".netrc",
            ".git-credentials",
            ".pypirc",
            ".npmrc",
            ".docker",
            ".kube",
            "wallet.dat",
            "key4.db",
            "logins.json",
            "login data",
        ),
    ),
    Rule(
        "SC503",
        Severity.HIGH,
        "keychain or browser secret store read",
        "dumping the keychain or a browser's password store is credential theft",
        re.compile(
            r"\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)"
            r"[^\n]*\s-[wga]|\bdump-keychain\b|\blogin\.keychain(?:-db)?\b"
            r"|\bsecretstorage\.|\bLocal State\b[^\n]*encrypted_key",
            _I,
        ),
        needles=("security ", "keychain", "secretstorage", "local state"),
    ),
    Rule(
        "SC504",
        Severity.LOW,
        "reads or sends a .env file",
        "a .env file usually holds the project's secrets",
        re.compile(
            r"\b(?:cat|type|less|more|head|tail|upload|send|post|copy|cp|scp|curl[^\n]*@)"
            r"\s+[^\n]{0,40}(?<![\w-])\.env\b(?![.\w-])",
            _I,
        ),
        needles=(".env",),
    ),
    Rule(
        "SC601",
        Severity.HIGH,
        "turns off the agent's permission checks or sandbox",
        "a skill must not grant itself what the user did not",
        re.compile(
            r"--dangerously-skip-permissions|\bbypassPermissions\b|--permission-mode[= ]+"
            r"bypass|dangerouslyDisableSandbox|--dangerously-bypass-approvals-and-sandbox"
            r"|\bpermission_mode\s*=\s*[\"']bypass",
            _I,
        ),
        needles=("dangerously", "bypasspermissions", "permission-mode", "permission_mode"),
    ),
    Rule(
        "SC602",
        Severity.HIGH,
        "prompt-injection phrase",
        "it tells the model to drop its instructions or to hide things from the user",
        re.compile(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|"
            r"your\s+)?(?:previous|prior|above|earlier|preceding|system|original)\s+"
            r"(?:instructions|rules|guidelines|prompts?|directives)"
            r"|\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|alert|"
            r"notify|show)\s+the\s+user\b"
            r"|\bwithout\s+(?:telling|informing|alerting|notifying)\s+the\s+user\b"
            r"|\bhide\s+(?:this|it|these)\s+from\s+the\s+user\b",
            _I,
        ),
        needles=("ignore", "disregard", "forget", "override", "the user"),
        benign=_CITED,
    ),
)

#: codes reported by :mod:`.detectors` (checks that are not one regular expression)
DETECTOR_CODES: dict[str, tuple[Severity, str]] = {
    "SC301": (Severity.HIGH, "encoded blob that decodes to a command"),
    "SC401": (Severity.MEDIUM, "zero-width characters"),
    "SC404": (Severity.HIGH, "instructions hidden in an HTML comment"),
    "SC405": (Severity.MEDIUM, "text hidden from the reader in Markdown"),
    "SC502": (Severity.HIGH, "credential file next to a way to send it out"),
}


def describe() -> list[dict[str, str]]:
    """Every code with its default severity and title (for ``skills scan --rules``)."""
    table = {r.code: (r.severity, r.title) for r in RULES} | DETECTOR_CODES
    return [
        {"code": code, "severity": sev.value, "title": title}
        for code, (sev, title) in sorted(table.items())
    ]
