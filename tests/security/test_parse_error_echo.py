"""Issue 28, red team rt3 P-A: a parser's error must not quote a line of the file that holds
a secret.

The red team's file: ``DB_PASSWORD="line-one`` then ``<secret>"``, a double-quoted value
over two lines, which python-dotenv and docker compose read as one value (compose:
"double-quoted values may span lines"; python-dotenv's quoted values match across newlines,
single quotes too). agentkit's dotenv reading saw line 2 as a line of its own, so the
redactor did not see it as part of DB_PASSWORD's value and the parse error quoted it.

Expected behaviour, written before the fix:
* the redactor, in a dotenv file, takes a quoted value that does not close on its line as
  going on to its closing quote: the lines after the first get the first line's verdict (a
  value under a secret's name is withheld whole), so ``read_file``/``cat`` do not show line 2;
* ``parse_config`` reads such a value as python-dotenv does (one entry, its value hidden
  under a secret's name), so there is no error at all;
* the error of a line that really is malformed names file and line and what was expected,
  not the line's text; so do the INI, YAML, TOML and JSON errors, whose messages quoted the
  offending text (configparser quotes whole lines).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import Host, Sandbox
from agentkit._sandbox._redact import redact_file

SECRET = "QP4FxnkApfYnVX6JKNoI"  # the red team's canary shape


def _call(root: Path, tool: str, args: dict[str, Any]) -> Any:
    return anyio.run(Sandbox(Host.at(root), task_id="t").call, tool, args)


def _write(root: Path, name: str, text: str) -> str:
    (root / "x").mkdir(exist_ok=True)
    (root / "x" / name).write_text(text, encoding="utf-8")
    return f"/x/{name}"


def _shown(out: Any) -> str:
    return f"{out.error} {out.data} {[e.excerpt for e in out.evidence]}"


MULTILINE = {
    "double": f'DB_PASSWORD="line-one\n{SECRET}"\nOTHER=1\n',
    "single": f"API_SECRET='{SECRET[:10]}\n{SECRET[10:]}'\nOTHER=1\n",
    "three lines": f'DB_PASSWORD="a\nb {SECRET}\n{SECRET}"\nOTHER=1\n',
}


@pytest.mark.parametrize("case", list(MULTILINE))
def test_a_multiline_secret_value_is_read_whole_and_hidden(case: str, tmp_path: Path) -> None:
    text = MULTILINE[case]
    path = _write(tmp_path, "app.env", text)
    for fmt in ("dotenv", "auto"):
        out = _call(tmp_path, "parse_config", {"path": path, "format": fmt})
        assert out.ok, out.error
        assert SECRET[:10] not in _shown(out) and SECRET[10:] not in _shown(out)
        entries = {e["key"]: e["value"] for e in out.data["entries"]}
        assert set(entries) == {text.split("=")[0], "OTHER"}, entries
        assert entries["OTHER"] == "1"
    red = redact_file("app.env", text)
    assert SECRET[:10] not in red and SECRET[10:] not in red, red
    read = _call(tmp_path, "read_file", {"path": path})
    assert SECRET[10:] not in _shown(read)


@pytest.mark.parametrize("name,text,fmt", [
    ("bad.env", f"OTHER=1\n{SECRET}\n", "dotenv"),
    ("bad2.env", f"OTHER=1\n{SECRET} x=1\n", "dotenv"),
    ("bad.ini", f"[db]\nhost = x\n{SECRET}\n", "ini"),
    ("nohead.ini", f"{SECRET} = 1\n", "ini"),
    ("bad.yaml", f"db:\n  host: *{SECRET}\n", "yaml"),
    ("bad2.yaml", f"db: !{SECRET}!x y\n", "yaml"),
    ("bad.toml", f"[db]\nhost = {SECRET}\n", "toml"),
    ("bad.json", f'{{"host": {SECRET}}}', "json"),
])
def test_a_parse_error_names_the_line_not_its_text(name: str, text: str, fmt: str,
                                                   tmp_path: Path) -> None:
    path = _write(tmp_path, name, text)
    out = _call(tmp_path, "parse_config", {"path": path, "format": fmt})
    assert not out.ok
    assert SECRET[:10] not in out.error and SECRET[10:] not in out.error, out.error
    assert f"/x/{name}" in out.error


# Differential: python-dotenv reads the same names and values (values without escapes).
_WORDS = st.text("abcXYZ019 -_", min_size=1, max_size=12).filter(lambda s: s.strip())
_LINES = st.lists(_WORDS, min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(st.tuples(st.sampled_from(["A", "B_C", "D1"]), _LINES,
                                  st.sampled_from(["'", '"'])), min_size=1, max_size=4))
def test_multiline_values_as_python_dotenv_reads_them(
        entries: list[tuple[str, list[str], str]]) -> None:
    import io

    from dotenv import dotenv_values

    from agentkit._sandbox._systemd_envfile import parse_dotenv

    text = "".join(f"{n}={q}{chr(10).join(v)}{q}\n" for n, v, q in entries)
    want = dict(dotenv_values(stream=io.StringIO(text)))
    got = {e.name: e.value for e in parse_dotenv(text, "/x/app.env")}
    assert got == want, text


def test_a_unit_naming_a_file_with_an_unclosed_quote_still_parses(tmp_path: Path) -> None:
    """A relative EnvironmentFile= (systemd ignores the line) whose file, read from /, opens a
    quote it never closes: what it would set is not established, the unit still parses, and
    nothing of the file is quoted."""
    (tmp_path / "etc" / "systemd" / "system").mkdir(parents=True)
    (tmp_path / "etc" / "app.env").write_text(f'DB_PASSWORD="{SECRET}\n', encoding="utf-8")
    (tmp_path / "etc" / "systemd" / "system" / "a.service").write_text(
        "[Service]\nEnvironmentFile=etc/app.env\nExecStart=/bin/true\n", encoding="utf-8")
    out = _call(tmp_path, "parse_config", {"path": "/etc/systemd/system/a.service"})
    assert out.ok, out.error
    assert "does not read as NAME=value" in str(out.data)
    assert SECRET[:10] not in _shown(out)
