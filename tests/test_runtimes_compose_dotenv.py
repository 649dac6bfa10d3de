"""Compose's ``.env``/``env_file`` format against compose-go's own dotenv tests
(compose-spec/compose-go, dotenv/godotenv_test.go: TestParsing, TestExpanding,
TestUnterminatedQuotes, TestLinesToIgnore), ported as data. No Compose v2 is installable here
to compare with (see test_runtimes_compose_interp.py).
"""

from __future__ import annotations

import pytest

from agentkit._hostmodel.runtimes._dotenv import DotenvError, parse_dotenv

PARSING = [  # (line, name, value): TestParsing
    ("FOO=bar", "FOO", "bar"), ("FOO =bar", "FOO", "bar"), ("FOO= bar", "FOO", "bar"),
    ('FOO="bar"', "FOO", "bar"), ("FOO='bar'", "FOO", "bar"),
    ('FOO="escaped\\"bar"', "FOO", 'escaped"bar'), ('FOO="\\"quoted\\""', "FOO", '"quoted"'),
    ("FOO=\"'d'\"", "FOO", "'d'"), ("OPTION_A: 1", "OPTION_A", "1"),
    ("OPTION_A: Foo=bar", "OPTION_A", "Foo=bar"), ("OPTION_A=1:B", "OPTION_A", "1:B"),
    ("export OPTION_A=2", "OPTION_A", "2"), ("export OPTION_B='\\n'", "OPTION_B", "\\n"),
    ("export exportFoo=2", "exportFoo", "2"), ("exportFOO=2", "exportFOO", "2"),
    ("export_FOO =2", "export_FOO", "2"), ("export.FOO= 2", "export.FOO", "2"),
    ("export\tOPTION_A=2", "OPTION_A", "2"), ("  export OPTION_A=2", "OPTION_A", "2"),
    ("\texport OPTION_A=2", "OPTION_A", "2"),
    ('export OPTION_A="export A"', "OPTION_A", "export A"),
    ('FOO="bar\\nbaz"', "FOO", "bar\nbaz"), ("FOO=a\\tb", "FOO", "a\\tb"),
    ('FOO="a\\tb"', "FOO", "a\tb"),
    ('KEY="Z\\aZ\\bZ\\fZ\\nZ\\rZ\\tZ\\vZ\\\\Z\\0123Z"', "KEY", "Z\aZ\bZ\fZ\nZ\rZ\tZ\vZ\\ZSZ"),
    ("FOO.BAR=foobar", "FOO.BAR", "foobar"), ("FOO=foobar=", "FOO", "foobar="),
    ("FOO=bar ", "FOO", "bar"), ("FOO=bar # this is foo", "FOO", "bar"),
    ("FOO=bar #this is foo", "FOO", "bar"), ("FOO=bar #", "FOO", "bar"),
    ("FOO=123#not-an-inline-comment", "FOO", "123#not-an-inline-comment"),
    ('FOO="bar#baz"', "FOO", "bar#baz"), ('FOO="bar#baz"#', "FOO", "bar#baz"),
    ('FOO="bar#baz" # comment', "FOO", "bar#baz"), ("FOO='bar#baz' # comment", "FOO", "bar#baz"),
    ('FOO="bar#baz#bang" # comment', "FOO", "bar#baz#bang"), ('FOO="ba#r"', "FOO", "ba#r"),
    ("FOO='ba#r'", "FOO", "ba#r"), ('FOO="bar\\n\\ b\\az"', "FOO", "bar\n\\ b\az"),
    ('FOO="bar\\\\\\n\\ b\\az"', "FOO", "bar\\\n\\ b\az"),
    ('FOO="bar\\\\r\\ b\\az"', "FOO", "bar\\r\\ b\az"),
    ('FOO="bar\\nbaz\\\\"', "FOO", "bar\nbaz\\"),
    ('="value"', "", "value"), (" KEY =value", "KEY", "value"), ("   KEY=value", "KEY", "value"),
    ("\tKEY=value", "KEY", "value"), ('KEY="\\0123"', "KEY", "S"), ('KEY="\\x07"', "KEY", "\\x07"),
    ('KEY="\\u12e4"', "KEY", "\\u12e4"), ('KEY="\\U00101234"', "KEY", "\\U00101234"),
]
EXPANDING = [  # (text, {name: value}): TestExpanding
    ("FOO=test\nBAR=$FOO", {"FOO": "test", "BAR": "test"}),
    ("FOO=test\nBAR=${FOO}bar", {"FOO": "test", "BAR": "testbar"}),
    ("BAR=$FOO", {"BAR": ""}),
    ('FOO=test\nBAR="quote $FOO"', {"FOO": "test", "BAR": "quote test"}),
    ("BAR='quote $FOO'", {"BAR": "quote $FOO"}),
    ('FOO="foo\\$BAR"', {"FOO": "foo$BAR"}), ('FOO="foo\\${BAR}"', {"FOO": "foo${BAR}"}),
    ('FOO=test\nBAR="foo\\${FOO} ${FOO}"', {"FOO": "test", "BAR": "foo${FOO} test"}),
    ('TEST_URLS="stratum+tcp://a:3333\nstratum+tcp://a:443"',
     {"TEST_URLS": "stratum+tcp://a:3333\nstratum+tcp://a:443"}),
]
UNTERMINATED = ['KEY="', 'KEY="value', 'KEY="value\\"', "KEY=\"value'", "KEY='", "KEY='value",
                "KEY='value\\'", "KEY='value\""]
IGNORED = ["\n", "\r\n", "\t\t ", "# Comment", "\t # comment"]


def _none(_: str) -> str | None:
    return None


@pytest.mark.parametrize("line,name,value", PARSING)
def test_parsing(line: str, name: str, value: str) -> None:
    got = parse_dotenv(line, _none)
    assert [(e.name, e.value) for e in got] == [(name, value)]


@pytest.mark.parametrize("text,want", EXPANDING)
def test_expanding(text: str, want: dict[str, str]) -> None:
    assert {e.name: e.value for e in parse_dotenv(text, _none)} == want


def test_bad_name_is_an_error() -> None:
    with pytest.raises(DotenvError):
        parse_dotenv("lol$wut", _none)


@pytest.mark.parametrize("text", UNTERMINATED)
def test_unterminated_quotes(text: str) -> None:
    with pytest.raises(DotenvError, match="unterminated quoted value"):
        parse_dotenv(text, _none)


@pytest.mark.parametrize("text", IGNORED)
def test_lines_to_ignore(text: str) -> None:
    assert parse_dotenv(text, _none) == []


def test_inherited_name_and_environment_first() -> None:
    env = {"FROM_SHELL": "s", "FOO": "shell"}.get
    got = parse_dotenv("FROM_SHELL\nUNSET_HERE\nFOO=file\nBAR=$FOO\n", env)
    assert [(e.name, e.value, e.line) for e in got] == [
        ("FROM_SHELL", "s", 1), ("FOO", "file", 3), ("BAR", "shell", 4)]
