"""Compose's ``.env``/``env_file`` format against compose-go's own dotenv tests
(compose-spec/compose-go, dotenv/godotenv_test.go: TestParsing, TestExpanding,
TestUnterminatedQuotes, TestLinesToIgnore), ported as data. No Compose v2 is installable here
to compare with (see test_runtimes_compose_interp.py).
"""

from __future__ import annotations

import re

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


# What the user is told, and the edges compose-go's own tests leave out. Expected values are
# compose-go's (dotenv/parser.go): its error texts carry the line its counter is on; octal
# escapes go through Go's strconv.UnquoteChar after `\0` becomes `\`, which wants exactly three
# octal digits worth at most 255 and otherwise leaves the sequence as written; unknown escapes
# (`\c`) stay as written too.
def _error(text: str) -> str:
    with pytest.raises(DotenvError) as got:
        parse_dotenv(text, _none)
    return str(got.value)


def test_key_with_a_space_names_its_line() -> None:
    # compose-go's fixtures/invalid1.env: TestErrorParsing wants "line 7: key cannot …"
    text = '# some comments\nfoo="\n  a\n  multine\n  value\n"\nINVALID LINE\nzot=qix'
    assert _error(text) == "line 7: key cannot contain a space"


def test_bad_character_names_its_line_and_only_that_line() -> None:
    # TestParseVariable's line, here on line 4 after a quoted value spanning two lines; Go
    # prints %q (double quotes) where agentkit prints Python's repr: either quote is accepted
    text = 'A=1\nB="x\ny"\n%!(EXTRA string)=foo\nC=2\nD=3\n'
    assert re.fullmatch(r"""line 4: unexpected character (["'])%\1 in variable name """
                        r"""(["'])%!\(EXTRA string\)=foo\2""", _error(text))


def test_unterminated_quote_names_the_line_it_opens_on() -> None:
    # compose-go's counter has run to the end of the file by then (it would say line 4 here);
    # agentkit names the line the quote opens on, where the fix is; the text quoted is the
    # rest of that line from the quote, as compose-go prints it
    assert _error('A=1\nB="a b\nc\nd\n') == 'line 2: unterminated quoted value "a b'


def test_export_with_nothing_after_it_is_refused() -> None:
    # `^export\s+` matches, the rest is empty: compose-go's "zero length string" error
    assert "zero length string" in _error("A=1\nexport ")


OCTAL = [  # (escape inside double quotes, value): strconv.UnquoteChar on `\` + the digits
    ("\\0377", "\xff"), ("\\0000", "\x00"), ("\\0400", "\\0400"), ("\\0777", "\\0777"),
    ("\\012", "\\012"), ("\\01", "\\01"), ("\\0", "\\0"), ("\\0128", "\\0128"),
    ("\\0099", "\\0099"), ("\\01234", "S4"), ("\\c", "\\c"), ("a\\qb", "a\\qb"),
]


@pytest.mark.parametrize("escape,value", OCTAL)
def test_octal_and_unknown_escapes(escape: str, value: str) -> None:
    assert [(e.name, e.value) for e in parse_dotenv(f'K="{escape}"', _none)] == [("K", value)]


EDGES = [  # (text, [(name, value, line)]): compose-go's parser walked by hand
    ("A=", [("A", "", 1)]),                               # a value empty at the end of text
    ("A=1\nFOO", [("A", "1", 1), ("", "FOO", 2)]),      # no separator: the line is the value
    ("\n\nA=1", [("A", "1", 3)]),                         # lines count from the first byte
    ("# c\nA=1\n# d\nB=2\n# e", [("A", "1", 2), ("B", "2", 4)]),  # comments after line 1
    ("exportXY=2", [("exportXY", "2", 1)]),             # `export` needs a blank after it
    ("MAX_X=1", [("MAX_X", "1", 1)]), ("A=XaX", [("A", "XaX", 1)]),
    ("A=a b", [("A", "a b", 1)]),                         # only ` #` ends an unquoted value
    ("A=a #b #c", [("A", "a", 1)]),                       # at the first ` #`
    ('A="x"B=1', [("A", "x", 1), ("B", "1", 1)]),         # the next statement right after
]


@pytest.mark.parametrize("text,want", EDGES)
def test_edges(text: str, want: list[tuple[str, str, int]]) -> None:
    assert [(e.name, e.value, e.line) for e in parse_dotenv(text, _none)] == want


def test_export_then_newline_reads_an_inherited_empty_name() -> None:
    # `^export\s+` matches `export\n`, but only blanks (not the newline) are trimmed after it:
    # the newline ends an empty name, taken from the environment; A follows on line 2
    got = parse_dotenv("export\nA=1", {"": "x"}.get)
    assert [(e.name, e.value, e.line) for e in got] == [("", "x", 1), ("A", "1", 2)]
