"""What the CLI's rich renderer prints for some events, at 80 columns, no colour."""

from __future__ import annotations

import io

from rich.console import Console

from skilldeck.cli.render import RichRenderer


def shown(*events: object) -> str:
    out = io.StringIO()
    renderer = RichRenderer(Console(file=out, width=80, color_system=None))
    for event in events:
        renderer.handle(event)  # type: ignore[arg-type]
    renderer.close()
    return out.getvalue()
