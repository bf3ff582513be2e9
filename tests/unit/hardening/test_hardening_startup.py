"""A scripted run does not pay for the provider SDKs.

``openai`` and ``anthropic`` cost about 2 s of CPU to import; every ``skilldeck run``
in the crash, concurrency and limit suites (hundreds of processes in the full budget)
would pay it. The factory imports them only for their own providers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = """
import sys
from pathlib import Path
from skilldeck.config import load_settings
from skilldeck.llm.factory import make_model, parse_model_spec
script = Path(sys.argv[1])
script.write_text('{"text": "hi"}\\n', encoding="utf-8")
model = make_model(f"scripted:{script}", settings=load_settings(workspace=script.parent))
assert parse_model_spec("gpt-4.1") == ("openai", "gpt-4.1")
print(sorted(m for m in ("openai", "anthropic") if m in sys.modules))
"""


def test_scripted_model_does_not_import_provider_sdks(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK, str(tmp_path / "s.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=tmp_path,
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
