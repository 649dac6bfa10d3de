"""Secret redaction, applied to everything a tool returns before it leaves the sandbox.

Two nets: token *formats* that are secret wherever they appear (``hf_…``, ``sk-…``, PEM
blocks, JWTs …) and *assignments* whose key names a secret (``PASSWORD=…``,
``"api_key": "…"``, ``Authorization: Bearer …``). Benign look-alikes (commit SHAs, UUIDs,
AWS's documented ``…EXAMPLE`` keys) stay readable.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2

_FORMATS: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.S)),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("hf-token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    ("hf-org-token", re.compile(r"\bapi_org_[A-Za-z0-9]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("vault-token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_\-]{20,}")),
    ("docker-auth", re.compile(r"(?i)(\"auth\"\s*:\s*\")[A-Za-z0-9+/=]{8,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)(?![A-Z0-9]*EXAMPLE)[A-Z0-9]{16}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("stripe-key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]*:[^/\s@]+(?=@)")),
    ("auth-header", re.compile(
        r"(?i)(?<=authorization)([\"']?\s*[:=]\s*[\"']?)"
        r"(?:(?:bearer|basic|token|digest)\s+)?[A-Za-z0-9._~+/=\-]{8,}")),
    ("bearer", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=\-]{12,}")),
    # fixed-prefix tokens of common services (red team round 2 found them missed)
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{30,}")),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{30,}")),
    ("digitalocean-token", re.compile(r"\bdo[por]_v1_[a-f0-9]{32,}")),
    ("tailscale-key", re.compile(r"\btskey-[a-z]+-[A-Za-z0-9_\-]{10,}")),
    ("age-key", re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{40,}")),
    ("databricks-token", re.compile(r"\bdapi[a-f0-9]{32}")),
    ("slack-webhook", re.compile(r"(?<=hooks\.slack\.com/services/)[A-Za-z0-9/]{20,}")),
    ("azure-account-key", re.compile(r"(?i)(?<=AccountKey=)[A-Za-z0-9+/=]{20,}")),
    ("kube-client-key", re.compile(r"(?<=client-key-data: )[A-Za-z0-9+/=]{20,}")),
]

# The key must *end* in the secret word: HF_TOKEN, db_password, aws_secret_access_key; not
# bos_token_id or max_tokens.
_SECRET_KEY = (
    r"(?:[A-Za-z0-9_.\-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|private[_\-]?key|credentials?|auth[_\-]?key|session[_\-]?key|"
    r"client[_\-]?secret|secret[_\-]?key|"
    # short words only as a whole word or after a separator: --pw, ADMIN_PIN, hmac; not spin
    r"(?:(?<![A-Za-z0-9])|(?<=[_\-.]))(?:pw|pin|hmac|salt))"
    r"(?:[_\-]\d+|[_\-]base)?(?![A-Za-z0-9_]))"
)
# KEY=value, KEY: value, "key": "value", Environment="KEY=value"; the value is replaced. An
# unquoted value after `=` runs to whitespace (env files), after `:` to the next , ; } ]
# (JSON, YAML); inside a quoted "KEY=value" word, to the closing quote (systemd).
_ASSIGN = re.compile(
    rf"""(?ix)
    (?<![A-Za-z0-9_.\-])  # start at a word's start: keeps matching linear on long lines
    (?P<key>(?P<kq>["'])?{_SECRET_KEY}["']?)
    (?P<sep>\s*(?:(?P<eq>=)|:)\s*)
    (?P<q>["'])?
    (?P<val>(?(q)(?:\\.|[^"'\\\n])*|(?(eq)(?(kq)[^"'\n]*|[^\s"']*)|(?![{{\[|>])[^\s"',;}}\]]*)))
    """
)
# `--api-key VALUE`, `--hf-token VALUE` on a command line (the `=` form is an assignment).
_CLI_FLAG = re.compile(
    rf"(?ix)(?P<key>(?<![\w-])--?{_SECRET_KEY})(?P<sep>(?:[ \t\n]|\\\n|\ue000)+)(?P<q>[\"'])?"
    r"(?P<val>(?(q)[^\"'\n]*|(?!--|-[A-Za-z]\b)[^\s\ue000]+))"
)
# ~/.netrc lines: `machine HOST login USER password SECRET`.
_NETRC = re.compile(r"(?im)^(?=[^\n]*\b(?:machine|login)\s)([^\n]*?\bpassword\s+)\S+")
# Blanks at a line's start are [ \t], never \s: with (?m), ^\s* runs across blank lines, and
# each of n line starts tried n lines (red team round 2: 1,024 blank lines took 34 s).
_NETRC_FILE = re.compile(r"(?im)^[ \t]*machine\s")
_NETRC_LINE = re.compile(r"(?im)^([ \t]*password[ \t]+)\S+")
# A YAML block-mapping line `key: value`: the value is the rest of the line (commas and all)
# (and a log line's `, next: 1` that is another key stays)
_YAML_REST = re.compile(rf"(?im)^([ \t]*-?[ \t]*{_SECRET_KEY}[ \t]*:[ \t]+\[REDACTED:secret\])"
                        r"(?![,;]\s*[\w.\-]+\s*[:=](?:\s|$))[^\s#][^\n#]*")
# A secret key whose value is a block scalar (`api_key: >` then indented lines)
_BLOCK_KEY = re.compile(rf"(?i)^(\s*-?\s*[\"']?{_SECRET_KEY}[\"']?[ \t]*:[ \t]*)[|>][-+]?\d*\s*$")
# ~/.pgpass: host:port:database:user:password
_PGPASS = re.compile(r"(?m)^([^:\s#]+:(?:\d+|\*):[^:\s]+:[^:\s]+:)[^\s:]+$")
_JOIN = "\ue000"  # a private-use character standing for a backslash-newline
# A benign value that only looks secret: placeholders, booleans, references, paths.
_BENIGN_VALUE = re.compile(
    r"(?i)^(?:|true|false|yes|no|none|null|[\d.]+|\*+|<[^>]*>|\[[A-Z_]+\]|"
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|"
    r"\[REDACTED[^\]]*\]|[A-Za-z0-9_\-/+]*EXAMPLE[A-Za-z0-9_\-/+]*|/[^\s]*)$"
)
# Kubernetes Secret manifests carry base64 values under data:/stringData:. Lines may carry a
# `grep -rn` prefix (/path:12:) in command output.
_PREFIX = r"(?:/[^\s:]*:(?:\d+[:-])?)?[+\- ]?"  # and a diff's +/-/context column
_K8S_SECRET = re.compile(
    rf"(?m)^{_PREFIX}[ \t]*(?:-[ \t]+)?[\"']?kind[\"']?:\s*[\"']?Secret[\"']?\s*,?\s*$")
_K8S_LINE = re.compile(rf"^({_PREFIX})(.*)$", re.S)
_K8S_DATA_LINE = re.compile(r"^(\s+[A-Za-z0-9_.\-]+:\s*)(\S.*)$")
_K8S_DATA_KEY = re.compile(r"^([ -]*)(?:data|stringData):\s*$")
_K8S_BLOCK = re.compile(r"^\s*[\w.\-]+:\s*[|>][-+]?\d*\s*$")
_K8S_JSON_KIND = re.compile(r'"kind"\s*:\s*"Secret"')
_K8S_JSON_DATA = re.compile(r'("(?:data|stringData)"\s*:\s*\{)([^{}]*)(\})')
_K8S_JSON_VALUE = re.compile(r'("[^"\n]*"\s*:\s*)"(?:\\.|[^"\\\n])*"')


# Every pattern above needs one of these literals somewhere in its match (a secret key word
# for the assignments and flags, a token prefix for the formats). Text with none of them,
# most tool output, skips the twenty substitutions: redaction runs on every string that
# leaves a tool, so it sits on the hot path (docs/benchmarks.md).
_TRIGGER = re.compile(r"(?i)sk-|hf_|api_org_|gh[pousr]_|github_pat_|glpat-|xox|akia|asia|aiza|"
                      r"sg\.|npm_|pypi-|_v1_|tskey-|age-secret|dapi|hooks\.slack|accountkey|"
                      r"pw|pin|hmac|salt|"
                      r"k_live_|eyj|://|authoriz|bearer|pass|secret|token|key|credential|"
                      r"pwd|hv[sbr]\.|\"auth\"|machine|"
                      r"(?m:^[^:\s#]+:(?:\d+|\*):[^:\s]+:[^:\s]+:[^\s:]+$)")
# The same net in RE2, for ASCII text: Python's engine tries the thirty alternatives at every
# position (80-240 us for a 400-character line, on every string a tool returns), RE2 one
# automaton pass (3-7 us). On ASCII text it fires wherever Python's does: its \s is narrower
# (no \v, \x1c-\x1f), which only widens the negated classes here. Other text keeps Python's
# engine, whose case folding (dotless i, Unicode digits) RE2 does not share.
_TRIGGER_ASCII = re2.compile(_TRIGGER.pattern)


def may_hold_secret(text: str) -> bool:
    """Whether :func:`redact` could change ``text`` (False: it returns it as is). A trigger
    found in one line is found in any text holding that line, so texts joined with newlines
    are cleared in one pass.

    >>> may_hold_secret("NVIDIA H100 80GB HBM3\\nGPU-1f2e"), may_hold_secret("x\\ntoken=1")
    (False, True)
    """
    return bool(text) and bool(_TRIGGER_ASCII.search(text) if text.isascii()
                               else _TRIGGER.search(text))


def redact(text: str) -> str:
    """Return ``text`` with every secret replaced by ``[REDACTED:<kind>]``.

    >>> redact("HF_TOKEN=hf_abcdefghijklmnopqrstuvwx")
    'HF_TOKEN=[REDACTED:hf-token]'
    """
    if not may_hold_secret(text):
        return text
    if len(text) >= _LONG:
        return _redact_long(text)
    return _redact(text)


# A long text (a journal, a source file) passes the net more than once on its way out (the
# command runner, then the sandbox's scrub); its result is kept for the next pass. Bounded:
# 32 entries of at most the tools' output limits.
_LONG = 4096


@lru_cache(maxsize=32)
def _redact_long(text: str) -> str:
    return _redact(text)


def _redact(text: str) -> str:
    for kind, pattern in _FORMATS:
        text = pattern.sub(_format_sub(kind), text)
    # A value continued on the next line (systemd's trailing backslash) is one value: join
    # the lines for matching, and put the line breaks back so line numbers still hold.
    text = text.replace("\\\n", _JOIN)
    text = _CLI_FLAG.sub(_assignment, text)
    text = _NETRC.sub(r"\1[REDACTED:secret]", text)
    if _NETRC_FILE.search(text):
        text = _NETRC_LINE.sub(r"\1[REDACTED:secret]", text)
    text = _ASSIGN.sub(_assignment, text)
    text = text.replace(_JOIN, "\\\n")
    text = _YAML_REST.sub(r"\1", text)
    text = _PGPASS.sub(r"\1[REDACTED:secret]", text)
    text = _redact_blocks(text)
    if _K8S_SECRET.search(text) or _K8S_JSON_KIND.search(text):
        text = _redact_k8s_json(_redact_k8s(text))
    return text


def _redact_blocks(text: str) -> str:
    """A secret key's block scalar (`api_key: >`, then more-indented lines) redacted."""
    if "|" not in text and ">" not in text:
        return text
    lines = text.split("\n")
    key_indent: int | None = None
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if key_indent is not None and line.strip() and indent > key_indent:
            lines[i] = line[:indent] + "[REDACTED:secret]"
            continue
        key_indent = None
        if _BLOCK_KEY.match(line):
            key_indent = indent
    return "\n".join(lines)


def _format_sub(kind: str) -> Callable[[re.Match[str]], str]:
    # A pattern's first group, when it has one, is context to keep (`Authorization: `).
    # Line breaks inside a match (a PEM block) are kept so that line numbers still hold.
    return lambda m: ((m.group(1) or "" if m.re.groups else "") + f"[REDACTED:{kind}]"
                      + "\n" * m.group(0).count("\n"))


def _assignment(m: re.Match[str]) -> str:
    val = m.group("val")
    if _BENIGN_VALUE.match(val.replace(_JOIN, "")):
        return m.group(0)
    # Keep the joined line breaks so the text keeps its line count.
    return (f"{m.group('key')}{m.group('sep')}{m.group('q') or ''}[REDACTED:secret]"
            + "\\\n" * val.count(_JOIN))


def _redact_k8s(text: str) -> str:
    """Every value under a Secret's data:/stringData: (at any depth: a Secret inside a
    `kind: List`), block scalars included."""
    out: list[str] = []
    data_indent: int | None = None
    block_indent: int | None = None
    for line in text.split("\n"):
        m = _K8S_LINE.match(line)
        prefix, body = (m.group(1), m.group(2)) if m else ("", line)
        indent = len(body) - len(body.lstrip(" -"))
        stripped = body.strip()
        if block_indent is not None and stripped and indent > block_indent:
            out.append(prefix + body[:indent] + "[REDACTED:k8s-secret]")
            continue
        block_indent = None
        if d := _K8S_DATA_KEY.match(body):
            data_indent = len(d.group(1))
        elif data_indent is not None and stripped and indent <= data_indent:
            data_indent = None
        elif data_indent is not None and stripped and not stripped.startswith("#"):
            if _K8S_BLOCK.match(body):
                block_indent = indent
            else:
                body = _K8S_DATA_LINE.sub(r"\1[REDACTED:k8s-secret]", body)
        out.append(prefix + body)
    return "\n".join(out)


def _redact_k8s_json(text: str) -> str:
    """A Secret written as JSON: each string in its "data"/"stringData" object."""
    if not _K8S_JSON_KIND.search(text):
        return text
    return _K8S_JSON_DATA.sub(
        lambda m: m.group(1) + _K8S_JSON_VALUE.sub(r'\1"[REDACTED:k8s-secret]"', m.group(2))
        + m.group(3), text)


# A line may carry a diff's +/- (git log -p, git show of a commit).
_DOTENV_LINE = re.compile(
    r"(?m)^([+-]?\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.]*\s*=\s*[\"']?)([^\s\"'#]+)")


def redact_env_file(text: str) -> str:
    """A ``.env`` file is a secret store whatever its keys are called: besides :func:`redact`,
    every value that looks like a credential (16+ characters mixing letters and digits, not a
    path, URL or placeholder) is replaced."""

    def sub(m: re.Match[str]) -> str:
        return m.group(1) + "[REDACTED:env-file]" if _env_secret(m.group(2)) else m.group(0)

    return _DOTENV_LINE.sub(sub, redact(text))


_KEY_NAME = re.compile(rf"(?i){_SECRET_KEY}")


def redact_entry(key: str, value: Any, env_file: bool = False) -> Any:
    """A parsed config entry's value, by what its key says: a key that names a secret (as
    the parser decoded it: ``"p\\u0061ssword"`` is ``password``) hides its value, numbers
    included; in a dotenv file, so does any value that looks like a credential. The text
    nets only see each string alone, without its key.

    >>> redact_entry("db.password", 123456), redact_entry("db.port", 5432)
    ('[REDACTED:secret]', 5432)
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    last = re.split(r"[.\[\]/:]", key.strip("]"))[-1]
    text = str(value)
    if _KEY_NAME.fullmatch(last) and (isinstance(value, int | float) or
                                      (text and not _BENIGN_VALUE.match(text))):
        return "[REDACTED:secret]"
    if env_file and isinstance(value, str) and _env_secret(value):
        return "[REDACTED:env-file]"
    return value


def _env_secret(val: str) -> bool:
    return (len(val) >= 16 and re.search(r"[A-Za-z]", val) is not None
            and re.search(r"\d", val) is not None and "://" not in val
            and not _BENIGN_VALUE.match(val))


def is_env_file(name: str) -> bool:
    """Whether ``name`` is a dotenv file by the names dotenv tools use: ``.env``,
    ``.env.production``, ``.env.local``, ``.envrc``, ``app.env``, ``app.env.bak``.

    >>> [is_env_file(n) for n in (".env.local", "x/app.env.bak", "environment.yaml")]
    [True, True, False]
    """
    base = name.rsplit("/", 1)[-1].lower()
    return base in (".env", ".envrc") or base.startswith(".env.") or "env" in base.split(".")[1:]


def redact_file(name: str, text: str) -> str:
    """A file's text redacted by what the file is: dotenv files by the stricter rule."""
    return redact_env_file(text) if is_env_file(name) else redact(text)
