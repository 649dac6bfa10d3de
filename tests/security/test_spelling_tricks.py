"""Issue 28, red team rt3 E1/E2: a secret spelled so that the text the redactor reads is not
the text a reader (a terminal, a browser, a parser) makes of it.

Expected behaviour, written before the fix, from how each reader reads the bytes:
* ``pass<U+200B>word=v``: a zero-width space is not shown; a reader sees ``password=v``;
* ``passx<BS>word=v``: a terminal moves back over ``x`` and overprints it with ``w`` (what
  ``col -b`` and ``less`` also do with overstrike): ``password=v``;
* ``value=&#x51;…``: an HTML character reference is the character to a browser or template
  engine, so the value is a password's value;
* ``-----begin rsa private key-----``: the same block in lower case (a reader, and the
  red team's rule, take it for a key; PEM parsers are case-sensitive, so this is caution);
* ``spring.datasource.pass\\`` then ``    word=v``: ``java.util.Properties`` joins a line
  ending in an odd number of backslashes with the next, dropping that line's leading blanks,
  so the key is ``spring.datasource.password``.
Each value is withheld by ``read_file``, ``cat``, ``head``, ``sort`` and the grep tool, and the
benign look-alikes (an ``&amp;`` in XML, a continued command line, a backslash-ended path, a
``BEGIN PUBLIC KEY``) come out byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._redact import redact, redact_file

SECRET = "QP4FxnkApfYnVX6JKNoI"


def _key(c: str) -> str:
    body = "MIIEowIBAAKCAQEA" + c + "x7Qp9" + c[::-1] + "IDAQABAoIBAQC" + c
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return ("-----begin rsa private key-----\n" + "\n".join(lines)
            + "\n-----END RSA PRIVATE KEY-----\n")


TRICKS = {
    "zwsp-key.conf": f"pass\u200bword={SECRET}\n",
    "bs-key.conf": f"passx\bword={SECRET}\n",
    "html-ent.conf": f"<input name=password value=&#x{ord(SECRET[0]):x};{SECRET[1:]}>\n",
    "lower-hdr.txt": _key(SECRET),
    "app2.properties": f"spring.datasource.pass\\\n    word={SECRET}\n",
}

BENIGN = {
    "pom.xml": "<url>https://example.org/?a=1&amp;b=2&#x26;c=3</url>\n",
    "run.sh": "vllm serve /models/kimi \\\n    --port 8000 \\\n    --tensor-parallel-size 8\n",
    "paths.ini": "[paths]\nroot = C:\\\\\nnext = D:\\data\n",
    "pub.pem": ("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
                "-----END PUBLIC KEY-----\n"),
    "app.properties": "server.\\\n    port=8080\nspring.datasource.url=jdbc:postgresql://db/app\n",
    "note.txt": "a\u200bb and x\bx bold\n",
}


def _call(root: Path, tool: str, args: dict[str, Any]) -> str:
    out = anyio.run(Sandbox(Host.at(root), task_id="t").call, tool, args)
    return f"{out.error} {out.data} {[e.excerpt for e in out.evidence]}"


def _readers(name: str) -> list[tuple[str, dict[str, Any]]]:
    path = f"/x/{name}"
    return [("read_file", {"path": path}),
            ("run_command", {"argv": ["cat", path]}),
            ("run_command", {"argv": ["head", "-n", "5", path]}),
            ("run_command", {"argv": ["sort", path]}),
            ("grep", {"pattern": "word|value|[A-Za-z]{6}", "path": "/x"})]


@pytest.mark.parametrize("name", list(TRICKS))
def test_a_spelling_trick_does_not_keep_the_value(name: str, tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / name).write_text(TRICKS[name], encoding="utf-8")
    for tool, args in _readers(name):
        shown = _call(tmp_path, tool, args)
        pieces = [SECRET[i:i + 10] for i in range(len(SECRET) - 9)]
        assert not any(p in shown for p in pieces), (tool, args, shown[:600])


@pytest.mark.parametrize("name", list(BENIGN))
def test_benign_look_alikes_come_out_unchanged(name: str) -> None:
    assert redact_file(name, BENIGN[name]) == BENIGN[name]
    assert redact(BENIGN[name]) == BENIGN[name]
