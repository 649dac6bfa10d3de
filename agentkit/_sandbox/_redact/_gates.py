"""Cheap tests that skip a redaction pattern on a text it cannot match, each exact: the
pattern's every match holds what the test looks for, so a text without it comes back from
the pattern unchanged. Python's engine tries such a pattern at every position of every text
that passes the trigger net (about 15 ms of an ``agentkit ask`` for these three).

Word tests run on ASCII text only, where IGNORECASE folds ASCII letters to ASCII letters;
elsewhere Unicode case folding (the Kelvin sign for k, the dotless i, the long s) lets a
pattern match what no ASCII word test sees, so any other text gets the pattern.
"""

from __future__ import annotations

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)

# _TRIPLE: a secret key, blanks, `=`, blanks, then three quotes (the same \s as its own)
TRIPLE = re.compile(r"""=\s*(?:"{3}|'{3})""")
# _HEADER's names each hold one of these (x-api-key, private-token, proxy-authorization,
# x-honeycomb-team, …); _COOKIE's `cookie` / `set-cookie` hold "cookie"
HEADER_WORDS = ("key", "token", "authoriz", "honeycomb")
COOKIE_WORDS = ("cookie",)


def may_hold(text: str, words: tuple[str, ...]) -> bool:
    """False only when ``text`` is ASCII and holds none of ``words`` in any letter case."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(w in low for w in words)


def may_be_triple(text: str) -> bool:
    """Whether _TRIPLE can match: a triple quote after `=` and blanks."""
    return ('"""' in text or "'''" in text) and TRIPLE.search(text) is not None


# _cli._POSITIONAL's alternatives each hold one of these words (`IDENTIFIED BY`, `-passin
# pass:`, `htpasswd`, `echo`, `add-authtoken`, `wandb login`, `vault login`, `--with-token`),
# or `config set` / `configure set` (`config` alone is in most Python sources)
POSITIONAL_WORDS = ("identified", "-pass", "htpasswd", "echo", "authtoken", "wandb", "vault",
                    "--with-token")
_CONFIG_SET = re.compile(r"config(?:ure)?\s+set")


def may_be_positional(text: str) -> bool:
    """False only when ``text`` is ASCII and none of _POSITIONAL's alternatives can start."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(w in low for w in POSITIONAL_WORDS) or (
        "config" in low and _CONFIG_SET.search(low) is not None)
