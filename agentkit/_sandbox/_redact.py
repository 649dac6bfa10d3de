"""Secret redaction, applied to everything a tool returns before it leaves the sandbox.

Two nets: token *formats* that are secret wherever they appear (``_redact_formats.py``:
``hf_…``, ``sk-…``, key blocks, JWTs …) and *assignments* whose key names a secret
(``PASSWORD=…``, ``"api_key": "…"``, ``--api-key …``, ``- name: DB_PASSWORD`` then
``value: …``), with Kubernetes Secrets in ``_redact_k8s.py``. Benign look-alikes (commit SHAs,
UUIDs, AWS's documented ``…EXAMPLE`` keys) stay readable.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

from ._redact_formats import FORMATS, TRIGGERS, format_sub, redact_structured
from ._redact_k8s import is_k8s_secret, redact_k8s

# The key must *end* in the secret word: HF_TOKEN, db_password, aws_secret_access_key; not
# bos_token_id or max_tokens.
_SECRET_KEY = (
    r"(?:[A-Za-z0-9_.\-]*(?:pass(?:word|wd|phrase)?s?|pwd|secrets?|token|api[_\-]?keys?|"
    r"apikeys?|access[_\-]?key|private[_\-]?key|credentials?|auth[_\-]?key|session[_\-]?key|"
    r"client[_\-]?secret|secret[_\-]?key|"
    r"(?:encryption|decryption|signing|master|shared|jwt|cookie|license)[_\-]?keys?|"
    # short words only as a whole word or after a separator: --pw, ADMIN_PIN, hmac; not spin
    r"(?:(?<![A-Za-z0-9])|(?<=[_\-.]))(?:pw|pin|hmac|salt))"
    r"(?:[_\-]\d+|[_\-]base)?(?![A-Za-z0-9_]))"
)
# KEY=value, KEY: value, "key": "value", Environment="KEY=value"; the value is replaced. An
# unquoted value after `=` runs to whitespace (env files; a quote inside it is part of it),
# after `:` to the next , ; } ] that starts another `key:` (JSON, YAML, logs); inside a
# quoted "KEY=value" word, to the closing quote (systemd).
_ASSIGN = re.compile(
    rf"""(?ix)
    (?<![A-Za-z0-9_.\-])  # start at a word's start: keeps matching linear on long lines
    (?P<key>(?P<kq>["'])?{_SECRET_KEY}["']?)
    (?P<sep>\s*(?:(?P<eq>=)|:)\s*)
    (?P<q>["'])?
    (?P<val>(?(q)(?:\\.|[^"'\\\n])*|(?(eq)(?(kq)[^"'\n]*|
        [^\s"']*(?:["'](?![,\]}}\s)]|$)[^\s"']*)*)|
        (?![{{\[|>]|-\s|[\w.\-]+:(?:\s|$))[^\s"',;}}\]]*(?:[,;](?!\s*["']?[\w.\-]+["']?\s*[:=])[^\s"',;}}\]]*)*)))
    """
)
# `--api-key VALUE`, `--hf-token VALUE` on a command line (the `=` form is an assignment).
_CLI_FLAG = re.compile(
    rf"(?ix)(?P<key>(?<![\w-])--?{_SECRET_KEY})(?P<sep>(?:[ \t\n]|\\\n|\ue000)+)(?P<q>[\"'])?"
    r"(?P<val>(?(q)[^\"'\n]*|(?!--|-[A-Za-z]\b)[^\s\ue000]+))"
)
# The same flag as a list element: ['--api-key', 'V'] (a Python repr), "--api-key",\n "V"
# (docker inspect's Cmd, a JSON argv).
_LIST_FLAG = re.compile(
    rf"""(?ix)(?P<key>["']--?{_SECRET_KEY}["'])(?P<sep>\s*,\s*)(?P<q>["'])"""
    r"""(?P<val>(?:\\.|[^"'\\\n])*)""")
# A credential-looking word: letters and digits, 8+ characters, not a path, URL or option.
_CRED = r"(?![^\s\"']*://)(?=[^\s\"']*\d)(?=[^\s\"']*[A-Za-z])[^\s\"'/\-\ue000][^\s\"'\ue000]{7,}"
# Short password flags whose long form has no secret word: mysql -pV, sshpass/docker login
# -p V, redis-cli -a V, -P, -k V. Only credential-looking values: -p 8000:8000 is a port.
_SHORT_FLAG = re.compile(
    rf"(?x)(?P<key>(?<![\w\-])-[pPak])(?P<sep>[ \t]+|\ue000[ \t]*|)(?P<q>[\"'])?(?P<val>{_CRED})")
# curl/wget -u user:password, --user, --proxy-user
_USER_FLAG = re.compile(
    r"(?x)(?P<key>(?<![\w\-])(?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)[\"']?[^\s:\"']+:)"
    r"(?P<sep>)(?P<q>)(?P<val>(?!\d+(?:\s|$))[^\s\"']+)")
# docker run -e NAME=V / --env NAME=V with a name outside the key rule: a value with a long
# letter-and-digit run (a token, not a model name or an interface).
_ENV_FLAG = re.compile(
    r"(?x)(?P<key>(?<![\w\-])(?:-e|--env)(?:[ \t]+|=)[\"']?[A-Za-z_][A-Za-z0-9_]*=)"
    r"(?P<sep>)(?P<q>)(?P<val>(?=[^\s\"']*[A-Za-z0-9]{12})" + _CRED + ")")
# A systemd Exec line's bare argument that can only be a credential (a positional token,
# `cmd --api-key \` continued, `tool login TOKEN`): 20+ letters and digits with two of each
# of upper case, lower case and digits. Hashes (lower case), model names and paths (`/`, `-`,
# `.`) and class names (DeepseekV3ForCausalLM: one digit) stay.
_EXEC_LINE = re.compile(r"(?m)^[ \t]*Exec\w*=[^\n]*")
_OPAQUE = re.compile(
    r"(?<![\w/.\-=:@+])(?=(?:[A-Za-z]*\d){2})(?=(?:[a-z0-9]*[A-Z]){2})(?=(?:[A-Z0-9]*[a-z]){2})"
    r"[A-Za-z0-9]{20,}(?![\w/.\-+])")
# TOML's multi-line strings: password = """…""" and '''…'''
_TRIPLE = re.compile(
    rf"""(?is)(?<![A-Za-z0-9_.\-])(["']?{_SECRET_KEY}["']?\s*=\s*)("{{3}}|'{{3}})(.*?)(\2|\Z)""")
# A list of name/value pairs: a Kubernetes container's env (`- name: DB_PASSWORD` then
# `value: …`), ECS's JSON, a flow mapping; either order.
_NV = r"""["']?name["']?\s*:\s*["']?{k}["']?"""
_NAME_VALUE = re.compile(
    rf"""(?ix)(?P<key>{_NV.format(k=_SECRET_KEY)}[ \t]*(?:,\s*|\r?\n[ \t]*-?[ \t]*)
    ["']?value["']?\s*:[ \t]*)(?P<sep>)(?P<q>["'])?(?P<val>(?(q)(?:\\.|[^"'\\\n])*|[^\n,}}]*))""")
# Only where a mapping entry can start (a line's start, after `{` or `,`): a value is
# scanned to its end once, not once per `value:` inside it.
_VALUE_NAME = re.compile(
    rf"""(?imx)(?P<key>(?:^[ \t]*(?:-[ \t]+)?|(?<=[{{,])[ \t]*)["']?value["']?\s*:[ \t]*)
    (?P<sep>)(?P<q>["'])?(?P<val>(?(q)(?:\\.|[^"'\\\n])*+|[^\n,}}]*+))
    (?=["']?[ \t]*(?:,\s*|\r?\n[ \t]*-?[ \t]*){_NV.format(k=_SECRET_KEY)})""")
# A key spelled with escapes in the raw text ("p\u0061ssword", "p\x61ssword"): the parser
# reads `password`, so the text net must too.
_ESCAPED_KEY = re.compile(
    r"""(?P<key>(?P<kq>["'])(?P<name>(?:[^"'\\\n]|\\.){0,80})(?P=kq))"""
    r"""(?P<sep>\s*[:=]\s*)(?P<q>["'])?(?P<val>(?(q)(?:\\.|[^"'\\\n])*|(?![{\[])[^\s,}\]]*))""")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8}))")
# ~/.netrc lines: `machine HOST login USER password SECRET`.
_NETRC = re.compile(r"(?im)^(?=[^\n]*\b(?:machine|login)\s)([^\n]*?\bpassword\s+)\S+")
# Blanks at a line's start are [ \t], never \s: with (?m), ^\s* runs across blank lines, and
# each of n line starts tried n lines (red team round 2: 1,024 blank lines took 34 s).
_NETRC_FILE = re.compile(r"(?im)^[ \t]*(?:machine\s|default(?:[ \t]+(?:login|password)\b|"
                         r"[ \t]*$))")
_NETRC_LINE = re.compile(r"(?im)^([ \t]*password[ \t]+)\S+")
# A YAML block-mapping line `key: value`: the value is the rest of the line (commas and all)
# (and a log line's `, next: 1` that is another key stays)
_YAML_REST = re.compile(rf"(?im)^([ \t]*-?[ \t]*{_SECRET_KEY}[ \t]*:[ \t]+\[REDACTED:secret\])"
                        r"(?![,;]\s*[\w.\-]+\s*[:=](?:\s|$))[^\s#][^\n#]*")
# An INI line `password = correct horse battery staple`: the value is the rest of the line.
_INI_REST = re.compile(rf"(?im)^([ \t]*{_SECRET_KEY}[ \t]*=[ \t]*\[REDACTED:secret\])"
                       r"[ \t]+[^\s#;][^\n]*")
# A secret key whose value is a block scalar (`api_key: >`) or a nested list or mapping
# (`api_keys:` then `- …` lines, `secrets:` then `db: …`)
_NEST_KEY = re.compile(
    rf"(?i)^([ \t]*-?[ \t]*[\"']?{_SECRET_KEY}[\"']?[ \t]*:)[ \t]*([|>][-+]?\d*)?[ \t]*(?:#.*)?$")
_NEST_END = re.compile(r":[ \t]*(?:[|>][-+]?\d*)?[ \t]*(?:#.*)?$")
_NEST_CANDIDATE = re.compile(r"(?m)^[^\n:]*:[ \t]*(?:[|>][-+]?\d*)?[ \t]*(?:#[^\n]*)?$")
_NEST_ITEM = re.compile(r"""^([ \t]*(?:-[ \t]+)?(?:(?:"[^"\n]*"|'[^'\n]*'|[^\s:#"'][^:#\n]*?)"""
                        r"""[ \t]*:[ \t]+|-[ \t]+))(?!\[REDACTED)([^\s#].*)$""")
# YAML aliases as keys: `name: &n "token"` then `*n : value`
_ANCHORED_KEY = re.compile(rf"""(?i)&([\w.\-]+)[ \t]+["']?{_SECRET_KEY}["']?[ \t]*$""", re.M)
_ALIAS_KEY = re.compile(r"(?m)^([ \t]*-?[ \t]*\*([\w.\-]+)[ \t]*:[ \t]*)\S.*$")
# ~/.pgpass: host:port:database:user:password, `\:` and `\\` escaped in any field
_PG_FIELD = r"(?:\\.|[^:\s\\])+"
_PGPASS_SHAPE = rf"(?:\\.|[^:\s#\\])(?:\\.|[^:\s\\])*:(?:\d+|\*):{_PG_FIELD}:{_PG_FIELD}:"
_PGPASS = re.compile(rf"(?m)^({_PGPASS_SHAPE}){_PG_FIELD}$")
_JOIN = "\ue000"  # a private-use character standing for a backslash-newline
# A benign value that only looks secret: placeholders, booleans, references, paths.
_BENIGN_VALUE = re.compile(
    r"(?i)^(?:|true|false|yes|no|none|null|[\d.]+|\*+|<[^>]*>|\[[A-Z_]+\]|"
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|"
    r"\[REDACTED[^\]]*\]|[A-Za-z0-9_\-/+]*EXAMPLE[A-Za-z0-9_\-/+]*|/[^\s]*)$"
)


# Every pattern above needs one of these literals somewhere in its match (a secret key word
# for the assignments and flags, a token prefix for the formats, a flag). Text with none of
# them, most tool output, skips the substitutions: redaction runs on every string that
# leaves a tool, so it sits on the hot path (docs/benchmarks.md).
_TRIGGER = re.compile(rf"(?i){TRIGGERS}|pw|pin|hmac|salt|pass|secret|token|key|credential|"
                      r"pwd|machine|(?:^|[\s\"'=])-[pak]|(?:^|[\s\"'])(?:-e|--env)[ =]|"
                      r"(?:^|\s)(?:-u|--user|--proxy-user)[ =]|\\[ux]|(?m:^[ \t]*exec\w*=)|"
                      rf"(?m:^{_PGPASS_SHAPE}{_PG_FIELD}$)")
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
    # A file with old Mac line ends (CR alone) is read as lines like any other.
    cr_only = "\r" in text and "\n" not in text
    if "\r" in text:
        text = re.sub(r"\r(?!\n)", "\n", text)
    for kind, pattern in FORMATS:
        text = pattern.sub(format_sub(kind), text)
    text = redact_structured(text)
    if '"""' in text or "'''" in text:
        text = _TRIPLE.sub(lambda m: m.group(1) + m.group(2) + "[REDACTED:secret]"
                           + "\n" * m.group(3).count("\n") + m.group(4), text)
    # A value continued on the next line (systemd's trailing backslash) is one value: join
    # the lines for matching, and put the line breaks back so line numbers still hold.
    text = text.replace("\\\n", _JOIN)
    for flag in (_CLI_FLAG, _LIST_FLAG, _SHORT_FLAG, _USER_FLAG, _ENV_FLAG):
        text = flag.sub(_assignment, text)
    if "Exec" in text:
        text = _EXEC_LINE.sub(lambda m: _OPAQUE.sub("[REDACTED:secret]", m.group(0)), text)
    text = _NETRC.sub(r"\1[REDACTED:secret]", text)
    if _NETRC_FILE.search(text):
        text = _NETRC_LINE.sub(r"\1[REDACTED:secret]", text)
    text = _NAME_VALUE.sub(_assignment, text)
    text = _VALUE_NAME.sub(_assignment, text)
    if "\\" in text:
        text = _ESCAPED_KEY.sub(_escaped_assignment, text)
    text = _ASSIGN.sub(_assignment, text)
    text = text.replace(_JOIN, "\\\n")
    if "[REDACTED:secret]" in text:  # the rest of a line after a value redacted above
        text = _INI_REST.sub(r"\1", _YAML_REST.sub(r"\1", text))
    text = _PGPASS.sub(r"\1[REDACTED:secret]", text)
    text = _redact_nested(text)
    if "&" in text and "*" in text:
        text = _redact_aliases(text)
    if is_k8s_secret(text):
        text = redact_k8s(text)
    return text.replace("\n", "\r") if cr_only else text


def _redact_nested(text: str) -> str:
    """A secret key's block scalar (`api_key: >`) or nested list or mapping (`api_keys:`
    then `- v`, `secrets:` then `db: v`): every value below it, at any depth."""
    if not any(_nest_key(line) for line in _NEST_CANDIDATE.findall(text)):
        return text
    lines = text.split("\n")
    key_indent: int | None = None
    scalar = False
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        below = indent > key_indent or (not scalar and line.lstrip().startswith("- ")
                                         and indent == key_indent) if key_indent is not None \
            else False
        if key_indent is not None and line.strip() and below:
            if scalar:
                lines[i] = line[:indent] + "[REDACTED:secret]"
            elif not line.lstrip().startswith("#"):
                lines[i] = _NEST_ITEM.sub(r"\1[REDACTED:secret]", line)
            continue
        if line.strip() or key_indent is None:
            key_indent = None
        if m := _nest_key(line):
            key_indent, scalar = indent, m.group(2) is not None
    return "\n".join(lines)


def _nest_key(line: str) -> re.Match[str] | None:
    # most lines end in a value: only a line ending in `:` (a comment, a block indicator
    # after it) is tried against the key rule, which costs per character
    return _NEST_KEY.match(line) if _NEST_END.search(line) else None


def _redact_aliases(text: str) -> str:
    """Keys written as aliases of an anchored secret word: one pass, however many anchors."""
    names = {m.group(1) for m in _ANCHORED_KEY.finditer(text)}
    if not names:
        return text
    return _ALIAS_KEY.sub(lambda m: m.group(1) + "[REDACTED:secret]"
                          if m.group(2) in names else m.group(0), text)


def _assignment(m: re.Match[str]) -> str:
    val = m.group("val")
    if _BENIGN_VALUE.match(val.replace(_JOIN, "")):
        return m.group(0)
    # Keep the joined line breaks so the text keeps its line count.
    return (f"{m.group('key')}{m.group('sep')}{m.group('q') or ''}[REDACTED:secret]"
            + "\\\n" * val.count(_JOIN))


def _unescape(name: str) -> str:
    return _ESCAPE.sub(lambda e: chr(int(e.group(1) or e.group(2) or e.group(3), 16)
                                     if int(e.group(1) or e.group(2) or e.group(3), 16)
                                     < 0x110000 else 0), name)


def _escaped_assignment(m: re.Match[str]) -> str:
    name = m.group("name")
    if "\\" not in name or not _KEY_NAME.fullmatch(_unescape(name)):
        return m.group(0)
    return _assignment(m)


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


# Any word that looks like a credential, for text that may be a credential file under
# another name (a hard link): an unbroken run of 16+ letters and digits, both present. A
# version (0.11.0rc2.dev123+g1234abcd) or a path breaks into shorter runs and stays.
_WORD = re.compile(r"[A-Za-z0-9]{16,}")


def redact_strict(text: str) -> str:
    """Text that may be a credential store under another name (a file with other hard
    links, which may be a home's ``.vault-token``): every credential-looking word goes.

    >>> redact_strict("s.Rt4hOmE9tWo12345678 /usr/lib/x86_64-linux-gnu")
    's.[REDACTED:linked-file] /usr/lib/x86_64-linux-gnu'
    """
    return _WORD.sub(lambda m: "[REDACTED:linked-file]" if _env_secret(m.group(0))
                     else m.group(0), redact_env_file(text))


_KEY_NAME = re.compile(rf"(?i){_SECRET_KEY}")


def redact_entry(key: str, value: Any, env_file: bool = False) -> Any:
    """A parsed config entry's value, by what its key says: a key that names a secret (as
    the parser decoded it: ``"p\\u0061ssword"`` is ``password``), or sits below one
    (``secrets.db``, ``api_keys[0]``), hides its value, numbers included; in a dotenv file,
    so does any value that looks like a credential. The text nets only see each string
    alone, without its key.

    >>> redact_entry("db.password", 123456), redact_entry("db.port", 5432)
    ('[REDACTED:secret]', 5432)
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    parts = [_unescape(p).strip("\"' ") for p in re.split(r"[.\[\]/:]", key) if p]
    text = str(value)
    if any(_KEY_NAME.fullmatch(p) for p in parts) and (
            isinstance(value, int | float) or (text and not _BENIGN_VALUE.match(text))):
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


def redact_file(name: str, text: str, linked: bool = False) -> str:
    """A file's text redacted by what the file is: dotenv files by the stricter rule, a file
    with other hard links (it may be a credential file named elsewhere) by the strictest."""
    if linked:
        return redact_strict(text)
    return redact_env_file(text) if is_env_file(name) else redact(text)
