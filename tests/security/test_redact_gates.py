"""The cheap gates in front of three redaction patterns (``_redact/_gates.py``) are exact: on
any text a gate lets the pattern skip, the pattern's substitution would have returned the
text unchanged. Checked against the patterns themselves on generated text: header and cookie
names in any letter case, the non-ASCII letters Unicode case folding matches to ASCII ones
(Kelvin sign, dotless i, long s), Unicode spaces around `=`, triple quotes of both kinds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentkit._sandbox._redact import _COOKIE, _HEADER, _TRIPLE
from agentkit._sandbox._redact._cli import _POSITIONAL
from agentkit._sandbox._redact._gates import (
    COOKIE_WORDS,
    HEADER_WORDS,
    may_be_positional,
    may_be_triple,
    may_hold,
)

from ..fuzzing import FUZZ

_NAMES = ["x-api-key", "X-Auth-Token", "api-key", "PRIVATE-TOKEN", "x-vault-token",
          "x-goog-api-key", "x-amz-security-token", "Proxy-Authorization", "X-Honeycomb-Team",
          "dd-api-key", "x-dd-api-key", "x-sf-token", "signalfx-token",
          "lightstep-access-token", "x-access-token", "cookie", "Set-Cookie", "COOKIE"]
_FOLDS = ["\u212a", "\u0131", "\u017f", "\u0130", "\u212b"]  # K, ı, ſ, İ, Å


def _variant(name: str, data: st.DataObject) -> str:
    out = []
    for ch in name:
        pick = data.draw(st.sampled_from(["lower", "upper", "fold"]))
        if pick == "fold" and ch in "kis":
            out.append({"k": "\u212a", "i": "\u0131", "s": "\u017f"}[ch])
        else:
            out.append(ch.upper() if pick == "upper" else ch.lower())
    return "".join(out)


_PIECES = st.sampled_from([
    ":", "=", " ", "\t", "\u00a0", "\u2003", "\n", '"', "'", '"""', "'''", "password",
    "api_key", "TOKEN", "Authorization", "abcdefgh12345678", "sid=abc123", ";", "#", *_FOLDS])


@FUZZ
@given(st.data())
def test_a_skipped_text_is_one_the_pattern_leaves_unchanged(data: st.DataObject) -> None:
    header = st.tuples(st.sampled_from(_NAMES).map(lambda n: _variant(n, data)),
                       st.sampled_from([": ", "=", " ", '": "', "\t:\t"]),
                       st.sampled_from(["abcdefgh12345678", "sid=abc123def", "x"])).map("".join)
    parts = data.draw(st.lists(st.one_of(_PIECES, header, st.text(max_size=5)), max_size=8))
    text = "".join(parts)
    if not may_hold(text, HEADER_WORDS):
        assert _HEADER.sub(r"\1[REDACTED:secret]", text) == text, text
    if not may_hold(text, COOKIE_WORDS):
        assert _COOKIE.sub(r"\1[REDACTED:cookie]", text) == text, text
    if not may_be_triple(text):
        assert _TRIPLE.search(text) is None, text


def test_the_gates_let_the_real_cases_through() -> None:
    for name in _NAMES:  # each name the patterns know, as a header with a value
        cookie = "cookie" in name.lower()
        line = f"{name}: {'sid=' if cookie else ''}abcdefgh12345678"
        assert (_COOKIE if cookie else _HEADER).search(line), line
        assert may_hold(line, COOKIE_WORDS if cookie else HEADER_WORDS), line
    folded = "proxy-author\u0131zation: abcdefgh12345678"  # dotless i: IGNORECASE matches
    assert _HEADER.search(folded) and may_hold(folded, HEADER_WORDS)
    assert may_hold("X-Api-Key: abcdefgh12345678", HEADER_WORDS)
    assert may_hold("Set-Cookie: sid=abcdef", COOKIE_WORDS)
    assert may_hold("\u212aEY", HEADER_WORDS)  # not ASCII: the pattern decides
    for quote in ('"""', "'''"):
        text = f"password =\u2003{quote}\nhunter2\n{quote}"
        assert _TRIPLE.search(text) and may_be_triple(text), text
    assert not may_be_triple('doc = 1\n"""a docstring"""')
    assert _TRIPLE.search('doc = 1\n"""a docstring"""') is None


# one line of each documented form _POSITIONAL redacts (_cli.py's comment lists them)
_POSITIONAL_LINES = [
    "CREATE USER app IDENTIFIED BY 'Sup3rS3cret'", "openssl rsa -passin pass:Sup3rS3cret",
    "openssl x -passout  pass:Sup3rS3cret", "htpasswd -b -c /etc/htpass admin Sup3rS3cret",
    "echo Sup3rS3cret | chpasswd", "echo -n 'Sup3rS3cret' | docker login --password-stdin",
    "echo hf_Sup3rS3cret > ~/.cache/huggingface/token",
    "ngrok config add-authtoken Sup3rS3cret99", "ngrok authtoken Sup3rS3cret99",
    "wandb login Sup3rS3cret99", "vault  login Sup3rS3cret99", "gh auth login --with-token "
    "Sup3rS3cret99", "aws configure set aws_secret_access_key Sup3rS3cret",
    "ngc config\tset apikey Sup3rS3cret"]
_POSITIONAL_WORDS = ["IDENTIFIED BY '", "-passin pass:", "-PASSOUT pass:", "htpasswd -b ",
                     "Echo ", "| chpasswd", "add-AuthToken ", "WandB login ", "vault login ",
                     "--with-token ", "configure set ", "Config set ", "config", "set",
                     "api_key", "identi\u0131fied", "htpa\u017fswd", "Sup3rS3cret99"]


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(_POSITIONAL_WORDS), st.sampled_from(
    [" ", "\t", "\n", "'", '"', "|", ">", "x", "\u00a0"]), st.text(max_size=4)), max_size=12))
def test_a_text_the_positional_gate_skips_is_one_the_pattern_leaves(parts: list[str]) -> None:
    text = "".join(parts)
    if not may_be_positional(text):
        assert _POSITIONAL.search(text) is None, text


def test_the_positional_gate_lets_every_documented_form_through() -> None:
    for line in _POSITIONAL_LINES:
        for text in (line, line.upper(), f"#!/bin/sh\n{line}\n"):
            assert may_be_positional(text), text
            assert _POSITIONAL.search(text), text
    assert may_be_positional("htpa\u017fswd -b f u Sup3rS3cret")  # not ASCII: the pattern
    assert not may_be_positional("from vllm.config import VllmConfig\nconfig.settings = 1")


def test_sql_identified_by_hides_the_password() -> None:
    """MySQL/MariaDB/PostgreSQL `CREATE|ALTER USER … IDENTIFIED BY 'pw'` (and Oracle's
    unquoted form is not claimed): the quoted literal is the password, as the comment in
    _cli.py documents. The pattern had a backspace byte where `\\b` was meant, so no SQL
    password was ever hidden."""
    from agentkit._sandbox._redact import redact
    for line, secret in [("CREATE USER app IDENTIFIED BY 'Sup3rS3cret';", "Sup3rS3cret"),
                         ("ALTER USER 'root'@'localhost' identified by \"hunter2hunter2\";",
                          "hunter2hunter2"),
                         ("mysql -e \"CREATE USER u IDENTIFIED BY 'pw9pw9pw9'\"", "pw9pw9pw9")]:
        out = redact(line)
        assert secret not in out and "[REDACTED" in out, out
    # a word that merely ends in "identified" is not the SQL clause
    assert redact("unidentified by 'design'") == "unidentified by 'design'"
