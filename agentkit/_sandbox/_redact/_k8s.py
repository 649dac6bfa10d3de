"""Kubernetes Secrets: every value under ``data:``/``stringData:`` is secret, whatever its key
is called. A manifest says it is a Secret in many spellings (a comment after ``Secret``, a
``!!str`` tag, an anchor, a folded scalar, flow style, JSON), and each must count."""

from __future__ import annotations

from ... import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from ._keys import BLOCK_HEADER, quoted

# Lines may carry a `grep -rn` prefix (/path:12:) in command output, and a diff's +/-/context
# column.
PREFIX = r"(?:/[^\s:]*:(?:\d+[:-])?)?[+\- ]?"
_KIND = re.compile(
    # a key at a line's start (after a grep/diff prefix, a list dash) or in a flow mapping:
    # not `# kind: Secret` in a comment
    rf"""(?m)(?:^{PREFIX}[ \t]*(?:-[ \t]+)?|[{{,][ \t]*)["']?\bkind["']?[ \t]*:[ \t]*"""
    r"(?:[>|][-+]?[ \t]*\r?\n[ \t]*|!!str[ \t]+|&[\w.\-]+[ \t]+|!<[^>\n]*>[ \t]*)?"
    r"""["']?Secret\b(?![\w.\-])""")
_ANCHOR = re.compile(r"""&([\w.\-]+)[ \t]+["']?Secret\b(?![\w.\-])""")
_KIND_ALIAS = re.compile(r"""\bkind["']?[ \t]*:[ \t]*\*([\w.\-]+)""")
_LINE = re.compile(rf"^({PREFIX})(.*)$", re.S)
_DATA_LINE = re.compile(
    r"""^(\s+(?:-\s+)?(?:"(?:\\.|[^"\\\n])*"|'[^'\n]*'|[A-Za-z0-9_.\-]+)\s*:\s*)(\S.*)$""")
_DATA_KEY = re.compile(
    r"""^([ \t-]*)["']?(?:data|stringData)["']?:(?:[ \t]+(?:&[\w.\-]+|![^\s]*))*[ \t]*(?:#.*)?$""")
# a data key whose value is on the lines below: a block scalar (|, >-, |2-, with a tag), or
# nothing (a plain scalar continued on the next line), a comment after it
_BLOCK = re.compile(rf"""^\s*[\w.\-"' ]+:(?:[ \t]+![^\s]*)?[ \t]*(?:{BLOCK_HEADER})?"""
                    r"""[ \t]*(?:#.*)?$""")
_FLOW_DATA = re.compile(r"""(["']?\b(?:data|stringData)["']?\s*:\s*\{)([^{}]*)(\})""")
_FLOW_VALUE = re.compile(  # from a token's start only: a long word is scanned once
    r"""(?<![^\s,{])((?:"(?:\\.|[^"\\\n])*"|'[^'\n]*'|[^\s:,{}"']+)\s*:\s*)"""
    r"""("(?:\\.|[^"\\\n])*"|'[^'\n]*'|[^,}\s"']+)""")


def is_k8s_secret(text: str) -> bool:
    """Whether ``text`` holds a manifest of ``kind: Secret``, however spelled.

    >>> is_k8s_secret("kind: !!str Secret  # db"), is_k8s_secret("kind: SecretStore")
    (True, False)
    """
    if "Secret" not in text:
        return False
    if _KIND.search(text):
        return True
    anchors = {m.group(1) for m in _ANCHOR.finditer(text)}
    return bool(anchors) and any(m.group(1) in anchors for m in _KIND_ALIAS.finditer(text))


def redact_k8s(text: str) -> str:
    """Every value under a Secret's data:/stringData: (at any depth: a Secret inside a
    `kind: List`), block scalars and flow mappings included."""
    return _redact_flow(_redact_block(text))


def _redact_block(text: str) -> str:
    out: list[str] = []
    data_indent: int | None = None
    block_indent: int | None = None
    for line in text.split("\n"):
        m = _LINE.match(line)
        prefix, body = (m.group(1), m.group(2)) if m else ("", line)
        indent = len(body) - len(body.lstrip(" \t-"))
        stripped = body.strip()
        if block_indent is not None and stripped and indent > block_indent:
            out.append(prefix + body[:indent] + "[REDACTED:k8s-secret]")
            continue
        block_indent = None
        if d := _DATA_KEY.match(body):
            data_indent = len(d.group(1))
        elif data_indent is not None and stripped and indent <= data_indent:
            data_indent = None
        elif data_indent is not None and stripped and not stripped.startswith("#"):
            if _BLOCK.match(body):
                block_indent = indent
            else:
                body = _DATA_LINE.sub(r"\1[REDACTED:k8s-secret]", body)
        out.append(prefix + body)
    return "\n".join(out)


def _redact_flow(text: str) -> str:
    """A Secret's data written as a flow mapping or JSON: each value in the braces."""
    return _FLOW_DATA.sub(
        lambda m: m.group(1) + _FLOW_VALUE.sub(_flow_value, m.group(2)) + m.group(3), text)


def _flow_value(m: re.Match[str]) -> str:
    return m.group(1) + quoted(m.group(2), "[REDACTED:k8s-secret]")
