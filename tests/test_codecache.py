"""dataclasses' generated methods from the code cache (``agentkit._codecache``) are the
methods ``dataclasses`` makes itself: the same code, the same behaviour, cold and warm; a
damaged entry is a miss; ``dataclasses`` is left as it was found."""

from __future__ import annotations

import dataclasses
import keyword
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit import _codecache
from agentkit._codecache import compile_text, compiled_dataclasses

_METHODS = ("__init__", "__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__",
            "__hash__", "__setattr__", "__delattr__")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and not n.startswith("__"))
_DEFAULTS = st.sampled_from(["none", "int", "str", "factory"])
_SPEC = st.tuples(
    st.lists(st.tuples(_NAMES, _DEFAULTS, st.sampled_from([int, str, "list[int]", Any])),
             max_size=5, unique_by=lambda f: f[0]),
    st.fixed_dictionaries({"frozen": st.booleans(), "eq": st.booleans(),
                           "order": st.booleans(), "unsafe_hash": st.booleans(),
                           "kw_only": st.booleans(), "slots": st.booleans(),
                           "repr": st.booleans()}))


def _make(spec: Any) -> type:
    fields, flags = spec
    if flags["order"] and not flags["eq"]:
        flags = {**flags, "order": False}
    ns: dict[str, Any] = {"__annotations__": {}}
    seen_default = False
    for name, default, kind in fields:
        ns["__annotations__"][name] = kind
        if default == "int":
            ns[name], seen_default = 3, True
        elif default == "str":
            ns[name], seen_default = "x", True
        elif default == "factory":
            ns[name], seen_default = dataclasses.field(default_factory=list), True
        elif seen_default and not flags["kw_only"]:  # no default after a default
            ns[name] = None
    return dataclasses.dataclass(**flags)(type("Made", (), ns))


def _codes(cls: type) -> dict[str, Any]:
    return {m: getattr(cls.__dict__[m], "__code__", None) for m in _METHODS
            if m in cls.__dict__}


@settings(max_examples=150, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(spec=_SPEC)
def test_methods_are_the_ones_dataclasses_makes(spec: Any) -> None:
    plain = _make(spec)
    with compiled_dataclasses():
        cold = _make(spec)  # compiled here, then stored
    with compiled_dataclasses():
        warm = _make(spec)  # from the cache entry
    for made in (cold, warm):
        assert _codes(made) == _codes(plain)
        assert {m: c.co_filename for m, c in _codes(made).items() if c} == {
            m: c.co_filename for m, c in _codes(plain).items() if c}
        assert [f.name for f in dataclasses.fields(made)] == [
            f.name for f in dataclasses.fields(plain)]
    kwargs = {f.name: 1 for f in dataclasses.fields(plain) if f.init}
    for made in (cold, warm):
        a, b = plain(**kwargs), made(**kwargs)
        if spec[1]["repr"]:
            assert repr(a) == repr(b)
        assert (made(**kwargs) == b) == (plain(**kwargs) == a)


def test_code_equals_what_exec_compiles_for_dataclasses() -> None:
    """Annotations evaluated, as ``dataclasses`` (no ``__future__`` import) has them: the
    ``from __future__ import annotations`` of agentkit's modules must not leak into the
    compile."""
    args = (["self", "a:_type_a"], ["self.a=a"])
    theirs = dataclasses._create_fn("f", *args, globals={},  # type: ignore[attr-defined]
                                    locals={"_type_a": int})
    with compiled_dataclasses():
        ours = dataclasses._create_fn("f", *args, globals={},  # type: ignore[attr-defined]
                                      locals={"_type_a": int})
    assert ours.__code__ == theirs.__code__
    assert ours.__annotations__ == theirs.__annotations__ == {"a": int}
    text = "def __create_fn__(_type_a):\n def f(self, a:_type_a):\n  self.a=a\n return f"
    assert compile_text(text).co_consts[0].co_consts[2] == theirs.__code__


def test_a_damaged_entry_is_a_miss_and_dataclasses_is_left_as_found(_cache: Path) -> None:
    _cache.mkdir(mode=0o700)
    (_cache / _codecache._NAME).write_bytes(b"\x00garbage")
    os.chmod(_cache / _codecache._NAME, 0o600)
    with compiled_dataclasses():
        assert "exec" in vars(dataclasses)
        made = dataclasses.dataclass(type("P", (), {"__annotations__": {"x": int}}))
    assert "exec" not in vars(dataclasses)
    assert made(2) == made(2) and repr(made(2)).endswith("P(x=2)")
    assert _codecache._load()  # rewritten whole


def test_an_entry_others_can_write_is_not_read(_cache: Path) -> None:
    with compiled_dataclasses():
        dataclasses.dataclass(type("Q", (), {"__annotations__": {"y": str}}))
    assert _codecache._load()
    os.chmod(_cache / _codecache._NAME, 0o620)
    assert _codecache._load() == {}
