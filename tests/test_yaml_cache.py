"""The catalog's parsed-YAML cache (``_catalog._load._parsed``) gives what the loader gives,
cold and warm: the same values of the same types (repr equal), the same errors; an entry
for another text, or a damaged one, is parsed afresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentkit._catalog import _load
from agentkit._catalog._template import _LOADER


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _reference(text: str) -> tuple[str, Any]:
    try:
        got = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        return "error", str(exc)
    return "value", repr(got)


def _ours(text: str) -> tuple[str, Any]:
    try:
        got = _load._parsed(text)
    except yaml.YAMLError as exc:
        return "error", str(exc)
    return "value", repr(got)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10),
                     st.floats(allow_nan=False), st.binary(max_size=4))
_DATA = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=5), inner, max_size=3), max_leaves=10)
_TEXTS = st.one_of(_DATA.map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
                   st.text(max_size=40))


@settings(max_examples=200, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=_TEXTS)
@example(text="a: &x [1, 2]\nb: *x\n")
@example(text="when: 2024-01-02\nat: 2024-01-02T03:04:05Z\n")
@example(text="z: -0.0\nn: .nan\ni: .inf\ns: !!set {a, b}\nb: !!binary aGk=\n")
@example(text="key: [unclosed\n")
@example(text="one: 1\none: 2\n")
def test_parsed_is_what_the_loader_gives_cold_and_warm(text: str) -> None:
    want = _reference(text)
    assert _ours(text) == want  # cold: parsed, maybe stored
    assert _ours(text) == want  # warm: from the entry where one was stored


def test_an_entry_for_another_text_or_damaged_is_parsed_afresh(_cache: Path) -> None:
    _load._parsed("a: 1\n")
    _load._parsed("a: 2\n")
    entries = sorted(_cache.glob("*.yaml"))
    assert len(entries) == 2
    second = entries[1].read_bytes()
    entries[0].write_bytes(second)  # swapped: names another text
    entries[1].write_bytes(b"\x00damaged")
    assert _load._parsed("a: 1\n") == {"a": 1}
    assert _load._parsed("a: 2\n") == {"a": 2}
