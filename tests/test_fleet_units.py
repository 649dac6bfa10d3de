"""The fleet's building blocks called directly, each expectation from what the fleet promises
(docs/fleet.md, the modules' docstrings) or from ClusterShell's and Slurm's own semantics:
fast enough to be the mutation targets' tests (python -m tests.mutation fleet-*)."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

from agentkit._catalog._template import Compare
from agentkit._fleet._fold import MAX_WHERE, Fold
from agentkit._fleet._names import MAX_HOSTS, InventoryError, check_name, expand
from agentkit._fleet._outcome import HostOutcome
from agentkit._types import Fact, TaskResult

# ---------------------------------------------------------------- the fold


def _ok(value: Any) -> list[TaskResult]:
    return [TaskResult(task_id="t", status="ok", summary="", facts={"k": Fact(value=value)})]


def _fold(per_host: dict[str, Any]) -> dict[frozenset[str], str]:
    """Fact ``k``'s groups: the hosts of each, with the group's text."""
    f = Fold("test", list(per_host))
    for h, v in per_host.items():
        f.add(HostOutcome(host=h, status="ok", results=_ok(v)))
    [k] = [x for x in f.fleet().facts if x.fact == "k"]
    return {frozenset(expand(g.nodes)): g.text for g in k.groups}


def test_nan_and_the_infinities_are_three_values_and_none_of_them_null() -> None:
    # RFC 8259 has no NaN or infinity: orjson would write each as null, which would make a
    # host whose value is NaN "the same" as one with -inf or with no value at all
    groups = _fold({"a": math.nan, "b": math.inf, "c": -math.inf, "d": None, "e": None})
    assert set(groups) == {frozenset("a"), frozenset("b"), frozenset("c"), frozenset("de")}


def test_a_non_finite_number_reads_as_the_number() -> None:
    # a number in plain words: not the comparison key's private marker
    groups = _fold({"a": math.inf, "b": -math.inf, "c": math.nan, "d": 1})
    assert groups[frozenset("a")] == "inf"
    assert groups[frozenset("b")] == "-inf"
    assert groups[frozenset("c")] == "nan"


def test_a_value_that_is_not_json_compares_as_its_json_form() -> None:
    # a snapshot fleet's results are Python objects; the trace (and so a replay) holds them as
    # JSON, where a path or a decimal is its string: the live fold must group them the same way
    for obj, text in ((Path("/x"), "/x"), (Decimal("1.5"), "1.5")):
        assert TaskResult.model_validate_json(
            _ok(obj)[0].model_dump_json()).facts["k"].value == text
        groups = _fold({"a": obj, "b": text, "c": "other"})
        assert set(groups) == {frozenset("ab"), frozenset("c")}


def _where_fold(places: list[str]) -> tuple[list[str], int]:
    specs = {"t": [Compare(fact="env", each=True)]}
    hosts = [f"h{i}" for i in range(len(places))]
    f = Fold("test", hosts, ["t"], specs)
    for h, where in zip(hosts, places, strict=True):
        f.add(HostOutcome(host=h, status="ok", results=[TaskResult(
            task_id="t", status="ok", summary="", facts={"env": Fact(value=[
                {"name": "NCCL_PROTO", "value": "Simple", "where": where}])})]))
    [proto] = [x for x in f.fleet().compared if x.label == "NCCL_PROTO"]
    [g] = proto.groups
    return g.where, g.where_more


def test_a_value_set_in_many_places_keeps_three_and_counts_the_other_places() -> None:
    # _fleet_model.FleetGroup: "at most a few distinct places, sorted; more are counted in
    # where_more" -- distinct places, so a place seen on many hosts is one more place
    assert MAX_WHERE == 3
    assert _where_fold(["/c:1", "/a:1", "/b:1"]) == (["/a:1", "/b:1", "/c:1"], 0)
    assert _where_fold(["/c:1", "/a:1", "/b:1", "/d:1"]) == (["/a:1", "/b:1", "/c:1"], 1)
    assert _where_fold(["/a:1", "/b:1", "/c:1", "/d:1", "/d:1", "/e:1", "/a:1"]) == (
        ["/a:1", "/b:1", "/c:1"], 2)


# ---------------------------------------------------------------- host names


def _error(call: Any, *args: Any) -> str:
    try:
        call(*args)
    except InventoryError as exc:
        return str(exc)
    raise AssertionError(f"{call.__name__}{args!r} was accepted")


def test_an_inventory_error_says_what_was_wrong_and_what_to_do() -> None:
    # InventoryError: "the message says what was wrong and what to do" (the CLI prints it as
    # its one line): the input as given, then the remedy
    said = _error(check_name, "h,1")
    assert said.startswith("host name 'h,1' is not a plain host name")
    assert "give ranges as gpu[01-64] and lists as gpu01,gpu02" in said
    said = _error(expand, "@all")
    assert said.startswith("'@all' names no hosts: give a range such as gpu[01-64]")
    assert "comma-separated list (node groups, @name, are not read)" in said
    said = _error(expand, "gpu[01-")
    assert said.startswith("cannot read the host range 'gpu[01-': ")
    said = _error(expand, "n[1-100001]")
    assert said == ("'n[1-100001]' expands to 100001 hosts, more than 100000: check the range")


def test_exactly_the_host_limit_is_a_fleet() -> None:
    # MAX_HOSTS: "a range that expands past this is a typo": the limit itself is allowed
    assert MAX_HOSTS == 100_000
    hosts = expand("n[1-100000]")
    assert len(hosts) == MAX_HOSTS and hosts[0] == "n1" and hosts[-1] == "n100000"


def test_a_wildcard_is_not_matched_against_a_group_configuration() -> None:
    # given a group resolver, ClusterShell's parser matches a pattern with '*' or '?' against
    # the resolver's "all nodes" (ParsingEngine.parse_string): with no group file here that is
    # no host at all, silently; with RESOLVER_NOGROUP it is the literal name, refused
    for spec in ("gpu*", "gpu?", "gpu[1-2]*"):
        assert "is not a plain host name" in _error(expand, spec)
