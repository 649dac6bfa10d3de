"""Red team 4 (F2): a YAML anchor's value is the secret when an alias of it stands under a
secret key. YAML 1.2 §3.2.2.2/§7.1: `*a` is the very node `&a` names, so `password: *a`
makes the anchored scalar (or every scalar of the anchored block) the password; it must be
withheld where the anchor is written, in the text and in parse_config's entries."""

from __future__ import annotations

from pathlib import Path

import anyio

from agentkit import Host, Sandbox
from agentkit._sandbox._redact import redact

SECRET = "Zq8vN3kLp0Rt7YwB2mXc4HsD"


def test_a_scalar_anchor_under_an_innocent_key() -> None:
    out = redact(f"x: &a {SECRET}\npassword: *a\n")
    assert SECRET not in out and out.count("[REDACTED") == 2
    assert out.splitlines()[0].startswith("x: &a ")  # the line and its anchor stay


def test_a_block_anchor_has_every_value_withheld() -> None:
    out = redact(f"defaults: &d\n  v: {SECRET}\n  - {SECRET[::-1]}\nauth:\n  api_key: *d\n"
                 "other: kept\n")
    assert SECRET not in out and SECRET[::-1] not in out
    assert "other: kept" in out and "defaults: &d" in out


def test_anchors_aliased_only_under_ordinary_keys_are_kept() -> None:
    text = "base: &b\n  image: vllm/vllm-openai:v0.11.0\nsvc:\n  <<: *b\n  name: x\n" \
           "tp: &tp 8\nworkers: *tp\n"
    assert redact(text) == text


def test_parse_config_withholds_the_anchor_entry(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(f"x: &a {SECRET}\npassword: *a\n")
    out = anyio.run(Sandbox(Host.at(tmp_path, sandbox="allowlist"), task_id="t").call,
                    "parse_config", {"path": "/c.yaml"})
    assert out.ok, out.error
    assert SECRET not in str(out.data), out.data
