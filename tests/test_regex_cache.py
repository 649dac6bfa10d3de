"""``agentkit._regex``: ``re`` with compiled programs kept on disk.

What must hold, from what the module claims: a pattern it returns, cold (compiled and stored)
or warm (built from the stored entry), equals what ``re.compile`` returns for the same
arguments, and patterns compare equal only when text, flags and program are the same
(CPython's ``pattern_richcompare``); groups and group names are the same; an entry that is not
the user's own file writable by no one else, or that is damaged, is never used; with the cache
off nothing is written. Differential against the real ``re`` on generated patterns.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit import _regex
from agentkit._sandbox import _procs
from agentkit._sandbox._redact import _blocks, _cli, _formats, _k8s, _keys

REDACTION = [_procs, _blocks, _cli, _formats, _k8s, _keys,
             sys.modules["agentkit._sandbox._redact"]]


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("AGENTKIT_CACHE_DIR", str(where))
    return where


def _same(ours: re.Pattern[str], real: re.Pattern[str]) -> None:
    assert ours == real  # text, flags and the compiled program
    assert (ours.pattern, ours.flags, ours.groups, dict(ours.groupindex)) == \
        (real.pattern, real.flags, real.groups, dict(real.groupindex))


_ATOMS = st.sampled_from([
    "a", "Z", "0", r"\d", r"\w", r"\s", r"\b", ".", "[a-z]", "[^\\n\"']", "é", "ß", "(?i:k)",
    "(?P<name>x)", "(?:ab|cd)", "(?=y)", "(?<!q)", "^", "$", r"\.", "(x)(?(1)y|z)", "K"])
_QUANT = st.sampled_from(["", "*", "+", "?", "{2}", "{1,3}", "*?", "+?"])
_PIECE = st.tuples(_ATOMS, _QUANT).map("".join)
_PATTERNS = st.lists(_PIECE, min_size=1, max_size=8).map("".join) | st.lists(
    st.lists(_PIECE, min_size=1, max_size=3).map("".join), min_size=2, max_size=4).map("|".join)
_FLAGS = st.sets(st.sampled_from([re.I, re.M, re.S, re.X, re.A])).map(
    lambda fs: sum((int(f) for f in fs), 0))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=_PATTERNS, flags=_FLAGS)
def test_cold_and_warm_patterns_are_the_ones_re_compiles(cache: Path, pattern: str,
                                                         flags: int) -> None:
    try:
        real = re.compile(pattern, flags)
    except re.error:
        with pytest.raises(re.error):
            _regex.compile(pattern, flags)
        return
    _same(_regex.compile(pattern, flags), real)  # cold: compiled, stored
    _same(_regex.compile(pattern, flags), real)  # warm: built from the entry


def test_the_redaction_rules_are_the_patterns_re_compiles(cache: Path) -> None:
    seen = 0
    for module in REDACTION:
        for value in vars(module).values():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                flags = value.flags & ~re.UNICODE  # as given: re adds UNICODE to text
                _same(value, re.compile(value.pattern, flags))
                _same(_regex.compile(value.pattern, flags), re.compile(value.pattern, flags))
                _same(_regex.compile(value.pattern, flags), re.compile(value.pattern, flags))
                seen += 1
    assert seen >= 80  # not vacuous: the rules are there


def test_a_hit_is_built_from_the_entry(cache: Path) -> None:
    first = _regex.compile(r"(?P<k>token)=\S+", re.I)
    entries = list(cache.glob("*.re"))
    assert len(entries) == 1
    again = _regex.compile(r"(?P<k>token)=\S+", re.I)
    assert again is not first and again == first  # a new object, from the file


def test_entries_writable_by_others_or_damaged_are_not_used(cache: Path) -> None:
    pattern = r"secret\s*[:=]\s*(\S+)"
    _regex.compile(pattern)
    (entry,) = cache.glob("*.re")
    # a program that matches something else, written where the entry was
    other = _regex._load(entry.name, pattern)
    assert other is not None  # the entry as written loads
    os.chmod(entry, 0o666)
    assert _regex._load(entry.name, pattern) is None  # writable by others: not loaded
    os.chmod(entry, 0o600)
    entry.write_bytes(entry.read_bytes()[:-3])
    assert _regex._load(entry.name, pattern) is None  # truncated
    entry.write_bytes(b"\x00not marshal")
    assert _regex._load(entry.name, pattern) is None
    _same(_regex.compile(pattern), re.compile(pattern))  # compiled afresh


def test_a_refused_program_is_not_used(cache: Path) -> None:
    import marshal

    pattern = "abc"
    _regex.compile(pattern)
    (entry,) = cache.glob("*.re")
    made_for, flags, final, code, groups, groupindex, indexgroup = marshal.loads(
        entry.read_bytes())
    entry.write_bytes(marshal.dumps((made_for, flags, final, [9999, *code], groups, groupindex,
                                     indexgroup)))
    assert _regex._load(entry.name, pattern) is None  # _sre checks the program
    _same(_regex.compile(pattern), re.compile(pattern))


def test_off_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTKIT_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # the default, were it on
    _same(_regex.compile("off(line)?"), re.compile("off(line)?"))
    assert not (tmp_path / "xdg").exists()


def test_what_re_handles_with_side_effects_is_left_to_re(cache: Path) -> None:
    assert _regex.compile(b"bytes") == re.compile(b"bytes")
    _regex.compile("x", re.DEBUG)  # prints the program, as re does
    assert not list(cache.glob("*.re"))


def test_an_entry_stored_for_another_pattern_is_not_used(cache: Path) -> None:
    """Red team 4 (F7): entries swapped between names were loaded under the wrong key, and a
    redaction pattern then lacked the groups its code asks for (IndexError in the sandbox).
    An entry names the pattern and flags it was made for; any other is a miss."""
    a, b = r"(?P<val>secret)=(\S+)", r"token:(\S+)"
    _regex.compile(a)
    _regex.compile(b, re.I)
    entries = sorted(cache.glob("*.re"))
    assert len(entries) == 2
    first, second = (e.read_bytes() for e in entries)
    entries[0].write_bytes(second)
    entries[1].write_bytes(first)
    _same(_regex.compile(a), re.compile(a))
    _same(_regex.compile(b, re.I), re.compile(b, re.I))
    assert _regex.compile(a).groupindex == {"val": 1}


def test_a_fifo_in_the_cache_is_a_miss_not_a_hang(cache: Path) -> None:
    """Red team 4 (F6): a FIFO where an entry was made every agentkit process block in
    open(2) waiting for a writer. Special files are refused before they are read."""
    import threading

    pattern = r"fifo-(\d+)"
    _regex.compile(pattern)
    (entry,) = cache.glob("*.re")
    entry.unlink()
    os.mkfifo(entry, 0o600)
    done: list[re.Pattern[str]] = []
    t = threading.Thread(target=lambda: done.append(_regex.compile(pattern)), daemon=True)
    t.start()
    t.join(10)
    if not done:  # unblock the thread so the test process can end, then fail
        with open(os.open(entry, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        pytest.fail("reading a FIFO cache entry blocked")
    _same(done[0], re.compile(pattern))
