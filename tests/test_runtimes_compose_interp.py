"""Compose interpolation against compose-go's own template tests (compose-spec/compose-go,
template/template_test.go), ported as data.

No differential oracle runs here, deliberately: the Compose v2 implementation (the ``docker
compose`` plugin, a Go binary) is not installable from the registries this project uses (no
PyPI package ships it, Debian bookworm has none), and Debian's ``docker-compose`` 1.29 is
Compose v1, written in Python, whose interpolation and ``env_file`` parsing differ from v2's
(what a host that runs ``docker compose`` does), so agreeing with it would prove nothing.
"""

from __future__ import annotations

import pytest

from agentkit._hostmodel.runtimes._interp import InvalidTemplate, MissingRequired, substitute

DEFAULTS = {"FOO": "first", "BAR": "", "JSON": '{"json":2}'}

VECTORS = [  # (template, expected) with FOO=first, BAR="" and JSON set
    ("$${foo}", "${foo}"), ("foo", "foo"), ("a $ string", "a $ string"), ("^REGEX$", "^REGEX$"),
    ("$}", "$}"), ("$", "$"), ("$FOO-bar", "first-bar"),
    ("This ${missing} var", "This  var"), ("This ${BAR} var", "This  var"),
    ("This $FOO var", "This first var"), ("This ${FOO} var", "This first var"),
    ("ok ${missing:-def}", "ok def"), ("ok ${missing-def}", "ok def"),
    ("${A:+${A},}B", "B"), ("${A:-${B}}", ""),
    ("ok ${BAR:-def}", "ok def"), ("ok ${FOO:-def}", "ok first"), ("ok ${BAR-def}", "ok "),
    ("ok ${UNSET_VAR:+presence_value}", "ok "), ("ok ${UNSET_VAR+presence_value}", "ok "),
    ("ok ${FOO:+presence_value}", "ok presence_value"),
    ("ok ${FOO+presence_value}", "ok presence_value"),
    ("ok ${BAR+presence_value}", "ok presence_value"), ("ok ${BAR:+presence_value}", "ok "),
    ("ok ${BAR:-/non:-alphanumeric}", "ok /non:-alphanumeric"),
    ("-ok ${BAR:-defaultValue}", "-ok defaultValue"), ("+ok ${UNSET:-${BAR-defaultValue}}", "+ok "),
    ("-ok ${FOO:-defaultValue}", "-ok first"), (":-ok ${UNSET-defaultValue}", ":-ok defaultValue"),
    (":-ok ${BAR-defaultValue}", ":-ok "), (":?ok ${BAR-defaultValue}", ":?ok "),
    (":?ok ${BAR:-defaultValue}", ":?ok defaultValue"),
    (":+ok ${BAR:-defaultValue}", ":+ok defaultValue"), ("+ok ${BAR-defaultValue}", "+ok "),
    ("?ok ${BAR:-defaultValue}", "?ok defaultValue"),
    ("ok ${UNSET_VAR-$FOO}", "ok first"), ("ok ${UNSET_VAR-${FOO}}", "ok first"),
    ("ok ${UNSET_VAR-${FOO} ${FOO}}", "ok first first"), ("ok ${BAR:-$FOO}", "ok first"),
    ("ok ${BAR:-${FOO}}", "ok first"), ("ok ${BAR:-${FOO} ${FOO}}", "ok first first"),
    ("ok ${BAR+$FOO}", "ok first"), ("ok ${BAR+$FOO ${FOO:+second}}", "ok first second"),
    ("ok ${FOO:?err}", "ok first"), ("ok ${FOO?err}", "ok first"), ("ok ${BAR?err}", "ok "),
    ("${UNSET_VAR-myerror?msg}", "myerror?msg"), ("${FOO?bar-baz}", "first"),
    ("${BAR:-default_value_for_empty_var}", "default_value_for_empty_var"),
    ("${UNSET_VAR-default_value_for_unset_var}", "default_value_for_unset_var"),
    ('ok ${missing:-{"json":1}}', 'ok {"json":1}'), ('ok ${missing-{"json":1}}', 'ok {"json":1}'),
    ('ok ${JSON:-{"json":1}}', 'ok {"json":2}'), ('ok ${JSON-{"json":1}}', 'ok {"json":2}'),
    ("ok ${SUBDOMAIN:-redis}.${FOO:?}", "ok redis.first"),
]
INVALID = ["${", "${}", "${ }", "${ foo}", "${foo }", "${foo!}"]
MISSING = [  # (template, message)
    ("not ok ${UNSET_VAR:?Mandatory Variable Unset}",
     "required variable UNSET_VAR is missing a value: Mandatory Variable Unset"),
    ("not ok ${BAR:?Mandatory Variable Empty}",
     "required variable BAR is missing a value: Mandatory Variable Empty"),
    ("not ok ${UNSET_VAR:?}", "required variable UNSET_VAR is missing a value"),
    ("not ok ${UNSET_VAR?Mandatory Variable Unset}",
     "required variable UNSET_VAR is missing a value: Mandatory Variable Unset"),
    ("not ok ${UNSET_VAR?}", "required variable UNSET_VAR is missing a value"),
    ("not ok ${UNSET_VAR:?Mandatory Variable ${FOO}}",
     "required variable UNSET_VAR is missing a value: Mandatory Variable first"),
    ("not ok ${UNSET_VAR?Mandatory Variable ${FOO}}",
     "required variable UNSET_VAR is missing a value: Mandatory Variable first"),
    ("${UNSET_VAR?bar-baz}", "required variable UNSET_VAR is missing a value: bar-baz"),
]


@pytest.mark.parametrize("template,expected", VECTORS)
def test_compose_go_template_vectors(template: str, expected: str) -> None:
    assert substitute(template, DEFAULTS.get) == expected


@pytest.mark.parametrize("template", INVALID)
def test_invalid_templates(template: str) -> None:
    with pytest.raises(InvalidTemplate):
        substitute(template, DEFAULTS.get)


@pytest.mark.parametrize("template,message", MISSING)
def test_required_variables(template: str, message: str) -> None:
    with pytest.raises(MissingRequired) as err:
        substitute(template, DEFAULTS.get)
    assert str(err.value) == message
