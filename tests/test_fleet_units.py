"""The fleet's building blocks called directly, each expectation from what the fleet promises
(docs/fleet.md, the modules' docstrings) or from ClusterShell's and Slurm's own semantics:
fast enough to be the mutation targets' tests (python -m tests.mutation fleet-*)."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from agentkit._catalog._template import Compare
from agentkit._fleet._bottom import (
    MAX_BULLETS,
    _fact_line,
    _more_facts,
    _more_problems,
    bottom_line,
    merged,
)
from agentkit._fleet._fold import MAX_TEXT, MAX_WHERE, Fold
from agentkit._fleet._meaning import each_facts, meanings
from agentkit._fleet._names import MAX_HOSTS, InventoryError, check_name, expand
from agentkit._fleet._outcome import Batch, HostOutcome
from agentkit._fleet_model import Fleet, FleetFact, FleetGroup, FleetProblem
from agentkit._types import Evidence, Fact, Finding, TaskResult

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


def test_numbers_are_compared_as_json_numbers_across_the_whole_integer_range() -> None:
    # RFC 8259: 1 and 1.0 are one number; a host may send integers from -2**63 to 2**64 - 1
    # (what orjson writes, agentkit._bounded), so an integral float anywhere in that range is
    # the integer it equals, and one past it stays a float and is still folded
    for x in (200, -200, -(2**63), 2**63, 10**19, 2**64 - 2048):
        assert set(_fold({"a": float(x), "b": x, "c": 7})) == {frozenset("ab"), frozenset("c")}
    assert set(_fold({"a": 1.5, "b": 1, "c": 1.5})) == {frozenset("ac"), frozenset("b")}
    for big in (1e20, -1e19, 2.0**64, 1e300, -1e300):
        assert set(_fold({"a": big, "b": big, "c": 7})) == {frozenset("ab"), frozenset("c")}


def test_lists_are_compared_element_by_element() -> None:
    assert set(_fold({"a": [1, 2], "b": [3, 4], "c": [1, 2]})) == {frozenset("ac"),
                                                                   frozenset("b")}


def test_a_group_carries_the_value_itself_and_reads_it_in_plain_words() -> None:
    f = Fold("test", ["a", "b"])
    for h, v in (("a", {"x": [1, 2]}), ("b", {"x": [1, 2]})):
        f.add(HostOutcome(host=h, status="ok", results=_ok(v)))
    [k] = [x for x in f.fleet().facts if x.fact == "k"]
    assert k.groups[0].value == {"x": [1, 2]}


def test_a_long_value_is_cut_to_the_limit_with_an_ellipsis() -> None:
    assert MAX_TEXT == 400
    whole, long = "x" * 400, "y" * 401
    groups = _fold({"a": whole, "b": long})
    assert groups[frozenset("a")] == whole
    assert groups[frozenset("b")] == "y" * 399 + "…"


def _result(facts: dict[str, Fact], claims: list[str] = (), evidence: list[Evidence] = (),
            status: str = "ok") -> TaskResult:
    return TaskResult(task_id="t", status=status, summary="", facts=facts,
                      evidence=list(evidence),
                      findings=[Finding(claim=c, headline=True) for c in claims])


def _facts(per_host: dict[str, list[TaskResult]], **kw: Any) -> tuple[Fold, Fleet]:
    f = Fold("test", list(per_host), **kw)
    for h, results in per_host.items():
        f.add(HostOutcome(host=h, status="ok", results=results))
    return f, f.fleet()


def _fact(fleet: Fleet, name: str) -> FleetFact:
    [fact] = [x for x in [*fleet.facts, *fleet.compared] if (x.label or x.fact) == name]
    return fact


def test_each_task_is_compared_on_its_status_its_headline_claims_and_its_facts() -> None:
    # _fold._facts: "its status, its headline claims, and its facts but those in NOT_COMPARED"
    _, fleet = _facts({"a": [_result({"k": Fact(value=1)}, ["NCCL is tuned", "P2P is on"])],
                       "b": [_result({"k": Fact(value=1), "host": Fact(value={})}, [])]})
    assert {f.fact for f in fleet.facts} == {"status", "findings", "k"}
    texts = {g.text for g in _fact(fleet, "findings").groups}
    assert texts == {"NCCL is tuned / P2P is on", "(none)"}


def test_a_fact_a_host_did_not_establish_reads_not_established() -> None:
    _, fleet = _facts({"a": [_result({"k": Fact(value=1)})], "b": [_result({})],
                       "c": [_result({"k": Fact(value=1)})]})
    assert [(g.text, g.nodes) for g in _fact(fleet, "k").groups] == [("1", "a,c"),
                                                                   ("(not established)", "b")]


def test_a_problem_host_says_why_its_results_cannot_be_compared() -> None:
    r = _result({"k": Fact(value=1)})
    _, fleet = _facts({"a": [r, r], "b": [r], "c": [r.model_copy(update={"task_id": "u"})],
                       "d": [_result({"k": Fact(value=2**70)})]}, tasks=["t"])
    said = {p.nodes: p.error for p in fleet.problems}
    assert said["a"] == "the host's results cannot be compared: task 't' is reported twice"
    assert said["c"] == "the host's results cannot be compared: task 'u' was not asked"
    assert said["d"].startswith("the host's results cannot be compared: an integer of 71 bits")
    assert fleet.buckets["ok"] == "b"


def _model(decision: str | None) -> list[TaskResult]:
    host: dict[str, Any] = {"servers": []}
    if decision is not None:
        host["decision"] = decision
    return [_result({"host": Fact(value=host), "k": Fact(value=1)})]


def test_a_host_with_no_model_server_gives_its_host_models_reason() -> None:
    # "no-server", "with the model's own decision as reason" (decisions sorted, joined)
    _, fleet = _facts({"a": _model("no unit runs a server"), "b": _model(None),
                       "c": _model(""), "d": _model("x" * 400)})
    said = {p.nodes: p.error for p in fleet.problems}
    assert said["a"] == "no model server found: no unit runs a server"
    assert said["b,c"] == "no model server found: the host model lists none"
    assert said["d"] == "no model server found: " + "x" * 300
    f = Fold("test", ["a"])
    f.add(HostOutcome(host="a", status="ok", results=[*_model("one"), _result(
        {"host": Fact(value={"servers": [], "decision": "two"})}).model_copy(
        update={"task_id": "u"})]))
    [p] = f.fleet().problems
    assert p.error == "no model server found: one; two"
    f = Fold("test", ["a"])  # an empty decision beside a real one is no reason
    f.add(HostOutcome(host="a", status="ok", results=[*_model(""), _result(
        {"host": Fact(value={"servers": [], "decision": "one"})}).model_copy(
        update={"task_id": "u"})]))
    [p] = f.fleet().problems
    assert p.error == "no model server found: one"


def test_a_citation_names_the_hosts_that_showed_it_and_what_they_saw() -> None:
    ev = Evidence.of("file", "/etc/nccl.conf:1", "NCCL_PROTO=LL", "NCCL_PROTO=LL")
    # the same content at the same locator by another kind, and at another locator: each
    # its own citation
    other = Evidence.of("command", "/etc/nccl.conf:1", "NCCL_PROTO=LL", "NCCL_PROTO=LL")
    elsewhere = Evidence.of("file", "/etc/b.conf:1", "NCCL_PROTO=LL", "NCCL_PROTO=LL")
    # host a cites an id it never showed, then the real one twice; b cites nothing
    f, fleet = _facts({"a": [_result({"k": Fact(value=1, evidence=["Emissing", ev.id, ev.id,
                                                                      other.id, elsewhere.id])},
                                     evidence=[ev, other, elsewhere])],
                       "b": [_result({"k": Fact(value=1)})]})
    [g] = _fact(fleet, "k").groups
    cited = [f.evidence()[i] for i in g.evidence]
    assert sorted((c.kind, c.locator) for c in cited) == [
        ("command", "/etc/nccl.conf:1"), ("file", "/etc/b.conf:1"), ("file", "/etc/nccl.conf:1")]
    [file] = [c for c in cited if c.locator == ev.locator and c.kind == "file"]
    assert (file.host, file.sha256, file.excerpt) == ("a", ev.sha256, "NCCL_PROTO=LL")


def test_a_citation_of_different_contents_keeps_no_one_hosts_content() -> None:
    ya = Evidence.of("file", "/etc/y:1", "Y=a", "Y=a")
    yb = Evidence.of("file", "/etc/y:1", "Y=b", "Y=b")
    y2 = Evidence.of("file", "/etc/z:1", "Z=1", "Z=1")
    f, fleet = _facts({"a": [_result({"k": Fact(value=1, evidence=[ya.id, y2.id])},
                                     evidence=[ya, y2])],
                       "b": [_result({"k": Fact(value=1, evidence=[yb.id])}, evidence=[yb])]})
    cited = {f.evidence()[i].locator: f.evidence()[i] for i in _fact(fleet, "k").groups[0].evidence}
    assert set(cited) == {"/etc/y:1", "/etc/z:1"}  # two locators: two citations
    y = cited["/etc/y:1"]
    assert (y.host, y.sha256) == ("a,b", "")
    assert y.excerpt == ("(what these hosts saw here differs in content; each host's own is "
                         "in the trace)")


def test_a_compared_settings_citation_names_only_the_hosts_that_cited_it() -> None:
    ev = Evidence.of("file", "/u.service:15", "NCCL_PROTO=Simple", "NCCL_PROTO=Simple")
    item = {"name": "NCCL_PROTO", "value": "Simple", "where": "/u.service:15"}
    specs = {"t": [Compare(fact="env", each=True)]}
    f, fleet = _facts({"a": [_result({"env": Fact(value=[{**item, "evidence_id": ev.id}])},
                                     evidence=[ev])],
                       "b": [_result({"env": Fact(value=[item])})],
                       "c": [_result({"env": Fact(value=[item])})]}, tasks=["t"],
                      compare=specs)
    [g] = _fact(fleet, "NCCL_PROTO").groups
    [cid] = g.evidence
    assert g.nodes == "a,b,c" and f.evidence()[cid].host == "a"


def _statuses(*statuses: str) -> list[TaskResult]:
    return [TaskResult(task_id=f"t{i}", status=st, summary=f"why {st} {i % 2}", facts={})
            for i, st in enumerate(statuses)]


def test_a_host_whose_every_task_failed_has_nothing_to_compare() -> None:
    # _bucket: "failed"/"timed-out" when it answered but not one of its tasks did; the reason
    # is every distinct summary, sorted
    f = Fold("test", ["a", "b", "c", "d", "e"])
    for h, results in (("a", _statuses("failed", "failed", "failed")),
                       ("b", _statuses("timed-out", "timed-out")),
                       ("c", _statuses("failed", "timed-out")),
                       ("d", []), ("e", _statuses("ok", "failed"))):
        f.add(HostOutcome(host=h, status="ok", results=results))
    fleet = f.fleet()
    said = {p.nodes: (p.bucket, p.error) for p in fleet.problems}
    assert said["a"] == ("failed", "every task failed: why failed 0; why failed 1")
    assert said["b"] == ("timed-out", "every task failed: why timed-out 0; why timed-out 1")
    assert said["c"] == ("failed", "every task failed: why failed 0; why timed-out 1")
    assert said["d"] == ("failed", "every task failed: it returned no task results")
    assert fleet.buckets["ok"] == "e"
    assert fleet.recap == "ok=1 differs=0 failed=3 timed-out=1"
    none_ok = Fold("test", ["x"])
    none_ok.add(HostOutcome(host="x", status="unreachable", error="refused"))
    assert none_ok.fleet().recap == "ok=0 differs=0 unreachable=1"  # ok and differs always
    f = Fold("test", ["long"])
    f.add(HostOutcome(host="long", status="ok", results=[TaskResult(
        task_id="t", status="failed", summary="s" * 600, facts={})]))
    [p] = f.fleet().problems
    assert p.error == "every task failed: " + "s" * 500  # the reason is cut at 500


def test_problems_are_listed_largest_first_then_by_bucket_and_reason() -> None:
    f = Fold("test", ["a", "b", "c", "y", "z"])
    for h, status, error in (("a", "unreachable", "refused"), ("b", "unreachable", "refused"),
                             ("c", "unreachable", "refused"), ("z", "failed", "boom"),
                             ("y", "unreachable", "again")):
        f.add(HostOutcome(host=h, status=status, error=error))  # type: ignore[arg-type]
    assert [(p.nodes, p.error) for p in f.fleet().problems] == [
        ("a,b,c", "refused"), ("z", "boom"), ("y", "again")]


def test_a_setting_a_hosts_list_lacks_is_the_value_unset() -> None:
    specs = {"t": [Compare(fact="env", each=True)]}
    set_ = [{"name": "NCCL_PROTO", "value": "LL"}]
    _, fleet = _facts({"a": [_result({"env": Fact(value=set_)})],
                       "b": [_result({"env": Fact(value=set_)})],
                       "c": [_result({"env": Fact(value=[])})]}, tasks=["t"], compare=specs)
    groups = _fact(fleet, "NCCL_PROTO").groups
    assert [(g.value, g.text, g.nodes) for g in groups] == [("LL", "LL", "a,b"),
                                                          ("unset", "unset", "c")]


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
    assert said.endswith("; give ranges as gpu[01-64] and lists as gpu01,gpu02")
    said = _error(expand, "@all")
    assert said.startswith("'@all' names no hosts: give a range such as gpu[01-64]")
    assert said.endswith(" or a comma-separated list (node groups, @name, are not read)")
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


# ---------------------------------------------------------------- compared facts


def test_compared_values_are_read_as_the_templates_compare_declares() -> None:
    # Compare: "fact" names the task fact, "path" a key inside its value, "label" how the
    # answer names it (default: the fact's name, or each setting's); a fact the result lacks
    # yields nothing, and neither does a path its value does not have
    r = _result({"verdict": Fact(value={"answer": "yes", "why": "x"}, evidence=["E1"]),
                 "engine": Fact(value="vllm", evidence=["E2"]),
                 "plain": Fact(value=["a"])})
    specs = [Compare(fact="missing"), Compare(fact="verdict", path="answer", label="tuned"),
             Compare(fact="verdict", path="nope"), Compare(fact="plain", path="x"),
             Compare(fact="engine")]
    got = [(m.label, m.value, m.where, m.cites, m.each) for m in meanings(r, specs)]
    assert got == [("tuned", "yes", "", ("E1",), ""), ("engine", "vllm", "", ("E2",), "")]
    assert each_facts([*specs, Compare(fact="env", each=True)]) == ["env"]


def test_each_setting_is_its_own_value_and_a_name_set_twice_is_said_as_both() -> None:
    # _meaning._each: one meaning per named setting; a name listed twice with different
    # values is both values, never the first; its places are the distinct ones; its evidence
    # is the settings' own, else the list's
    env = [{"name": "NCCL_PROTO", "value": "LL", "where": "/a.conf:1", "evidence_id": "Ea"},
           {"name": "NCCL_PROTO", "value": "Simple", "where": "/b.service:15",
            "evidence_id": "Eb"},
           {"name": "NCCL_PROTO", "value": "LL", "where": "/a.conf:1"},
           {"name": "NCCL_DEBUG", "value": "WARN"},
           {"name": 3, "value": "x"}, "NCCL_ALGO=Ring", {"value": "y"}]
    r = _result({"env": Fact(value=env, evidence=["Elist"]), "flat": Fact(value="NCCL=1")})
    got = [(m.label, m.value, m.where, m.cites, m.each)
           for m in meanings(r, [Compare(fact="env", each=True),
                                 Compare(fact="flat", each=True)])]
    assert got == [("NCCL_PROTO", "LL | Simple", "/a.conf:1, /b.service:15", ("Ea", "Eb"),
                    "env"),
                   ("NCCL_DEBUG", "WARN", "", ("Elist",), "env")]


# ---------------------------------------------------------------- batch, record


def test_the_batch_root_is_each_hosts_own() -> None:
    # Batch: "{host} in it is replaced by the host's name", wherever it appears
    b = Batch(question="q", tasks=[], root="/srv/{host}/snap-{host}")
    assert b.root_for("gpu07") == "/srv/gpu07/snap-gpu07"
    assert Batch(question="q", tasks=[]).root_for("gpu07") == "/"
    assert HostOutcome(host="h", status="ok").model_dump() == {
        "host": "h", "status": "ok", "results": [], "error": "", "wall_s": 0.0}


def test_identical_results_are_written_once_and_read_back_whole(tmp_path: Path) -> None:
    # _record: "each distinct result (usage aside) is written once and later hosts name it
    # by digest"; the reader puts them back, usage and all
    from agentkit._fleet._record import Recorder, read_outcomes
    from agentkit._trace import Trace
    from agentkit._trace._read import read_trace
    from agentkit._types import Usage

    same = _result({"k": Fact(value=1)})
    outcomes = [HostOutcome(host="a", status="ok", results=[same], wall_s=1.5),
                HostOutcome(host="b", status="ok", results=[same.model_copy(
                    update={"usage": Usage(tool_calls=3)})]),
                HostOutcome(host="c", status="unreachable", error="refused"),
                HostOutcome(host="d", status="ok", results=[_result({"k": Fact(value=2)})])]
    path = tmp_path / "t.jsonl"
    with Trace(path) as trace:
        record = Recorder(trace, None)
        for o in outcomes:
            record(o)
    events = read_trace(path).events
    written = [e.data for e in events if e.kind == "host"]
    assert [len([r for r in d["results"] if "result" in r]) for d in written] == [1, 0, 0, 1]
    assert read_outcomes(events) == outcomes
    Recorder(Trace.disabled(), None)(outcomes[0])  # a disabled trace records nothing


def test_a_record_that_names_a_result_never_written_is_refused() -> None:
    from types import SimpleNamespace

    from agentkit._fleet._record import read_outcomes

    bad = SimpleNamespace(kind="host", data={"host": "gpu07", "status": "ok",
                                             "results": [{"same": "abc"}]})
    with pytest.raises(ValueError, match="host 'gpu07' names a result abc the trace never "
                                         "wrote"):
        read_outcomes([SimpleNamespace(kind="plan", data={}), bad])
    with pytest.raises(InventoryError):
        read_outcomes([SimpleNamespace(kind="host", data={"host": "a,b", "status": "ok"})])


# ---------------------------------------------------------------- the bottom line


def _g(text: str, nodes: str, count: int, ev: list[str] = (), where: list[str] = (),
       more: int = 0) -> FleetGroup:
    return FleetGroup(value=text, text=text, nodes=nodes, count=count, evidence=list(ev),
                      where=list(where), where_more=more)


def test_a_differing_fact_is_one_line_the_majority_then_each_other_value() -> None:
    # _bottom's docstring: "NCCL_PROTO: LL on 194 hosts (gpu[001-016,…]); Simple on
    # gpu[017,042,163] (serve.service:15); unset on gpu099"; four other values at most, the
    # rest counted; its evidence is the values' shown, each once
    groups = [_g("LL", "gpu[01-10]", 10, ["E1"]),
              _g("Simple", "gpu11", 1, ["E2", "E1"],
                 ["/etc/systemd/system/serve.service:15, /etc/nccl.conf:2"]),
              _g("unset", "gpu12", 1, ["E3"]), _g("LL128", "gpu13", 1),
              _g("Tree", "gpu14", 1, where=["/a:1", "/b:2", "/c:3"], more=2),
              _g("Ring", "gpu15", 1, ["E9"]), _g("x", "gpu[16-17]", 2, ["E9"])]
    line = _fact_line(FleetFact(task="t", fact="f", label="NCCL_PROTO", groups=groups))
    assert line.text == ("NCCL_PROTO: LL on 10 hosts (gpu[01-10]); Simple on gpu11 "
                         "(serve.service:15, nccl.conf:2); unset on gpu12; LL128 on gpu13; "
                         "Tree on gpu14 (a:1, b:2, c:3, 2 more); 2 more values on 3 hosts.")
    assert line.evidence == ["E2", "E1", "E3"]
    split = _fact_line(FleetFact(task="t", fact="f", label="P", majority=False, groups=[
        _g("a", "n1", 1, ["Ea"]), _g("b", "n2", 1, ["Eb"])]))
    assert split.text == "P: split with no majority: a on n1; b on n2."
    assert split.evidence == ["Ea", "Eb"]


def test_a_long_node_range_is_cut_and_its_hosts_counted() -> None:
    nodes = ",".join(f"gpu{i:03d}" for i in range(1, 40, 2))
    line = _fact_line(FleetFact(task="t", fact="f", label="P", groups=[
        _g("LL", "gpu[100-300]", 201), _g("Simple", nodes, 20)]))
    # cut at the last comma within MAX_NODES (40) characters: "gpu001,…,gpu011" is 41
    assert line.text == ("P: LL on 201 hosts (gpu[100-300]); Simple on gpu001,gpu003,gpu005,"
                         "gpu007,gpu009,… (20 hosts).")


def test_what_does_not_fit_is_counted_in_words() -> None:
    assert _more_facts(["A", "B", "C", "D", "E"]).text == (
        "5 more compared facts differ: A, B, C, D, E (see the table).")
    assert _more_facts(["A", "B", "C", "D", "E", "F"]).text == (
        "6 more compared facts differ: A, B, C, D, E, … (see the table).")
    problem = [FleetProblem(bucket="unreachable", error="refused", nodes="a", count=1),
               FleetProblem(bucket="failed", error="x", nodes="b,c", count=2),
               FleetProblem(bucket="failed", error="y", nodes="d", count=1)]
    fleet = Fleet(transport="t", hosts=4, buckets={}, counts={}, recap="", problems=problem)
    assert _more_problems(fleet, 1).text == ("1 more host did not answer, for 1 other reason "
                                             "(failed; see the buckets below).")
    assert _more_problems(fleet, 3).text == ("4 more hosts did not answer, for 3 other "
                                             "reasons (failed, unreachable; see the buckets "
                                             "below).")


def test_a_value_is_shown_on_one_line_cut_at_80_characters() -> None:
    line = _fact_line(FleetFact(task="t", fact="f", label="P", groups=[
        _g("a \n\t b", "n[1-2]", 2), _g("x" * 80, "n3", 1), _g("y" * 81, "n4", 1)]))
    assert line.text == f"P: a b on 2 hosts (n[1-2]); {'x' * 80} on n3; {'y' * 79}\u2026 on n4."


def test_the_bullets_fit_with_the_unanswered_tasks_and_the_uncompared_differences() -> None:
    # at most MAX_BULLETS (8): the verdict, the differing compared facts (the rest counted),
    # "Also differs" for what no compared fact shows, the tasks no host answered, problems
    specs = {"t": [Compare(fact="env", each=True)]}
    hosts = [f"h{i:02d}" for i in range(12)]
    f = Fold("test", [*hosts, "down"], ["t"], specs)
    for i, h in enumerate(hosts):
        env = [{"name": f"V{k:02d}", "value": "b" if i == k else "a"} for k in range(10)]
        f.add(HostOutcome(host=h, status="ok", results=[_result(
            {"env": Fact(value=env), "other": Fact(value=int(i == 11))})]))
    f.add(HostOutcome(host="down", status="unreachable", error="refused"))
    lines = [c.text for c in bottom_line("Same?", f.fleet(), ["gpu-inventory", "nccl-env"])]
    assert len(lines) == MAX_BULLETS
    assert lines[0].startswith("No: 11 of 12 hosts differ")
    assert lines[1].startswith("V00: a on 11 hosts (h[01-11]); b on h00.")
    # room for 4 fact lines: three facts, then one line counting the other seven
    assert lines[4] == ("7 more compared facts differ: V03, V04, V05, V06, V07, … (see the "
                        "table).")
    assert lines[5] == "Also differs on h11 (1 host): t · other (see the table)."
    assert lines[6] == "No host answered: gpu-inventory, nccl-env."
    assert lines[7] == "unreachable on down (1 host): refused"


def test_one_label_from_two_tasks_is_one_line_only_where_they_agree() -> None:
    # merged(): "One fact per label where the tasks that declare it agree host for host
    # (engine from two tasks is one line); where they do not, each is kept, named with its
    # task"; a fact without a label goes by its name
    same = [_g("vllm", "n[1-2]", 2), _g("sglang", "n3", 1)]
    other = [_g("vllm", "n[1-3]", 3)]
    agree = merged([FleetFact(task="a", fact="engine", groups=same),
                    FleetFact(task="b", fact="eng", label="engine", groups=same)])
    assert [(f.task, f.label) for f in agree] == [("a", "engine")]
    split = merged([FleetFact(task="c", fact="tp", label="", groups=other),
                    FleetFact(task="a", fact="x", label="engine", groups=same),
                    FleetFact(task="b", fact="x", label="engine", groups=other)])
    assert [f.label for f in split] == ["tp", "a: engine", "b: engine"]


def test_the_verdict_counts_the_hosts_that_did_not_answer() -> None:
    one = Fleet(transport="t", hosts=3, buckets={"ok": "n1", "failed": "n[2-3]"},
                counts={"ok": 1, "failed": 2}, recap="ok=1 differs=0 failed=2")
    assert bottom_line("Is it the same?", one, [])[0].text == (
        "Yes: the same on the one host that answered (n1); 2 hosts did not answer with "
        "anything to compare. Recap: ok=1 differs=0 failed=2.")
    two = Fleet(transport="t", hosts=2, buckets={"ok": "n1", "differs": "n2"},
                counts={"ok": 1, "differs": 1}, recap="ok=1 differs=1")
    assert bottom_line("Is it the same?", two, [])[0].text == (
        "No: 1 of 2 hosts differ (n2). Recap: ok=1 differs=1.")


def test_uncompared_differences_name_four_facts_then_count_the_rest() -> None:
    def fleet_of(n: int) -> Fleet:
        facts = [FleetFact(task="t", fact=f"f{i}", groups=[_g("a", "n[1-2]", 2),
                                                           _g("b", "n3", 1)])
                 for i in range(n)]
        return Fleet(transport="t", hosts=3, buckets={"ok": "n[1-2]", "differs": "n3"},
                     counts={"ok": 2, "differs": 1}, recap="r", facts=facts)
    assert bottom_line("Same?", fleet_of(4), [])[1].text == (
        "Also differs on n3 (1 host): t · f0, t · f1, t · f2, t · f3 (see the table).")
    assert bottom_line("Same?", fleet_of(5), [])[1].text == (
        "Also differs on n3 (1 host): t · f0, t · f1, t · f2, t · f3 and 1 more (see the "
        "table).")
    assert bottom_line("Same?", fleet_of(6), [])[1].text == (
        "Also differs on n3 (1 host): t · f0, t · f1, t · f2, t · f3 and 2 more (see the "
        "table).")


@pytest.mark.parametrize(("question", "lead"), [
    ("Is NCCL tuned the same on all nodes?", "No"),
    ("Do the nodes differ in NCCL tuning?", "Yes"),
    ("Is NCCL tuned?", "Not the same"),  # a question not about sameness gets no yes or no
])
def test_a_differing_fleet_answers_the_question_asked(question: str, lead: str) -> None:
    two = Fleet(transport="t", hosts=2, buckets={"ok": "n1", "differs": "n2"},
                counts={"ok": 1, "differs": 1}, recap="ok=1 differs=1")
    assert bottom_line(question, two, [])[0].text == (
        f"{lead}: 1 of 2 hosts differ (n2). Recap: ok=1 differs=1.")


def test_an_uncompared_fact_split_without_majority_names_every_host() -> None:
    split = FleetFact(task="t", fact="f", majority=False,
                      groups=[_g("a", "n1", 1), _g("b", "n2", 1)])
    fleet = Fleet(transport="t", hosts=2, buckets={"differs": "n[1-2]"},
                  counts={"differs": 2}, recap="r", facts=[split])
    assert bottom_line("Same?", fleet, [])[1].text == (
        "Also differs on n[1-2] (2 hosts): t · f (see the table).")


def test_only_planned_bundled_templates_that_declare_compare_give_specs() -> None:
    from agentkit._fleet._batch import bundled_catalog
    from agentkit._fleet._meaning import compare_specs
    from agentkit._types import Plan, TaskSpec

    cat = bundled_catalog()
    assert cat["nccl-env"].compare and not cat["service-log"].compare

    def task(i: str, template: str | None) -> TaskSpec:
        return TaskSpec(id=i, title=i, objective="", template=template)

    plan = Plan(question="q", mode="catalog", tasks=[
        task("free", None), task("gone", "no-such-template"), task("log", "service-log"),
        task("env", "nccl-env")])
    assert compare_specs(plan) == {"env": list(cat["nccl-env"].compare)}


def test_a_record_sits_under_its_run_and_keeps_what_json_would_keep(tmp_path: Path) -> None:
    from agentkit._fleet._record import Recorder, read_outcomes
    from agentkit._trace import Trace
    from agentkit._trace._read import read_trace
    from agentkit._types import Usage

    # equal as JSON, keys in another order: one result, written once; a path is its string
    a = _result({"k": Fact(value={"x": 1, "y": Path("/p")})})
    b = _result({"k": Fact(value={"y": "/p", "x": 1})})
    path = tmp_path / "t.jsonl"
    with Trace(path) as trace:
        record = Recorder(trace, "S1")
        record(HostOutcome(host="a", status="ok", results=[a.model_copy(
            update={"usage": Usage(tool_calls=2)})]))
        record(HostOutcome(host="b", status="ok", results=[b]))
    events = [e for e in read_trace(path).events if e.kind == "host"]
    assert [e.parent for e in events] == ["S1", "S1"]
    assert ["result" in r for e in events for r in e.data["results"]] == [True, False]
    back = read_outcomes(events)
    assert [o.results[0].facts["k"].value for o in back] == [{"x": 1, "y": "/p"}] * 2
    assert [o.results[0].usage.tool_calls for o in back] == [2, 0]


# ---------------------------------------------------------------- the answer


def _plan(*ids: str) -> Any:
    from agentkit._types import Plan, TaskSpec

    return Plan(question="q", mode="catalog", tasks=[
        TaskSpec(id=i, title=i, objective="", template=i) for i in ids])


def test_the_answer_has_a_compared_section_a_table_and_a_section_per_task() -> None:
    from agentkit._fleet._answer import fleet_answer

    specs = {"t": [Compare(fact="env", each=True), Compare(fact="engine")]}
    hosts = ["n1", "n2", "n3"]
    f = Fold("test", hosts, ["t", "u"], specs)
    long = "v" * 90
    for h in hosts:
        env = [{"name": "NCCL_PROTO", "value": "Simple" if h == "n3" else "LL",
                "where": "/etc/u.service:15"}]
        f.add(HostOutcome(host=h, status="ok", results=[_result(
            {"env": Fact(value=env), "engine": Fact(value=long), "tp": Fact(value=8),
             "x": Fact(value=int(h == "n3"))})]))
    answer = fleet_answer("q", _plan("t", "u", "w"), f.fleet(), f.evidence(), ["a note"])
    compared = answer.sections[0]
    assert compared.title == "Fleet: compared facts"
    assert [c.text for c in compared.claims] == [
        "NCCL_PROTO: LL on n[1-2] (2 hosts), set at /etc/u.service:15",
        "NCCL_PROTO: Simple on n3 (1 host), set at /etc/u.service:15",
        f"engine: {'v' * 77}\u2026 on all 3 hosts (n[1-3])"]
    [task] = [s for s in answer.sections if s.title == "Fleet: t"]
    assert [c.text for c in task.claims] == [
        "env: [{\"name\":\"NCCL_PROTO\",\"value\":\"LL\",\"where\":\"/etc/u.service:15\"}] on "
        "n[1-2] (2 hosts)",
        "env: [{\"name\":\"NCCL_PROTO\",\"value\":\"Simple\",\"where\":\"/etc/u.service:15\"}] "
        "on n3 (1 host)",
        "x: 0 on n[1-2] (2 hosts)", "x: 1 on n3 (1 host)",
        "The same on every host that answered: engine, tp."]
    assert task.tasks == ["t"]
    assert answer.table is not None and answer.table.columns == ["fact", "value", "nodes",
                                                                 "hosts"]
    assert [[c.text for c in row] for row in answer.table.rows][:2] == [
        ["NCCL_PROTO", "LL, set at /etc/u.service:15", "n[1-2]", "2"],
        ["NCCL_PROTO", "Simple, set at /etc/u.service:15", "n3", "1"]]
    assert answer.tasks == {"t": "ok", "u": "failed", "w": "failed"}
    assert answer.failed_tasks == ["u", "w"]
    assert answer.notes == ["a note"] and answer.fleet is not None


def test_a_task_status_is_its_majority_status_and_ties_are_partial() -> None:
    from agentkit._fleet._answer import fleet_answer

    def status_of(*statuses: str) -> str:
        hosts = [f"n{i}" for i in range(len(statuses))]
        f = Fold("test", hosts)
        for h, st in zip(hosts, statuses, strict=True):
            f.add(HostOutcome(host=h, status="ok", results=[_result(
                {"k": Fact(value=1)}, status=st)]))
        return fleet_answer("q", _plan("t"), f.fleet(), f.evidence(), []).tasks["t"]
    assert status_of("partial", "partial", "ok") == "partial"
    assert status_of("ok", "ok", "partial") == "ok"
    assert status_of("ok", "partial") == "partial"  # no majority


def test_a_fact_with_more_values_than_shown_counts_the_rest_in_one_row() -> None:
    from agentkit._fleet._answer import fleet_answer
    from agentkit._fleet_model import MAX_GROUPS

    hosts = [f"n{i:02d}" for i in range(MAX_GROUPS + 3)]
    f = Fold("test", hosts)
    for i, h in enumerate(hosts):
        f.add(HostOutcome(host=h, status="ok", results=[_result({"k": Fact(value=i)})]))
    answer = fleet_answer("q", _plan("t"), f.fleet(), f.evidence(), [])
    assert answer.table is not None
    rows = [[c.text for c in row] for row in answer.table.rows]
    assert len(rows) == MAX_GROUPS + 1
    assert rows[0][0] == "t · k (no majority)"
    assert rows[-1] == ["t · k (no majority)", "3 more values", "…", "3"]


@pytest.mark.parametrize("status", ["ok", "partial", "failed", "timed-out"])
def test_a_task_that_failed_everywhere_while_another_answered_is_failed(status: str) -> None:
    # a host whose other task answered is folded, so the failed task's status is compared
    from agentkit._fleet._answer import fleet_answer

    f = Fold("test", ["n1", "n2"])
    for h in ("n1", "n2"):
        f.add(HostOutcome(host=h, status="ok", results=[
            _result({}, status=status),
            _result({"k": Fact(value=1)}).model_copy(update={"task_id": "u"})]))
    answer = fleet_answer("q", _plan("t", "u"), f.fleet(), f.evidence(), [])
    assert answer.tasks == {"t": status, "u": "ok"}


# ---------------------------------------------------------------- inventories


def test_a_host_file_is_one_name_or_range_a_line_with_comments(tmp_path: Path) -> None:
    from agentkit._fleet._inventory import hosts_from

    hosts = tmp_path / "hosts.txt"
    hosts.write_text("gpu[01-02]  # rack 1 # row 2\n\n# spares\n  login1\ngpu01\n")
    assert hosts_from(f"@{hosts}") == ["gpu01", "gpu02", "login1"]
    hosts.write_text("# nothing yet\n\n")
    assert _error(hosts_from, f"@{hosts}") == (
        f"the host list {hosts} names no hosts (one name or range a line)")
    assert _error(hosts_from, f"@{tmp_path / 'none'}") == (
        f"the host list {tmp_path / 'none'} does not exist: give the path of a text file "
        "with one name or range a line")


def test_an_ssh_config_gives_its_concrete_host_names(tmp_path: Path) -> None:
    # ssh_config(5): keywords are case-insensitive, "Host" takes several patterns; a pattern
    # with '*', '?' or '!' is a default for other hosts, not a host
    from agentkit._fleet._inventory import hosts_from

    cfg = tmp_path / "config"
    cfg.write_text("User me\nhost a b\nHOST *.lab !c d?\nHost b Xe\nHostName x\nMatch all\n"
                   "# Host commented\nUser me\n")
    assert hosts_from("ssh-config", str(cfg)) == ["a", "b", "Xe"]
    cfg.write_text('Host "unclosed\n')
    assert _error(hosts_from, "ssh-config", str(cfg)) == (
        f"{cfg}: cannot read the line 'Host \"unclosed' (an unclosed quote?)")
    cfg.write_text("Host *\n  User me\n")
    assert _error(hosts_from, "ssh-config", str(cfg)) == (
        f"{cfg} has no Host entry naming one host")


def test_a_node_range_is_cut_at_a_comma_within_40_characters_brackets_closed() -> None:
    from agentkit._fleet._bottom import _short_nodes

    # docs/fleet.md's example: gpu[001-016,018-041,043-098,100-119,…]
    assert _short_nodes("gpu[001-016,018-041,043-098,100-119,121-130]") == (
        "gpu[001-016,018-041,043-098,100-119,…]")
    balanced = "a[1-2],b[3-4],c[5-6],d[7-8],e[1-9],fff,ggg,hhh"
    assert _short_nodes(balanced) == "a[1-2],b[3-4],c[5-6],d[7-8],e[1-9],fff,…"
    forty = "abcdefg,abcdefg,abcdefg,abcdefg,abcdefgx"
    assert len(forty) == 40 and _short_nodes(forty) == forty
    assert _short_nodes("a," + "b" * 50) == "a,…"
    assert _short_nodes("c" * 50) == "c" * 50  # no comma to cut at


def test_the_verdicts_that_hold_everywhere_follow_the_verdict() -> None:
    held = [FleetFact(task="t", fact=f, label=f"verdict: {f}", groups=[_g(v, "n[1-2]", 2, [e])])
            for f, v, e in (("NCCL tuning in effect", "yes", "E1"), ("P2P", "no", "E2"))]
    fleet = Fleet(transport="t", hosts=2, buckets={"ok": "n[1-2]"}, counts={"ok": 2},
                  recap="ok=2 differs=0", compared=held)
    first = bottom_line("Is NCCL tuned?", fleet, [])[0]
    assert first.text == ("The same on all 2 hosts that answered (n[1-2]). Everywhere that "
                          "answered, NCCL tuning in effect: yes; P2P: no. Recap: ok=2 "
                          "differs=0.")
    assert first.evidence == ["E1", "E2"]


def test_every_answer_line_cites_its_groups_evidence_and_says_each_place() -> None:
    from agentkit._fleet._answer import fleet_answer
    from agentkit._fleet_model import MAX_GROUPS

    ev = Evidence.of("file", "/etc/u.service:15", "NCCL_PROTO=LL", "NCCL_PROTO=LL")
    specs = {"t": [Compare(fact="env", each=True)]}
    hosts = [f"n{i}" for i in range(6)]
    f = Fold("test", hosts, ["t"], specs)
    for i, h in enumerate(hosts):
        env = [{"name": "P", "value": "LL" if i < 5 else "S", "where": f"/p{i}:1",
                "evidence_id": ev.id}]
        f.add(HostOutcome(host=h, status="ok", results=[_result(
            {"env": Fact(value=env, evidence=[ev.id]), "k": Fact(value="x" * (80 + i % 2))},
            evidence=[ev])]))
    answer = fleet_answer("q", _plan("t", "gone"), f.fleet(), f.evidence(), [])
    compared = answer.sections[0]
    assert compared.tasks == [] and answer.sections[1].tasks == ["t"]
    assert compared.claims[0].text == ("P: LL on n[0-4] (5 hosts), set at /p0:1, /p1:1, /p2:1, "
                                       "2 more")
    assert all(c.evidence for c in compared.claims)
    assert all(c.evidence for c in answer.sections[1].claims if c.text.startswith("env:"))
    assert answer.table is not None and answer.table.title == "Fleet: what differs"
    assert all(row[1].evidence for row in answer.table.rows if row[0].text == "P")
    texts = {c.text.split(" on ")[0] for c in answer.sections[1].claims}
    assert f"k: {'x' * 80}" in texts and f"k: {'x' * 77}\u2026" in texts  # 80 whole, 81 cut
    assert any(c.text == "No host answered: gone." for c in answer.bottom_line)
    assert MAX_GROUPS == 10
    g = Fold("test", [f"m{i}" for i in range(10)])
    for i in range(10):
        g.add(HostOutcome(host=f"m{i}", status="ok", results=[_result({"k": Fact(value=i)})]))
    table = fleet_answer("q", _plan("t"), g.fleet(), g.evidence(), []).table
    assert table is not None
    assert len([r for r in table.rows if r[0].text == "t · k (no majority)"]) == 10


def test_ssh_config_without_a_path_is_the_users_own(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._fleet._inventory import hosts_from

    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host gpu07\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hosts_from("ssh-config") == ["gpu07"]
