"""The catalog planner's keyword match, differential against the regular expression it
replaces: ``re.search(r"(?<![a-z0-9])" + re.escape(key) + r"(?![a-z0-9])", text)``, on
generated keys and texts over an alphabet that holds the boundary cases (ASCII letters and
digits, which join a word; spaces, punctuation, upper case and non-ASCII letters, which do
not, since the class is ASCII lower case and digits only)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit._catalog._planner import has_word

ALPHABET = "ab0 -./é_Z9"
texts = st.text(alphabet=ALPHABET, max_size=30)


def by_regex(key: str, text: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])", text) is not None


@settings(max_examples=3000, deadline=None)
@given(key=st.text(alphabet=ALPHABET, max_size=4), text=texts)
def test_has_word_is_the_regex(key: str, text: str) -> None:
    assert has_word(key, text) == by_regex(key, text)


@settings(max_examples=1000, deadline=None)
@given(before=texts, key=st.text(alphabet=ALPHABET, min_size=1, max_size=4), after=texts)
def test_has_word_is_the_regex_when_the_key_is_there(before: str, key: str, after: str) -> None:
    text = before + key + after  # the key occurs at least once: only its edges decide
    assert has_word(key, text) == by_regex(key, text)


def test_examples_written_by_hand() -> None:
    assert has_word("fp8", "is fp8 on?") and has_word("fp8", "fp8")
    assert not has_word("fp8", "fp80 is not") and not has_word("kv", "kvcache")
    assert has_word("kv", "kv-cache") and has_word("nccl", "é nccl é")
    assert has_word("", "") and not has_word("", "ab")
