"""Secrets that a line-by-line pattern cannot see because their key is on another line: a
secret key's nested YAML (``api_keys:`` then ``- v``; ``secrets:`` then ``db: v``; a block
scalar), its flow or JSON collection (``api_keys: [a, b]``, ``"secrets": {"db": "v"}``), an
INI/TOML section named for secrets (``[secrets]``), a Kubernetes env list item whose
``name`` is a secret and whose ``value`` is lines away, a YAML alias standing for a secret
key, and an argument list with the flag and its value on two lines."""

from __future__ import annotations

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from ._keys import BENIGN_VALUE, BLOCK_HEADER, env_secret, hint, hinted, quoted
from ._keys import STRONG_KEY as SECRET_KEY  # structures: only the sure names

_R = "[REDACTED:secret]"
_PROPS = r"(?:[ \t]+(?:&[\w.\-/]+|![^\s]*))*"  # a YAML anchor or tag after the colon
_BLOCK = BLOCK_HEADER
# `secret_key:` (a comment, an anchor or a tag may follow) then lines below
_NEST_KEY = re.compile(
    rf"(?i)^([ \t]*(?:-[ \t]*)?[\"']?{SECRET_KEY}[\"']?[ \t]*:){_PROPS}[ \t]*({_BLOCK})?"
    r"[ \t]*(?:#.*)?$")
_NEST_END = re.compile(rf":{_PROPS}[ \t]*(?:{_BLOCK})?[ \t]*(?:#.*)?$")
_NEST_CANDIDATE = re.compile(
    rf"(?m)^[^\n:]*:{_PROPS}[ \t]*(?:{_BLOCK})?[ \t]*(?:#[^\n]*)?$")
# a line below one: `key: value`, `- value`, `- key: value` (value may carry a tag/anchor)
_NEST_ITEM = re.compile(r"""^([ \t]*(?:-[ \t]+)?(?:(?:"[^"\n]*"|'[^'\n]*'|[^\s:#"'][^:#\n]*?)"""
                        rf"""[ \t]*:{_PROPS}[ \t]+|-{_PROPS}[ \t]+))(?!\[REDACTED)([^\s#].*)$""")
_NAME_ITEM = re.compile(r"^[ \t]*-[ \t]+[a-z][a-z_\-.]*[ \t]*(?:#.*)?$")
_CHILD_KEY = re.compile(r"""^[ \t]*(?:-[ \t]+)?["']?([^\s:"']+)["']?[ \t]*:""")
# child keys that name or point at a secret rather than hold it (a Pod's secret volume,
# imagePullSecrets, compose's secrets: with file:, Helm's existingSecret)
_REFERENCE = re.compile(r"(?i)(?:secret)?name|file|external|environment|path|mountpath|"
                        r"defaultmode|mode|optional|items|existingsecret|secretref|kind|"
                        r"driver|labels|annotations|remoteref|property")


def redact_nested(text: str) -> str:
    """Every value below a secret key whose value is nested: a block scalar, a block
    sequence or mapping, plain continuation lines."""
    if not any(_nest_key(line) for line in _NEST_CANDIDATE.findall(text)):
        return text
    lines = text.split("\n")
    key_indent: int | None = None
    scalar = False
    for i, line in enumerate(lines):
        body = line.lstrip()
        indent = len(line) - len(body)
        if key_indent is not None and body.startswith("#"):
            continue  # a comment, at any indent, neither ends the block nor is redacted
        below = key_indent is not None and bool(body) and (
            indent > key_indent or (not scalar and indent == key_indent and
                                    body.startswith("- ")))
        if below:
            lines[i] = _below(line, indent, scalar)
            continue
        if body or key_indent is None:
            key_indent = None
        if m := _nest_key(line):
            key_indent, scalar = indent, m.group(2) is not None
    return "\n".join(lines)


def _below(line: str, indent: int, scalar: bool) -> str:
    if scalar:
        return line[:indent] + _R
    child = _CHILD_KEY.match(line)
    if child and _REFERENCE.fullmatch(child.group(1)):
        return line
    if _NAME_ITEM.match(line):
        return line  # `- hf_token` under compose's secrets: a secret's name, not its value
    if _NEST_ITEM.match(line):
        return _NEST_ITEM.sub(r"\1" + _R, line)
    if _NEST_END.search(line) or "[REDACTED" in line:
        return line  # a nested key of its own; its values come on the next lines
    return line[:indent] + _R  # a plain scalar continued on this line


# a line ending in `:` whose key holds a secret word (RE2: one pass, no per-character retry)
_NEST_HINT = hint(r"[\"']?[ \t]*:")


def _nest_key(line: str) -> re.Match[str] | None:
    # most lines end in a value, and most keys hold no secret word: only a line ending in
    # `:` whose key has one (an RE2 pass) is tried against the key rule, which costs per
    # character
    if not _NEST_END.search(line) or not hinted(_NEST_HINT, line):
        return None
    return _NEST_KEY.match(line)


# `secret_key: [` / `"secrets": {` / `api_keys = [`: the collection's scalars go
_FLOW_KEY = re.compile(
    rf"""(?i)(?<![A-Za-z0-9_.\-])["']?{SECRET_KEY}["']?\s*[:=]{_PROPS}\s*([\[{{])(?!REDACTED)""")
# a scalar (greedy: no per-character retry) and, when a colon follows, the mark of a key
_FLOW_GATE = hint(r"\s*[:=]\s*[&!]?[^\n]{0,80}(?:\[[^R]|\{)")  # not a [REDACTED mark
_FLOW_TOKEN = re.compile(
    r"""("(?:\\.|[^"\\\n])*"|'[^'\n]*'|[^\s,:\[\]{}"'#][^,:\[\]{}"'\n]*)([ \t]*:)?""")
_MAX_FLOW = 64 << 10


def redact_flow(text: str) -> str:
    """A secret key's flow or JSON collection, at any depth: each scalar that is not a key."""
    if ("[" not in text and "{" not in text) or not hinted(_FLOW_GATE, text):
        return text
    out, pos = [], 0
    while m := _FLOW_KEY.search(text, pos):
        end = _closing(text, m.start(1))
        out.append(text[pos:m.end(1)])
        out.append(_FLOW_TOKEN.sub(_flow_scalar, text[m.end(1):end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _flow_scalar(m: re.Match[str]) -> str:
    token = m.group(1).rstrip()
    if m.group(2) or BENIGN_VALUE.match(token.strip("\"'")):
        return m.group(0)  # a key, or nothing to hide (null, <mask>, a path, a number)
    return quoted(token) + m.group(1)[len(token):]


def _closing(text: str, start: int) -> int:
    """Index past the bracket matching text[start], quotes skipped; bounded."""
    depth, i, limit = 0, start, min(len(text), start + _MAX_FLOW)
    while i < limit:
        c = text[i]
        if c in "\"'":
            j = text.find(c, i + 1)
            i = j + 1 if j != -1 else limit
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return limit


# INI/TOML: `[secrets]`, `[api_keys]`, `[secrets.db]`: every value in the section
_SECTION = re.compile(r"^[ \t]*\[+[ \t]*([^\]\n]+?)[ \t]*\]+[ \t]*(?:[#;].*)?$")
_SECTION_VALUE = re.compile(r"""^([ \t]*(?:"[^"\n]*"|'[^'\n]*'|[^\s=:#;"'][^=:\n]*?)[ \t]*"""
                            r"""[=:][ \t]*)(?!\[REDACTED)([^\s#;].*)$""")
_SECTION_NAME = re.compile(rf"(?i){SECRET_KEY}")
_SETTINGS = re.compile(r"(?i)auth|cookie|pin|pw|salt")


def _section_value(m: re.Match[str]) -> str:
    return m.group(0) if BENIGN_VALUE.match(m.group(2).strip("\"' ")) else m.group(1) + _R


def redact_sections(text: str) -> str:
    """Values in an INI/TOML section whose name (or a dotted part of it) names secrets."""
    if "[" not in text:
        return text
    lines = text.split("\n")
    inside = False
    for i, line in enumerate(lines):
        if m := _SECTION.match(line):
            parts = re.split(r"[.\s]+", m.group(1).strip("\"' "))
            # [auth], [cookie]: settings groups (enabled = false), not stores of secrets
            inside = any(_SECTION_NAME.fullmatch(p.strip("\"'")) and not _SETTINGS.fullmatch(p)
                         for p in parts)
        elif inside:
            lines[i] = _SECTION_VALUE.sub(_section_value, line)
    return "\n".join(lines)


# A Kubernetes/compose env list item: `- name: X` ... `value: v` in one item, any order,
# comments and other fields between; a JSON/flow object {"name": "X", ..., "value": "v"}; the
# CRI's KeyValue ({"key": "X", "value": "v"}, `crictl inspect`'s config.envs) the same
_ITEM_START = re.compile(r"^([ \t]*)-[ \t]+")
_ITEM_NAME = re.compile(
    rf"""(?i)^[ \t]*(?:-[ \t]+)?["']?(?:name|key)["']?[ \t]*:[ \t]*["']?{SECRET_KEY}""")
_ITEM_VALUE = re.compile(rf"""^([ \t]*(?:-[ \t]+)?["']?value["']?[ \t]*:{_PROPS}[ \t]*)(\S.*)$""")
_OBJECT = re.compile(r"\{[^{}]{0,4096}\}")
_OBJECT_NAME = re.compile(
    rf"""(?i)["']?(?:name|key)["']?\s*:\s*["']?{SECRET_KEY}["']?\s*[,}}]""")
_OBJECT_VALUE = re.compile(
    r"""(["']?value["']?\s*:\s*)("(?:\\.|[^"\\\n])*"|'[^'\n]*'|[^,}\s][^,}\n]*)""")


class _Item:
    """An open list item: where its dash is, where its own keys start, what it holds."""

    __slots__ = ("content", "dash", "secret", "values")

    def __init__(self, dash: int, content: int) -> None:
        self.dash, self.content, self.secret = dash, content, False
        self.values: list[int] = []


def redact_env_items(text: str) -> str:
    """Each env list item whose name is a secret: its value (block, block scalar, flow).
    Only an item's own keys count (not a nested list's): one pass, a stack of open items."""
    if ("name" not in text and "key" not in text) or "value" not in text:
        return text
    if "{" in text:
        text = _OBJECT.sub(_object, text)
    lines = text.split("\n")
    stack: list[_Item] = []
    for i, line in enumerate(lines):
        body = line.lstrip()
        indent = len(line) - len(body)
        if not body or body.startswith("#"):
            continue
        while stack and indent <= stack[-1].dash:
            _close(lines, stack.pop())
        m = _ITEM_START.match(line)
        if m:
            stack.append(_Item(indent, len(m.group(0))))
        if stack and (m or indent == stack[-1].content):
            if _ITEM_NAME.match(line):
                stack[-1].secret = True
            if _ITEM_VALUE.match(line):
                stack[-1].values.append(i)
    while stack:
        _close(lines, stack.pop())
    return "\n".join(lines)


def _close(lines: list[str], item: _Item) -> None:
    for j in item.values if item.secret else ():
        v = _ITEM_VALUE.match(lines[j])
        if v is None:
            continue
        rest = v.group(2)
        if not re.match(_BLOCK + r"[ \t]*(?:#.*)?$", rest):
            lines[j] = v.group(1) + quoted(rest)
            continue
        ind = len(lines[j]) - len(lines[j].lstrip())
        for k in range(j + 1, len(lines)):  # the block scalar's lines
            body = lines[k].lstrip()
            if body and len(lines[k]) - len(body) <= ind:
                break
            if body:
                lines[k] = lines[k][:len(lines[k]) - len(body)] + _R


def _object(m: re.Match[str]) -> str:
    obj = m.group(0)
    if not _OBJECT_NAME.search(obj):
        return obj
    return _OBJECT_VALUE.sub(lambda v: v.group(1) + quoted(v.group(2)), obj)


# YAML aliases as keys: `name: &n "token"` then `*n : value`
_ANCHORED_KEY = re.compile(rf"""(?im)&([\w.\-/]+)[ \t]+["']?{SECRET_KEY}["']?[ \t]*(?:#.*)?$""")
_ALIAS_KEY = re.compile(r"(?m)^([ \t]*(?:-[ \t]*)?\*([\w.\-/]+)[ \t]*:[ \t]*)\S.*$")


def redact_aliases(text: str) -> str:
    """Keys written as aliases of an anchored secret word: one pass, however many anchors."""
    if "&" not in text or "*" not in text:
        return text
    names = {m.group(1) for m in _ANCHORED_KEY.finditer(text)}
    if not names:
        return text
    return _ALIAS_KEY.sub(lambda m: m.group(1) + _R if m.group(2) in names else m.group(0),
                          text)


# YAML aliases as values: `x: &a VALUE` (or a block under `x: &a`) then `password: *a`: the
# secret is written where the anchor is, under an innocent key
_SECRET_ALIAS = re.compile(rf"""(?im)^[ \t]*(?:-[ \t]*)?["']?{SECRET_KEY}["']?[ \t]*:[ \t]*"""
                           r"\*([\w.\-/]+)")
_BLOCK_ITEM = re.compile(r"^([ \t]*(?:-[ \t]+)?(?:[^\s:#][^:#]*:[ \t]+|-[ \t]+))(\S.*)$")
_ANCHOR_AT_END = re.compile(r"&([\w.\-/]+)(?:[ \t]+(\S.*))?$")


def redact_aliased_values(text: str) -> str:
    """The value an anchor names, wherever an alias of it stands under a secret key: on the
    anchor's own line, or the values of the block indented below it."""
    if "&" not in text or "*" not in text:
        return text
    names = {m.group(1) for m in _SECRET_ALIAS.finditer(text)}
    if not names:
        return text
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _ANCHOR_AT_END.search(lines[i])
        if m is None or m.group(1) not in names:
            i += 1
            continue
        if m.group(2) is not None and not m.group(2).startswith("#"):
            lines[i] = lines[i][: m.start(2)] + _R
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        i += 1
        while i < len(lines) and (not lines[i].strip()
                                  or len(lines[i]) - len(lines[i].lstrip()) > indent):
            item = _BLOCK_ITEM.match(lines[i])
            if item is not None:
                lines[i] = item.group(1) + _R
            i += 1
    return "\n".join(lines)


# an argument list with the flag on one line and its value on the next (k8s args:, compose
# command:): `- --api-key` then `- "v"`
_LIST_FLAG_LINES = re.compile(
    rf"""(?im)^([ \t]*-[ \t]+["']?--?{SECRET_KEY}["']?[ \t]*\n[ \t]*-[ \t]+)(["']?)"""
    r"""(?!-)([^\n"']+)""")


def redact_flag_lines(text: str) -> str:
    return _LIST_FLAG_LINES.sub(lambda m: m.group(1) + m.group(2) + _R, text)


# An environment block (compose's `environment:`, a Pod's env as a mapping): its values are
# environment variables, as in a dotenv file, whatever their names.
_ENV_BLOCK = re.compile(r"^([ \t]*)(?:-[ \t]+)?(?:environment|env)[ \t]*:[ \t]*(?:#.*)?$")
_ENV_ENTRY = re.compile(r"""^([ \t]*(?:-[ \t]+)?["']?[A-Za-z_][\w.\-]*["']?[ \t]*[:=][ \t]*["']?)"""
                        r"""([^\s"'#]+)""")


def redact_env_blocks(text: str) -> str:
    """Credential-looking values of the variables in an environment block."""
    if "env" not in text:
        return text
    lines = text.split("\n")
    block: int | None = None
    for i, line in enumerate(lines):
        body = line.lstrip()
        indent = len(line) - len(body)
        if block is not None and body and not body.startswith("#"):
            if indent > block or (indent == block and body.startswith("- ")):
                lines[i] = _ENV_ENTRY.sub(
                    lambda m: m.group(1) + ("[REDACTED:env-file]" if env_secret(m.group(2))
                                            else m.group(2)), line)
                continue
            block = None
        if m := _ENV_BLOCK.match(line):
            block = len(m.group(1))
    return "\n".join(lines)


# XML: <password>v</password>, and Hadoop's <name>fs.s3a.secret.key</name><value>v</value>
_XML_ELEMENT = re.compile(rf"""(?i)(<({SECRET_KEY})(?:\s[^<>]{{0,200}})?>)[^<]{{1,4096}}(</\2>)""")
_XML_PROPERTY = re.compile(
    rf"""(?i)(<name>\s*{SECRET_KEY}\s*</name>\s*<value>)[^<]{{1,4096}}(</value>)""")


# HTML: <input name=password value=v> (or type=password), attributes in any order; a form
# saved with its value, a template's default (issue 28, rt3 E1 spelled its value as &#x51;…)
_HTML_INPUT = re.compile(
    rf"""(?i)(<input\b(?=[^<>]{{0,600}}?\b(?:name\s*=\s*["']?{SECRET_KEY}["'\s/>]"""
    r"""|type\s*=\s*["']?password\b))[^<>]{0,600}?\bvalue\s*=\s*)(["']?)"""
    r"""((?<=")[^"<>]{1,4096}|(?<=')[^'<>]{1,4096}|[^"'\s<>]{1,4096})""")


def redact_xml(text: str) -> str:
    if "<input" in text or "<INPUT" in text:
        text = _HTML_INPUT.sub(lambda m: m.group(1) + m.group(2) + _R, text)
    if "</" not in text:
        return text
    text = _XML_ELEMENT.sub(lambda m: m.group(1) + _R + m.group(3), text)
    return _XML_PROPERTY.sub(lambda m: m.group(1) + _R + m.group(2), text)


# Terraform/HCL: variable "db_password" { default = "v" }
_HCL_VARIABLE = re.compile(
    rf"""(?is)(\bvariable\s+"[\w.\-]*{SECRET_KEY}"\s*\{{[^{{}}]{{0,2048}}?\bdefault\s*=\s*")"""
    r"""[^"\n]*(")""")


def redact_hcl(text: str) -> str:
    if "variable" not in text:
        return text
    return _HCL_VARIABLE.sub(lambda m: m.group(1) + _R + m.group(2), text)
