"""The vocabulary of the key-name rules: which names say "secret", which values are benign
placeholders, and what a credential-looking word is. Shared by the text nets
(``__init__.py``), the line-structured passes (``_blocks.py``) and the process views."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import re2

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)

# The key must *end* in the secret word: HF_TOKEN, db_password, aws_secret_access_key,
# FERNET_KEY; not bos_token_id, max_tokens, bypass, existingSecret (a Secret's *name*).
_WORDS = (
    # not nginx's proxy_pass family, bypass, compass
    r"(?<!by)(?<!com)(?<!sur)(?<!proxy_)(?<!uwsgi_)(?<!fastcgi_)(?<!grpc_)(?<!scgi_)"
    r"(?<!memcached_)pass(?:word|wd|phrase)?s?|pwd|"
    r"(?<!existing)secrets?|token|(?:api|auth|access|refresh|bearer|hf|secret)[_\-]?tokens|"
    r"api[_\-]?keys?|apikeys?|credentials?|masterauth|"
    r"(?:access|private|auth|session|secret|encryption|decryption|signing|master|shared|jwt|"
    r"cookie|license|hmac|fernet|crypt|encrypt)[_\-.]?keys?|client[_\-]?secret|"
    # short words only as a whole word or after a separator: --pw, ADMIN_PIN, hmac; not spin
    r"(?:(?<![A-Za-z0-9])|(?<=[_\-.]))(?:pw|pin|hmac|salt|auth|psk|creds|cookie)"
)
# Any other *_KEY / *-key / camelCase *Key (APP_KEY, WANDB_KEY, openaiKey) is secret only
# when its value looks like a credential: dispatch_key: "CUDA" and sort_key: name stay.
_WEAK = r"(?<=[_\-.])keys?|(?-i:(?<=[a-z0-9])Keys?)"
_END = r"(?:[_\-]\d+|[_\-]base)?(?![A-Za-z0-9_]))"
STRONG_KEY = rf"(?:[A-Za-z0-9_.\-]*(?:{_WORDS}){_END}"
SECRET_KEY = rf"(?:[A-Za-z0-9_.\-]*(?:{_WORDS}|{_WEAK}){_END}"
STRONG_NAME = re.compile(rf"(?i){STRONG_KEY}")
KEY_NAME = re.compile(rf"(?i){SECRET_KEY}")
# A benign value that only looks secret: placeholders, booleans, numbers and ranges,
# references, paths.
BENIGN_VALUE = re.compile(
    r"(?i)^(?:|true|false|yes|no|none|null|~|empty|[\d.]+|\d+(?:[-,:]\d+)+|\*+|<[^>]*>|"
    r"\[[A-Z_]+\]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|"
    # references, not values: ${{ secrets.X }}, {{ vault_x }}, $(cat file), os.environ["X"],
    # os.getenv("X"), process.env.X, relative and home paths
    r"\$\{\{.*|\{\{.*|\$\(.*|[\w.]*environ\[[\"'][\w.\-]*[\"']\]|"
    r"[\w.]*(?:getenv|environ\.get|\.get|env)\(\s*[\"'][\w.\-]*[\"']\s*\)|process\.env\.\w+!?|"
    r"\.{1,2}/\S*|~/\S*|"
    r"\[REDACTED[^\]]*\]|[A-Za-z0-9_\-/+]*EXAMPLE[A-Za-z0-9_\-/+]*|/[^\s]*)$"
)
JOIN = "\ue000"  # a private-use character standing for a backslash-newline
# A YAML block scalar's header: |, >-, |2, >2+, |-2
BLOCK_HEADER = r"[|>](?:[-+]?\d?|\d[-+]?)"
# Short flags that take a password in common tools (mysql -pV, sshpass/docker login -p V,
# redis-cli -a V, -P V, -k V)
SHORT_PASSWORD_FLAG = r"-[pPak]"


def quoted(value: str, mark: str = "[REDACTED:secret]") -> str:
    """``mark`` in place of ``value``, inside the quotes ``value`` had."""
    quote = value[:1] if value[:1] in ("\"", "'") else ""
    return f"{quote}{mark}{quote}"


def credential_value(value: str) -> bool:
    """Whether a value under a mere ``*_key`` name is hidden: it looks like a credential."""
    return env_secret(value) or credential_like(value)


def credential_like(value: str, run: int = 0) -> bool:
    """Whether a bare word can only be a credential: 8+ characters mixing upper case, lower
    case and digits, not a path, URL, address or port mapping (``-p 8000:8000``, ``mkdir -p
    ckpt2024``, ``git show -p 1a2b3c`` stay). ``run``: also needs an unbroken run of that
    many letters and digits (a token, not a model name like Llama-3.1-8B-Instruct).

    >>> credential_like("Qx7Lm2Np9Rt4"), credential_like("ckpt2024"), credential_like("8000:80")
    (True, False, False)
    """
    return (len(value) >= 8 and not any(c in value for c in "/:@\\") and
            re.search(r"[A-Z]", value) is not None and re.search(r"[a-z]", value) is not None
            and re.search(r"\d", value) is not None and not BENIGN_VALUE.match(value)
            and (not run or re.search(rf"[A-Za-z0-9]{{{run},}}", value) is not None))


def env_secret(val: str) -> bool:
    """A dotenv value that looks like a credential whatever its key is called: 16+
    characters with letters and digits and an unbroken run of 16 (a token, a hash), not a
    path, URL or placeholder. Model names and image tags break into short runs and stay."""
    return (len(val) >= 16 and re.search(r"[A-Za-z]", val) is not None
            and re.search(r"\d", val) is not None and "://" not in val
            and re.search(r"[A-Za-z0-9+=_]{16,}", val) is not None
            and not BENIGN_VALUE.match(val))


# A cheap first look, in RE2 (one automaton pass) for the passes whose Python pattern tries
# the key rule at every line or word start: a secret word followed by the shape they need.
WORD_HINT = r"(?:pass|pwd|secret|token|key|cred|auth|pw|pin|salt|hmac|psk|cookie)"


def hint(shape: str) -> re2._Regexp:
    """An RE2 pattern: a secret word, the rest of its key, then ``shape``."""
    return re2.compile(rf"(?i){WORD_HINT}[\w.\-]*[\"'\]]*{shape}")


def hinted(gate: re2._Regexp, text: str) -> bool:
    """Whether ``gate`` finds its shape (always True for non-ASCII text, where RE2's case
    folding differs from Python's: the full pass then decides)."""
    return not text.isascii() or gate.search(text) is not None


def assignment(m: re.Match[str]) -> str:
    """The replacement for a match with groups key, sep, q and val: the value hidden, the
    key, separator and opening quote kept, unless the value is a benign placeholder or the
    key is only a ``*_key`` name and the value does not look like a credential."""
    val = m.group("val")
    bare = val.replace(JOIN, "")
    if (BENIGN_VALUE.match(bare) or BENIGN_VALUE.match(bare.rstrip(",;)"))) and \
            not numeric_secret(m.group("key").strip("\"'-]"), bare):  # api_key=None,
        return m.group(0)
    if not _strong(m.group("key").strip("\"'-]")) and not credential_value(val):
        return m.group(0)  # a *_key name (dispatch_key: "CUDA"): only a credential-like value
    # Keep the joined line breaks so the text keeps its line count.
    return (f"{m.group('key')}{m.group('sep')}{m.group('q') or ''}[REDACTED:secret]"
            + "\\\n" * val.count(JOIN))


_NUMERIC_NAME = re.compile(r"(?i)(?:pass(?:word|wd|phrase|code)?|pwd|pw|pin|secret)s?$")


def numeric_secret(name: str, value: str) -> bool:
    """A number under a name that says secret by itself (``PASSWORD=123456``, ``admin_pin:
    0000``) is a numeric password or PIN, not a setting: withheld. Under any other name
    (a token's count, a salt, a ``*_key``), or with a decimal point, it stays a number.

    >>> numeric_secret("DB_PASSWORD", "123456"), numeric_secret("sort_key", "2")
    (True, False)
    """
    digits = value.rstrip(",;)")
    # only names of a password or PIN: a number under `token` is a count (SGLang logs
    # `#token: 1017318`), a salt's is not a secret by itself (round 3's `hash_salt: 42`)
    return digits.isdigit() and digits.isascii() and _strong(name) and \
        _NUMERIC_NAME.search(name) is not None


@lru_cache(maxsize=4096)
def _strong(name: str) -> bool:
    """Whether a key names a secret by itself (not only by a *_key ending); names repeat."""
    return STRONG_NAME.fullmatch(name) is not None


def credential_assignment(run: int) -> Callable[[re.Match[str]], str]:
    """:func:`assignment` for a value that is hidden only when it looks like a credential."""
    def sub(m: re.Match[str]) -> str:
        return assignment(m) if credential_like(m.group("val").rstrip("\"';,"), run) \
            else m.group(0)
    return sub
