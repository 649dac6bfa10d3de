"""The redactor's pre-check runs in RE2 on ASCII text (Python's engine was 80-240 us per
400-character line, on every string a tool returns). It may fire more often than Python's,
never less: a text it lets through unredacted is a text Python's net would have let through.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentkit._sandbox._redact import _TRIGGER, _TRIGGER_ASCII, redact

from ..fuzzing import FUZZ
from .secrets_data import SECRETS

# Pieces of every alternative, in both cases, and the characters where the two engines'
# classes differ (\v and \x1c-\x1f are spaces to Python, not to RE2).
_PIECES = st.sampled_from([
    "sk-", "HF_", "api_org_", "ghp_", "GHS_", "github_pat_", "glpat-", "xoxb", "AKIA", "asia",
    "AIza", "k_live_", "eyJ", "://", "Authoriz", "BEARER", "Pass", "secret", "TOKEN", "key",
    "credential", "pwd", "hvs.", "HVB.", '"auth"', "Machine", "db:5432:app:me:pw", "*:*",
    ":", "\n", " ", "\t", "\v", "\x1c", "\x1f", "#", "5432", "*", "a", "Z", "_", "-", ".",
])
_ASCII = st.lists(st.one_of(_PIECES, st.text(st.characters(max_codepoint=127), max_size=6)),
                  max_size=12).map("".join)


@FUZZ
@given(_ASCII)
def test_on_ascii_the_fast_net_fires_wherever_the_full_one_does(text: str) -> None:
    assert text.isascii()
    if _TRIGGER.search(text):
        assert _TRIGGER_ASCII.search(text), text


def test_every_sample_secret_is_still_redacted_through_the_fast_net() -> None:
    leaked = [s.fmt for s in SECRETS if s.text.isascii()
              for f in s.fragments if f in redact(s.text)]
    assert not leaked, leaked


def test_non_ascii_text_keeps_the_full_net() -> None:
    # Python's IGNORECASE folds the dotless i onto i, and its \d reads Unicode digits: the
    # full net redacts these; RE2 would not even have fired.
    key = "credentıal=abcdefghij"
    assert not _TRIGGER_ASCII.search(key) and "abcdefghij" not in redact(key)
    pgpass = "db:５４３２:app:me:hunter22"
    assert not _TRIGGER_ASCII.search(pgpass) and "hunter22" not in redact(pgpass)
