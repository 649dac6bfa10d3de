"""Where the bundled ``tasks/`` and ``prompts/`` directories are.

In a checkout (or an editable install) they sit beside the package; a wheel carries them
inside it as ``agentkit/_bundled/``.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def bundled(name: str) -> Path:
    for candidate in (_PKG / "_bundled" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"agentkit's bundled {name}/ directory is missing; reinstall agentkit")
