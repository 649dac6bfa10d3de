"""The security figures, computed from the data the tests use: ``python -m tests.security.figures``
prints a markdown table (``--json`` for JSON). Escape attempts are run for real in a temporary
arena, so "succeeded" is measured, not asserted."""

from __future__ import annotations

import collections
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentkit._sandbox._kernel import layer
from agentkit._sandbox._redact import redact

from .attempts import ATTEMPTS, CONFIG_ATTEMPTS, FILE_ATTEMPTS, GIT, build_arena, judge
from .secrets_data import BENIGN, FORMATS, SECRETS

KERNEL = layer("auto").mode == "kernel"


def compute() -> dict[str, Any]:
    per: dict[str, dict[str, int]] = collections.defaultdict(
        lambda: {"attempts": 0, "refused": 0, "succeeded": 0, "succeeded_allowlist_only": 0})
    with tempfile.TemporaryDirectory() as tmp:
        arena = build_arena(Path(tmp))
        for a in ATTEMPTS + FILE_ATTEMPTS + CONFIG_ATTEMPTS:
            if a.needs_git and GIT is None:
                continue
            out = judge(arena, a, "kernel" if KERNEL else "auto")
            row = per[a.category]
            row["attempts"] += 1
            row["refused"] += out.refused
            row["succeeded"] += out.escaped
            row["succeeded_allowlist_only"] += judge(arena, a, "allowlist").escaped
    fragments = [(s, f) for s in SECRETS for f in s.fragments]
    leaked = sum(f in redact(s.text) for s, f in fragments)
    changed = sum(redact(b) != b for b in BENIGN)
    return {
        "kernel_layer": KERNEL,
        "escape_attempts": sum(r["attempts"] for r in per.values()),
        "escapes_succeeded": sum(r["succeeded"] for r in per.values()),
        "by_category": dict(sorted(per.items())),
        "secret_formats": len(FORMATS),
        "secret_samples": len(SECRETS),
        "canary_fragments_planted": len(fragments),
        "canary_fragments_leaked": leaked,
        "benign_corpus_lines": len(BENIGN),
        "benign_lines_changed": changed,
        "false_positive_rate": round(changed / len(BENIGN), 4),
    }


def markdown(f: dict[str, Any]) -> str:
    on = "kernel layer on" if f["kernel_layer"] else "kernel layer UNAVAILABLE here"
    rows = [f"| category | attempts | refused | succeeded ({on}) | succeeded (allowlist only) |",
            "|---|---:|---:|---:|---:|"]
    for cat, r in f["by_category"].items():
        rows.append(f"| {cat} | {r['attempts']} | {r['refused']} | {r['succeeded']} | "
                    f"{r['succeeded_allowlist_only']} |")
    total = {k: sum(r[k] for r in f["by_category"].values())
             for k in ("refused", "succeeded_allowlist_only")}
    rows.append(f"| **total** | **{f['escape_attempts']}** | **{total['refused']}** | "
                f"**{f['escapes_succeeded']}** | **{total['succeeded_allowlist_only']}** |")
    rows += ["", "| secrets | value |", "|---|---:|",
             f"| formats | {f['secret_formats']} |", f"| planted samples | {f['secret_samples']} |",
             f"| canary fragments planted | {f['canary_fragments_planted']} |",
             f"| canary fragments leaked | {f['canary_fragments_leaked']} |",
             f"| benign look-alike lines | {f['benign_corpus_lines']} |",
             f"| benign lines changed | {f['benign_lines_changed']} |",
             f"| false-positive rate | {f['false_positive_rate']:.2%} |"]
    return "\n".join(rows)


if __name__ == "__main__":
    figures = compute()
    print(json.dumps(figures, indent=2) if "--json" in sys.argv else markdown(figures))
