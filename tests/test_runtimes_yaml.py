"""YAML with line numbers (``_hostmodel/runtimes/_yaml.py``), called directly.

Expected, written before running, from the YAML spec and PyYAML's documented behaviour:
- PyYAML's marks count lines from 0; a citation's line counts from 1. A block mapping starts
  at its first key; a flow mapping (``{…}``) at its ``{``. Each key is on its own line.
- ``---`` starts a new document; ``load_all`` yields the documents before a syntax error and
  then raises, so the documents before it are kept and the rest are lost.
- PyYAML's SafeLoader builds a timestamp with ``datetime``, which raises ValueError for a
  date that does not exist (month 13): the documents before it are kept.
- An alias is a reference to its anchored node: it nests that node where it appears, so a
  document may nest deeper than its text does. agentkit's limit (``_bounded.MAX_DEPTH``, 64
  nested collections) holds for what the document is, not for its text; a text past a limit
  has no documents at all (a crafted file, not a partly read one).
- A node that contains an alias of itself (``&x [*x]``) is refused by the YAML libraries the
  files' consumers use (go-yaml, in Kubernetes and Compose: "anchor 'x' value contains
  itself"), so that document and what follows it are not read; PyYAML's SafeLoader builds a
  list that contains itself unless its mappings construct their values deeply (inside a
  mapping; a document that is a top-level sequence still gets one: not pinned).
"""

from __future__ import annotations

import pytest

from agentkit._bounded import MAX_DEPTH
from agentkit._hostmodel.runtimes._yaml import load_yaml


def _flow(n: int, inner: str = "1") -> str:
    return "{a: " * n + inner + "}" * n


def test_each_mapping_and_key_has_its_line() -> None:
    docs = load_yaml("# a comment\na: 1\nb:\n  c: 2\n\n  d: {e: 3,\n      f: 4}\n")
    doc = docs[0]
    assert (doc["__line__"], doc["__keys__"]) == (2, {"a": 2, "b": 3})
    assert (doc["b"]["__line__"], doc["b"]["__keys__"]) == (4, {"c": 4, "d": 6})
    assert (doc["b"]["d"]["__line__"], doc["b"]["d"]["__keys__"]) == (6, {"e": 6, "f": 7})
    assert {k: v for k, v in doc["b"]["d"].items() if not k.startswith("__")} == {"e": 3, "f": 4}


def test_items_of_a_sequence_and_later_documents() -> None:
    docs = load_yaml("kind: List\nitems:\n  - name: a\n  - name: b\n---\nkind: Pod\n")
    assert [i["__line__"] for i in docs[0]["items"]] == [3, 4]
    assert (docs[1]["__line__"], docs[1]["__keys__"]) == (6, {"kind": 6})
    assert len(docs) == 2


def test_keys_are_strings() -> None:
    # a YAML 1.1 integer key is an int to PyYAML; settings are looked up by name
    doc = load_yaml("1: a\nb: 2\n")[0]
    assert doc["1"] == "a"
    assert doc["__keys__"] == {"1": 1, "b": 2}


def test_what_precedes_an_error_is_kept() -> None:
    assert load_yaml("a: 1\n---\nb: [\n") == [{"a": 1, "__line__": 1, "__keys__": {"a": 1}}]
    assert load_yaml("a: 1\n---\nb: 2024-13-45\n") == [
        {"a": 1, "__line__": 1, "__keys__": {"a": 1}}]
    assert load_yaml("b: [\n") == []
    assert load_yaml("") == []


def test_a_text_past_a_limit_has_no_documents_even_before_it() -> None:
    assert load_yaml("a: 1\n---\nb: " + "9" * 200 + "\n") == []
    assert load_yaml("a: 1\n---\nb: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
                     + "\n") == []


@pytest.mark.parametrize(("outer", "inner", "loads"), [
    (31, 32, True),  # the document itself and 63 more: 64 mappings
    (32, 32, False),  # 65
    (63, 0, True),
    (0, 63, True),
])
def test_nesting_through_an_alias_counts(outer: int, inner: int, loads: bool) -> None:
    """``y`` nests ``outer`` mappings around an alias of ``inner`` mappings; each text alone
    nests far less than the limit."""
    text = f"x: &d {_flow(inner)}\ny: {_flow(outer, '*d')}\n"
    assert bool(load_yaml(text)) is loads


@pytest.mark.parametrize("text", ["b: &x [*x]\n", "b: &x {c: *x}\n", "b: [&x [a, *x]]\n"])
def test_a_node_that_contains_itself_is_refused(text: str) -> None:
    assert load_yaml("a: 1\n---\n" + text + "---\nc: 2\n") == [
        {"a": 1, "__line__": 1, "__keys__": {"a": 1}}]
