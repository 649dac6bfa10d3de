"""Host files past the parsers' limits (agentkit._bounded): a huge integer, deep nesting or a
quadratic YAML integer is a one-line error for that file, in well under a second; it used to
fail the whole tool call (orjson cannot write an integer past 64 bits into the trace), raise
ValueError, or burn CPU."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._bounded import LimitError, check_yaml, loads_json
from agentkit._hostmodel.runtimes._containers import parse_ps
from agentkit._hostmodel.runtimes._yaml import load_yaml

from .conftest import write_tree

BIG = "1" + "0" * 40  # 133 bits

CRAFTED = {
    "big.json": (f'{{"x": {BIG}}}', "an integer of 133 bits"),
    "big.yaml": (f"x: {BIG}\n", "an integer of 133 bits"),
    "big.toml": (f"x = {BIG}\n", "an integer of 133 bits"),
    "key.yaml": (f"{BIG}: 1\n", "an integer of 133 bits"),
    "digits.json": ('{"x": ' + "9" * 5000 + "}", "cannot parse as json"),
    "digits.toml": ("x = " + "9" * 5000 + "\n", "cannot parse as toml"),
    "sexagesimal.yaml": ("x: " + "1:" * 200_000 + "1\n", "an integer literal of 400001"),
    "hex.yaml": ("x: 0x" + "f" * 400_000 + "\n", "an integer literal of 400002"),
    "deep.json": ("[" * 100_000 + "]" * 100_000, "nesting deeper than 64"),
    "deep.yaml": ("x: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 64"),
    "deep.toml": ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_config_is_an_error_for_that_file(tmp_path: Path, name: str) -> None:
    text, words = CRAFTED[name]
    root = write_tree(tmp_path, {name: text})
    box = Sandbox(Host.at(root), task_id="t")
    started = time.monotonic()
    r = anyio.run(box.call, "parse_config", {"path": f"/{name}"})
    assert time.monotonic() - started < 2
    assert not r.ok and r.error.startswith(f"/{name}") and words in r.error, r.error
    assert "\n" not in r.error


def test_64_bit_integers_still_parse(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"c.yaml": f"a: {2**64 - 1}\nb: {-(2**63)}\nc: 0b{'1' * 64}\n"})
    r = anyio.run(Sandbox(Host.at(root), task_id="t").call, "parse_config", {"path": "/c.yaml"})
    assert r.ok and [e["value"] for e in r.data["entries"]] == [2**64 - 1, -(2**63), 2**64 - 1]


def test_runtime_manifests_past_the_limits_have_no_documents() -> None:
    assert load_yaml(f"services:\n  a:\n    x: {BIG}\n") == []
    assert load_yaml("x: " + "[" * 100_000 + "\n") == []
    assert load_yaml("x: " + "1:" * 100_000 + "1\n") == []
    assert load_yaml("a: 1\n---\nb: [\n")[0]["a"] == 1  # before a syntax error: kept


def test_container_listings_past_the_limits_are_empty() -> None:
    assert parse_ps("[" * 100_000) == []
    assert parse_ps('{"Names": "a", "Size": ' + "9" * 5000 + "}") == []
    assert parse_ps(f'{{"Names": "a", "Size": {BIG}}}') == []
    assert parse_ps('{"Names": "a", "Command": "vllm"}')[0]["name"] == "a"


def test_the_limits_themselves() -> None:
    with pytest.raises(LimitError, match="nested deeper than 64"):
        loads_json("[" * 65 + "]" * 65)
    assert loads_json("[" * 64 + "]" * 64)
    with pytest.raises(LimitError, match="more than 100 YAML aliases"):
        check_yaml("a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n")
