"""Secret redaction, applied to everything a tool returns before it leaves the sandbox.

Three nets: token *formats* that are secret wherever they appear (``_formats.py``:
``hf_…``, ``sk-…``, key blocks, JWTs …); *assignments* whose key names a secret
(``PASSWORD=…``, ``"api_key": "…"``, ``--api-key …``, ``requirepass …``; the vocabulary is in
``_keys.py``); and *structures* whose key is on another line (``_blocks.py``:
nested YAML, env lists, sections; ``_k8s.py``: Kubernetes Secrets). Benign
look-alikes (commit SHAs, UUIDs, AWS's documented ``…EXAMPLE`` keys, ports) stay readable.
Redaction is the last net: the sandbox's first is not mounting credential files at all.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from ._blocks import (
    redact_aliased_values,
    redact_aliases,
    redact_env_blocks,
    redact_env_items,
    redact_flag_lines,
    redact_flow,
    redact_hcl,
    redact_nested,
    redact_sections,
    redact_xml,
)
from ._cli import redact_command_lines
from ._formats import TRIGGERS, format_sub, formats_for, redact_structured
from ._gates import COOKIE_WORDS, HEADER_WORDS, may_be_triple, may_hold
from ._k8s import is_k8s_secret, redact_k8s
from ._keys import (
    BENIGN_VALUE,
    JOIN,
    KEY_NAME,
    SECRET_KEY,
    STRONG_KEY,
    STRONG_NAME,
    WORD_HINT,
    assignment,
    credential_value,
    env_secret,
)
from ._quoted import quoted_tails
from ._views import HINT, redact_readings

# KEY=value, KEY: value, "key": "value", Environment="KEY=value", and the code forms
# (:=, ?=, +=, ==, !=, =>, `key: str = …`, os.environ["KEY"] = …, getenv("KEY", "…"),
# SQL's PASSWORD '…'); the value is replaced. An unquoted value after `=` runs to
# whitespace (a quote inside it is part of it), after `:` to the next , ; } ] that starts
# another `key:` (JSON, YAML, logs); inside a quoted "KEY=value" word, to the closing quote
# (systemd). A quoted value runs to its own closing quote (the other quote is inside it).
_ASSIGN = re.compile(
    rf"""(?ix)
    (?<![A-Za-z0-9_.\-])(?<!\[REDACTED:)  # a word's start, not inside a redaction mark
    (?P<key>(?P<kq>["'])?{SECRET_KEY}["']?\]?)
    (?P<sep>[ \t]*(?:
        (?P<eq>(?:\?\?|\|\||[?+:!])?==?>?
               |:[ \t]*[A-Za-z_][\w.\[\]|]{{0,40}}[ \t]+=(?!=)(?=[ \t]*\S))
        |:(?:[ \t]+(?:![^\s]*|&[\w.\-]+))*(?=\s)|:(?=["'])|\s+:(?=\s)|::(?=\s)
        |[ \t]+(?=["'])|(?(kq),[ \t]*(?=(?P<cq>["'])[^"'\n]{{0,256}}(?P=cq)\s*[),])|(?!))
    )\s*)
    (?P<q>["'])?
    (?P<val>(?(q)(?:\\.|(?!(?P=q))[^\\\n])*|(?(eq)(?(kq)(?:(?!(?P=kq))[^\n])*|
        (?:[\w.]{{0,64}}\([^()\n]{{0,256}}\)  # a call or tuple: getenv("X", "…"), SecretStr("…")
        |[\w.]{{1,64}}\[[^\[\]\n]{{0,256}}\]  # a subscript: os.environ["X"]
        |(?![\[{{])(?:\\.|[^\s"'\\])*(?:["'](?![,\]}}\s)]|$)(?:\\.|[^\s"'\\])*)*))|
        (?![{{\[|>#]|-\s|[\w.\-]+:(?:\s|$))[^\s"',;}}\]]*(?:[,;](?!\s*["']?[\w.\-]+["']?\s*[:=])(?=[^\s"',;}}\]])[^\s"',;}}\]]*)*)))
    """
)
# A line that is a secret key and its value, space separated: Dockerfile `ENV HF_TOKEN v`,
# fish `set -gx HF_TOKEN v`, csh `setenv HF_TOKEN v`, redis.conf `requirepass v`.
_DIRECTIVE = re.compile(
    rf"""(?im)^([ \t]*(?:(?:ENV[ \t]+|set[ \t]+(?:-[A-Za-z]+[ \t]+)*|setenv[ \t]+){STRONG_KEY}"""
    r"""[ \t]+["']?(?!\[REDACTED)(?=[^\s"'=:#;])|"""
    # a bare `key value` line: one word, nothing after it (not `token budget exceeded: …`)
    rf"""[ \t]*{STRONG_KEY}[ \t]+["']?(?!\[REDACTED)(?=[^\s"'=:#;][^\s"']*["']?;?[ \t]*$)))"""
    r"""([^\n"']*)""")
# the lines that can be one, found in one RE2 pass; the Python pattern runs on those only
_DIRECTIVE_LINE = re2.compile(
    r"(?im)^[ \t]*(?:(?:env|set|setenv)[ \t]+(?:-[a-z]+[ \t]+)*)?[\w.\-]*"
    rf"{WORD_HINT}[\w.\-]*[ \t]+[^\n]*")
# HTTP headers that carry credentials, in configs too (nginx `proxy_set_header X-Api-Key v;`,
# Apache `RequestHeader set Authorization "Basic v"`), and cookies.
_HEADER = re.compile(
    r"""(?i)(\b(?:x-api-key|x-auth-token|api-key|private-token|x-vault-token|"""
    r"""x-goog-api-key|x-amz-security-token|proxy-authorization|x-honeycomb-team|dd-api-key|"""
    r"""x-dd-api-key|x-sf-token|signalfx-token|lightstep-access-token|x-access-token)"""
    r"""["']?[ \t]*[:= ][ \t]*["']?)"""
    r"""[A-Za-z0-9._~+/=\-]{8,}""")
_COOKIE = re.compile(r"""(?im)(\b(?:set-)?cookie["']?[ \t]*[:=][ \t]*["']?)[^\n"';]+=[^\n"']+""")
# TOML's multi-line strings: password = """…""" and '''…'''
_TRIPLE = re.compile(
    rf"""(?is)(?<![A-Za-z0-9_.\-])(["']?{SECRET_KEY}["']?\s*=\s*)("{{3}}|'{{3}})(.*?)(\2|\Z)""")
# A key spelled with escapes in the raw text ("p\u0061ssword", "p\x61ssword"): the parser
# reads `password`, so the text net must too.
_ESCAPED_KEY = re.compile(
    r"""(?P<key>(?P<kq>["'])(?P<name>(?:[^"'\\\n]|\\.){0,80})(?P=kq))"""
    r"""(?P<sep>\s*[:=]\s*)(?P<q>["'])?(?P<val>(?(q)(?:\\.|[^"'\\\n])*|(?![{\[])[^\s,}\]]*))""")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8}))")
# ~/.netrc: on a line that has machine/login, every password (and account) value, quoted
# values with spaces included; a `default` entry's lines too.
_NETRC_ENTRY = re.compile(r"(?im)^[^\n]*\b(?:machine|login)\s[^\n]*$")
_NETRC_VALUE = re.compile(r"""(?i)(\b(?:password|account)\s+)("[^"\n]*"|\S+)""")
# Blanks at a line's start are [ \t], never \s: with (?m), ^\s* runs across blank lines, and
# each of n line starts tried n lines (red team round 2: 1,024 blank lines took 34 s).
_NETRC_FILE = re.compile(r"(?im)^[ \t]*(?:machine\s|default(?:[ \t]+(?:login|password)\b|"
                         r"[ \t]*$))")
_NETRC_LINE = re.compile(r"""(?im)^([ \t]*(?:password|account)[ \t]+)("[^"\n]*"|\S+)""")
# A YAML block-mapping line `key: value`: the value is the rest of the line (commas and all)
# (and a log line's `, next: 1` that is another key stays)
_YAML_REST = re.compile(rf"(?im)^([ \t]*(?:-[ \t]*)?{SECRET_KEY}[ \t]*:[ \t]+\[REDACTED:secret\])"
                        r"(?![,;]\s*[\w.\-]+\s*[:=](?:\s|$))[^\s#][^\n#]*")
# An INI line `password = correct horse battery staple`: the value is the rest of the line.
_INI_REST = re.compile(rf"(?im)^([ \t]*{SECRET_KEY}[ \t]*[=:][ \t]*\[REDACTED:secret\])"
                       r"[ \t]+[^\s#;][^\n]*")
# ~/.pgpass: host:port:database:user:password, `\:` and `\\` escaped in any field; the
# password is the rest of the line (libpq keeps spaces and tabs in it).
_PG_FIELD = r"(?:\\.|[^:\s\\])+"
_PGPASS_SHAPE = rf"(?:\\.|[^:\s#\\])(?:\\.|[^:\s\\])*:(?:\d+|\*):{_PG_FIELD}:{_PG_FIELD}:"
_PGPASS = re.compile(rf"(?m)^({_PGPASS_SHAPE})[^\n]+")
# Every pattern above needs one of these literals somewhere in its match (a secret key word
# for the assignments and flags, a token prefix for the formats, a flag). Text with none of
# them, most tool output, skips the substitutions: redaction runs on every string that
# leaves a tool, so it sits on the hot path (docs/benchmarks.md).
_TRIGGER = re.compile(rf"(?i){TRIGGERS}|pw|pin|hmac|salt|pass|secret|token|key|credential|"
                      r"pwd|machine|auth|psk|creds|cookie|"
                      r"(?:^|[\s\"'=])-[pak]|(?:^|[\s\"'])(?:-e|--env)[ =]|"
                      r"(?:^|\s)(?:-u|--user|--proxy-user)|\\[ux]|(?m:^[ \t]*exec\w*=)|"
                      r"(?m:^[ \t]*(?:-[ \t]+)?env(?:ironment)?[ \t]*:)|identified|login|"
                      r"x-honeycomb|dd-api|signalfx|lightstep|ldap|"
                      rf"(?m:^{_PGPASS_SHAPE})")
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
    out = _by_rules(text)
    # then lines a reader sees differently (entities, continuations, invisible characters)
    return redact_readings(out, _by_rules) if HINT.search(out) else out


def _by_rules(text: str) -> str:
    if not may_hold_secret(text):
        return text
    if len(text) >= _LONG:
        return _redact_long(text)
    return _redact(text)


# A long text (a journal, a source file) passes the net more than once on its way out (runner,
# then the sandbox's scrub); its result is kept for the next pass, 32 at most.
_LONG = 4096


@lru_cache(maxsize=32)
def _redact_long(text: str) -> str:
    return _redact(text)


def _redact(text: str) -> str:
    # CRLF (and old Mac CR-only) lines are matched as LF and given back as they came
    ends = "\r\n" if "\r\n" in text and "\n" not in text.replace("\r\n", "") else (
        "\r" if "\r" in text and "\n" not in text else "")
    if ends:
        text = text.replace(ends, "\n")
    elif "\r" in text:
        text = re.sub(r"\r(?!\n)", "\n", text)
    # an anchor's value first: the key redaction below hides the alias that points to it
    text = _redact_lines(redact_aliased_values(text))
    return text.replace("\n", ends) if ends else text


def _redact_lines(text: str) -> str:
    for kind, pattern in formats_for(text):
        text = pattern.sub(format_sub(kind), text)
    text = redact_structured(text)
    if may_be_triple(text):
        text = _TRIPLE.sub(lambda m: m.group(1) + m.group(2) + "[REDACTED:secret]"
                           + "\n" * m.group(3).count("\n") + m.group(4), text)
    # A value continued on the next line (systemd's trailing backslash) is one value: join
    # the lines for matching, and put the line breaks back so line numbers still hold.
    text = text.replace("\\\n", JOIN)
    text = redact_command_lines(text)
    text = _netrc(text)
    if "\\" in text:
        text = _ESCAPED_KEY.sub(_escaped_assignment, text)
    text = _assignments(text)
    text = _directives(text)
    if may_hold(text, HEADER_WORDS):
        text = _HEADER.sub(r"\1[REDACTED:secret]", text)
    if may_hold(text, COOKIE_WORDS):
        text = _COOKIE.sub(r"\1[REDACTED:cookie]", text)
    text = text.replace(JOIN, "\\\n")
    if "[REDACTED:secret]" in text:  # the rest of a line after a value redacted above
        text = _rest_of_lines(text)
    text = _PGPASS.sub(r"\1[REDACTED:secret]", text)
    for structure in (redact_flag_lines, redact_env_items, redact_flow, redact_nested,
                      redact_sections, redact_aliases, redact_env_blocks, redact_xml, redact_hcl):
        text = structure(text)
    if is_k8s_secret(text):
        text = _per_document(text)
    return text


def _per_document(text: str) -> str:
    """Secret data redacted in the documents that are Secrets, not in a ConfigMap beside."""
    parts = re.split(r"(?m)(^---[^\n]*\n)", text)
    if len(parts) == 1:
        return redact_k8s(text)
    return "".join(redact_k8s(p) if is_k8s_secret(p) else p for p in parts)


# lines with something after a redacted value: the only ones the line-rest rules can change
_REST_LINE = re2.compile(r"(?m)^[^\n]*\[REDACTED:secret\][^\n]+")


def _rest_of_lines(text: str) -> str:
    return _on_lines(_REST_LINE, text,
                     lambda part: _INI_REST.sub(r"\1", _YAML_REST.sub(r"\1", part)))


# where an assignment can be: a secret word, the rest of its key, then a separator (or a
# quote: the value may follow on the next line). _ASSIGN, whose alternatives cost per word
# start, runs on those lines and the next only.
_ASSIGN_HINT = re2.compile(rf"(?i)(?:^|[^:\w]|[^D]:)[\w.\-]*{WORD_HINT}[\w.\-]*[\"'\]]*\s*"
                           r"[:=!?+,\"']")


def _assignments(text: str) -> str:
    return _on_lines(_ASSIGN_HINT, text, lambda part: _ASSIGN.sub(assignment, part),
                     next_line=True)


def _directives(text: str) -> str:
    return _on_lines(_DIRECTIVE_LINE, text, lambda part: _DIRECTIVE.sub(_directive, part))


def _on_lines(gate: re2._Regexp, text: str, fn: Callable[[str], str],
              next_line: bool = False) -> str:
    """``fn`` on the lines where ``gate`` (RE2, one automaton pass) matches, and with
    ``next_line`` on the line after each too; the rest of ``text`` as it is. The Python
    patterns behind it cost per word or line start, so a large text pays them on a few lines.
    Non-ASCII text gets ``fn`` whole: RE2's case folding differs from Python's."""
    if not text.isascii():
        return fn(text)
    out, pos = [], 0
    for m in gate.finditer(text):
        if m.start() < pos:
            continue  # inside the part just done
        start = max(text.rfind("\n", pos, m.start()) + 1, pos)
        end = _line_end(text, m.end())
        if next_line and end < len(text):
            end = _line_end(text, end + 1)
        out += [text[pos:start], fn(text[start:end])]
        pos = end
    return "".join(out) + text[pos:] if out else text


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end == -1 else end


def _netrc(text: str) -> str:
    text = _NETRC_ENTRY.sub(lambda m: _NETRC_VALUE.sub(_netrc_value, m.group(0)), text)
    if _NETRC_FILE.search(text):
        text = _NETRC_LINE.sub(_netrc_value, text)
    return text


def _netrc_value(m: re.Match[str]) -> str:
    return m.group(1) + ("[REDACTED:secret]" if not m.group(2).startswith("[REDACTED")
                         else m.group(2))


def _directive(m: re.Match[str]) -> str:
    value = m.group(2).rstrip()
    if BENIGN_VALUE.match(value.rstrip(";")) and not value.rstrip(";").isdigit():
        return m.group(0)
    return m.group(1) + "[REDACTED:secret]" + m.group(2)[len(value):]


def _unescape(name: str) -> str:
    def one(e: re.Match[str]) -> str:
        code = int(e.group(1) or e.group(2) or e.group(3), 16)
        return chr(code) if code < 0x110000 else ""
    return _ESCAPE.sub(one, name)


def _escaped_assignment(m: re.Match[str]) -> str:
    name = m.group("name")
    if "\\" not in name or not KEY_NAME.fullmatch(_unescape(name)):
        return m.group(0)
    return assignment(m)


# A line may carry a diff's +/- (git log -p, git show of a commit). Blanks are [ \t]: with
# (?m), \s* would run across blank lines from every line start (quadratic).
_DOTENV_LINE = re.compile(
    r"(?m)^([+-]?[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*[ \t]*=[ \t]*[\"']?)"
    r"([^\s\"'#]+)")


def redact_env_file(text: str) -> str:
    """A ``.env`` file is a secret store whatever its keys are called: besides :func:`redact`,
    every value that looks like a credential (16+ characters mixing letters and digits, not a
    path, URL or placeholder) is replaced."""

    def sub(m: re.Match[str]) -> str:
        return m.group(1) + "[REDACTED:env-file]" if env_secret(m.group(2)) else m.group(0)

    return quoted_tails(_DOTENV_LINE.sub(sub, redact(text)))


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
    return _WORD.sub(lambda m: "[REDACTED:linked-file]" if env_secret(m.group(0))
                     else m.group(0), redact_env_file(text))


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
    parts = [_unescape(p).strip("\"' ") for p in re.split(r"[.\[\]/:]|__", key) if p]
    text = str(value)
    hidden = isinstance(value, int | float) or (text and not BENIGN_VALUE.match(text))
    if hidden and any(STRONG_NAME.fullmatch(p) for p in parts):
        return "[REDACTED:secret]"
    if hidden and isinstance(value, str) and KEY_NAME.fullmatch(parts[-1] if parts else "") \
            and credential_value(value):
        return "[REDACTED:secret]"  # a *_key name: only a credential-like value
    if env_file and isinstance(value, str) and env_secret(value):
        return "[REDACTED:env-file]"
    return value


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
