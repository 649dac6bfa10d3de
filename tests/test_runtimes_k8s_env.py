"""A container's environment (``env``/``envFrom``) as Kubernetes builds it, against a reference
written from the API reference, on generated containers, and Kubernetes' own expansion vectors.

The reference below is written from the documentation, not from agentkit:
- Container.envFrom (API reference, core/v1 Container): "List of sources to populate
  environment variables in the container ... When a key exists in multiple sources, the value
  associated with the last source will take precedence. Values defined by an Env with a
  duplicate key will take precedence."
- EnvFromSource.prefix: "Optional text to prepend to the name of each environment variable."
  Keys that do not make a valid name are skipped ("InvalidEnvironmentVariableNames" event).
- EnvVar.value: "Variable references $(VAR_NAME) are expanded using the previously defined
  environment variables in the container and any service environment variables. If a variable
  cannot be resolved, the reference in the input string will be unchanged. Double $$ are
  reduced to a single $, which allows for escaping the $(VAR_NAME) syntax ... Escaped
  references will never be expanded."
- ConfigMapKeySelector.optional: "Specify whether the ConfigMap or its key must be defined";
  an optional key that is missing sets nothing.

The vectors are those of kubernetes/kubernetes third_party/forked/golang/expansion
(expand_test.go, doExpansionTest), as data.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
import yaml
from hypothesis import Phase, given
from hypothesis import settings as _settings
from hypothesis import strategies as st

from agentkit._hostmodel.runtimes import _k8senv, _kubernetes
from agentkit._hostmodel.runtimes._k8senv import Env, Var, name_status
from agentkit._hostmodel.runtimes._kubernetes import Source
from agentkit._hostmodel.runtimes._yaml import load_yaml

# -- a loop that never ends fails at once ---------------------------------------------------
# Each call below takes well under a millisecond; one that runs 10 s never ends (a mutation
# run's mutant that stops advancing in expand() would otherwise hold a worker for its whole CPU
# limit). Under mutmut, a failing case is not shrunk either: each shrink step would wait again.

T = TypeVar("T")


class Hang(Exception):
    pass


def _bounded(fn: Callable[..., T], *args: Any) -> T:
    def stop(*_: Any) -> None:
        raise Hang(f"{fn.__name__} did not return within 10 s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 10.0)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    return _bounded(_k8senv.expand, text, lookup)


def container_env(c: dict[str, Any], cms: Callable[[str], Any]) -> Env:
    return _bounded(_k8senv.container_env, c, cms)


def _environment(*args: Any) -> Any:
    return _bounded(_kubernetes._environment, *args)


def settings(**kw: Any) -> Any:
    if "MUTANT_UNDER_TEST" in os.environ:
        kw["phases"] = [p for p in Phase if p is not Phase.shrink]
    return _settings(**kw)

# -- Kubernetes' own vectors --------------------------------------------------------------

CONTEXT = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}
VECTORS = [  # (input, expected), expand_test.go doExpansionTest
    ("$(VAR_A)", "A"), ("$(VAR_A)-$(VAR_A)", "A-A"), ("$(VAR_A)-1", "A-1"),
    ("___$(VAR_B)___", "___B___"), ("___$(VAR_C)", "___C"), ("$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
    ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"), ("$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
    ("f000-$$VAR_A", "f000-$VAR_A"), ("foo\\$(VAR_C)bar", "foo\\Cbar"),
    ("foo\\\\$(VAR_C)bar", "foo\\\\Cbar"), ("foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"),
    ("$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"), ("$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
    ("$(VAR_REF)", "$(VAR_A)"), ("%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"),
    ("foo$(VAR_EMPTY)bar", "foobar"), ("foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
    ("f00__(VAR_A)__", "f00__(VAR_A)__"), ("$?_boo_$!", "$?_boo_$!"), ("$VAR_A", "$VAR_A"),
    ("$(VAR_DNE)", "$(VAR_DNE)"), ("$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("$$$$$$(VAR_A)", "$$$(VAR_A)"), ("$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
    ("$$$$$$$(VAR_A)", "$$$A"), ("$VAR_A)", "$VAR_A)"), ("${VAR_A}", "${VAR_A}"),
    ("$(VAR_B)_______$(A", "B_______$(A"), ("$(VAR_C)_______$(", "C_______$("),
    ("$(VAR_A)foobarzab$", "Afoobarzab$"), ("foo-\\$(VAR_A", "foo-\\$(VAR_A"),
    ("--$($($($($--", "--$($($($($--"), ("$($($($($--foo$(", "$($($($($--foo$("),
    ("foo0--$($($($(", "foo0--$($($($("), ("$(foo$$var)", "$(foo$$var)"), ("\n", "\n"),
]


def test_kubernetes_expansion_vectors() -> None:
    for text, want in VECTORS:
        assert expand(text, CONTEXT.get) == want, text


def test_a_reference_ends_at_the_first_closing_parenthesis() -> None:
    # tryReadVariableName scans from the byte after "(": "$()" is the empty name (never
    # defined), and the ")x" after it is text, even where a variable is named ")x" (a valid
    # name since Kubernetes 1.34: any printable ASCII but "=")
    assert expand("$()x)", {")x": "V"}.get) == "$()x)"
    c = {"env": [{"name": ")x", "value": "V"}, {"name": "A", "value": "$()x)"}]}
    assert container_env(c, lambda _: None).vars["A"].value == "$()x)"


def test_map_reference_chain() -> None:  # expand_test.go TestMapReference
    c = {"env": [{"name": "FOO", "value": "bar"}, {"name": "ZOO", "value": "$(FOO)-1"},
                 {"name": "BLU", "value": "$(ZOO)-2"}]}
    got = {k: v.value for k, v in container_env(c, lambda _: None).vars.items()}
    assert got == {"FOO": "bar", "ZOO": "bar-1", "BLU": "bar-1-2"}


# -- the reference, from the API documentation ---------------------------------------------

_TOKEN = re.compile(r"\$\$|\$\(([^)]*)\)|\$\(|\$.|\$\Z", re.S)
_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*\Z")  # C_IDENTIFIER-like rule (before 1.34)


def ref_expand(text: str, defined: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok == "$$":
            return "$"
        if m.group(1) is not None:
            return defined.get(m.group(1), tok)
        return tok  # "$(" unclosed, "$x", a final "$": unchanged
    return _TOKEN.sub(one, text)


def ref_env(container: dict[str, Any], cms: dict[str, dict[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for src in container.get("envFrom", []):
        data = cms.get(src["configMapRef"]["name"])
        for key, value in (data or {}).items():
            name = src.get("prefix", "") + key
            if _NAME.match(name):  # others skipped (or version-dependent: not established)
                out[name] = value
    for e in container.get("env", []):
        if "valueFrom" in e:
            ref = e["valueFrom"]["configMapKeyRef"]
            data = cms.get(ref["name"])
            if data is not None and ref["key"] in data:
                out[e["name"]] = data[ref["key"]]
            elif not (data is not None and ref.get("optional")):
                out.pop(e["name"], None)  # unknown here: not shown
        else:
            out[e["name"]] = ref_expand(e.get("value", ""), out)
    return out


_NAMES = ["PROTO", "ALGO", "NCCL_PROTO", "NCCL_ALGO", "TP", "a.b", "x-y"]
_KEYS = [*_NAMES, "1X", "9"]
_TEXT = st.lists(st.one_of(st.sampled_from(["$", "(", ")", "$$", "$(", "LL", "-", " ", "\\"]),
                           st.sampled_from([f"$({n})" for n in _NAMES])), max_size=6).map("".join)


@st.composite
def _container(draw: Any) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    cms = {name: draw(st.dictionaries(st.sampled_from(_KEYS), _TEXT, max_size=4))
           for name in draw(st.sets(st.sampled_from(["a", "b", "c"]), max_size=3))}
    env_from: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        src: dict[str, Any] = {
            "configMapRef": {"name": draw(st.sampled_from(["a", "b", "c", "gone"]))}}
        prefix = draw(st.sampled_from(["", "NCCL_", "P_", "1"]))
        if prefix:
            src["prefix"] = prefix
        env_from.append(src)
    env: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 5))):
        name = draw(st.sampled_from(_NAMES))
        if draw(st.integers(0, 3)) == 0:
            ref = {"name": draw(st.sampled_from(["a", "b", "gone"])),
                   "key": draw(st.sampled_from(_KEYS))}
            if draw(st.booleans()):
                ref["optional"] = True
            env.append({"name": name, "valueFrom": {"configMapKeyRef": ref}})
        else:
            env.append({"name": name, "value": draw(_TEXT)})
    container = {"name": "vllm", "image": "vllm/vllm-openai", "envFrom": env_from, "env": env}
    return container, cms


@settings(max_examples=600, deadline=None)
@given(case=_container())
def test_container_env_matches_the_api_reference(
        case: tuple[dict[str, Any], dict[str, dict[str, str]]]) -> None:
    container, cms = case
    got = container_env(container, cms.get).vars
    assert {k: v.value for k, v in got.items()} == ref_env(container, cms), (container, cms)


# Through YAML as a manifest holds it: the same reading, fewer cases (each is a YAML dump and
# load; the semantics are checked just above and branch by branch below). A mutation run pays
# these tests' whole cost for every mutant that lives: 1,500 cases through YAML took 48 s.
@settings(max_examples=100, deadline=None)
@given(case=_container())
def test_environment_matches_the_api_reference(
        case: tuple[dict[str, Any], dict[str, dict[str, str]]]) -> None:
    container, cms = case
    want = ref_env(container, cms)
    # through YAML as a manifest holds it (line numbers and all), and agentkit's reading
    docs = load_yaml(yaml.safe_dump_all(
        [{"kind": "ConfigMap", "metadata": {"name": n}, "data": d} for n, d in cms.items()]
        + [container], sort_keys=False))
    parsed = docs[-1]
    configmaps = {("default", d["metadata"]["name"]): (d, Source("cm.yaml", lambda n: ""))
                  for d in docs[:-1]}
    env, _notes = _environment(parsed, "default", Source("deploy.yaml", lambda n: ""),
                               configmaps)
    assert {k: s.value for k, s in env.items()} == want, (container, cms)


# -- each branch, from the API reference and the kubelet (kubelet_pods.go,
# makeEnvironmentVariables) ------------------------------------------------------------------
# envFrom a Secret or a ConfigMap not read sets names unknown here; a $(NAME) the variables
# before it do not define may be one of them. valueFrom is read only when value is empty (the
# kubelet: `if runtimeVal != "" { expand } else if ValueFrom != nil`); a missing optional key
# skips the entry (`continue`: an earlier value stays); a fieldRef, resourceFieldRef or Secret
# key is set in the pod to a value not known here, and so is every later $(NAME) of it.

SECRET = {"secretRef": {"name": "hf"}}
NOT_READ = {"configMapRef": {"name": "cfg"}}
POD_IP = {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
FROM_SECRET = "envFrom Secret hf: never read; the variables it sets are not shown"
FROM_CFG = "envFrom ConfigMap cfg is not in the manifests read: its variables are unknown"


def could(name: str, sources: str) -> str:
    return (f"{name}: a $(…) reference in its value is not defined before it here; it could "
            f"come from {sources}: its value is not established")


def uses(name: str, refs: str) -> str:
    return (f"{name}: its value uses {refs}, set before it to a value not known here: its "
            "value is not established")


def entry(name: str, value: Any = None, **value_from: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"name": name}
    if value is not None:
        e["value"] = value
    if value_from:
        e["valueFrom"] = value_from
    return e


def cm_key(key: str, name: str = "cfg", **more: Any) -> dict[str, Any]:
    return {"configMapKeyRef": {"name": name, "key": key, **more}}


CASES: list[tuple[str, dict[str, Any], dict[str, dict[str, Any]], dict[str, str], list[str]]] = [
    # (case, container, ConfigMaps read, the values set, the notes)
    ("a Secret's names are unknown", {"envFrom": [{**SECRET, "prefix": "S_"}],
                                      "env": [entry("NCCL_ALGO", "$(S_ALGO)")]}, {},
     {"NCCL_ALGO": "$(S_ALGO)"},
     ["envFrom Secret hf (prefix S_): never read; the variables it sets are not shown",
      could("NCCL_ALGO", "Secret hf")]),
    ("a ConfigMap not read", {"envFrom": [NOT_READ],
                              "env": [entry("A", "$(X)"), entry("B", "$$(X)"),
                                      entry("C", "plain"), entry("D", "$(C)")]}, {},
     {"A": "$(X)", "B": "$(X)", "C": "plain", "D": "plain"},  # $$(X) is an escape, no reference
     [FROM_CFG, could("A", "ConfigMap cfg")]),
    ("an optional ConfigMap not read", {"envFrom": [{"configMapRef": {"name": "cfg",
                                                                      "optional": True}}, SECRET],
                                        "env": [entry("A", "x$(X)$(Y)")]}, {},
     {"A": "x$(X)$(Y)"},
     ["envFrom ConfigMap cfg (optional) is not in the manifests read: if it does not exist "
      "either, it sets nothing", FROM_SECRET, could("A", "ConfigMap cfg, Secret hf")]),
    ("no unknown source: an undefined reference stays", {"env": [entry("A", "$(X)")]}, {},
     {"A": "$(X)"}, []),
    ("entries that are not sources or variables", {
        "envFrom": ["cfg", {"prefix": "P_"}, {"configMapRef": "cfg"}],
        "env": ["A=1", {"value": "1"}, {"name": "", "value": "1"}, entry("E")]},
     {"cfg": {"K": "v"}}, {"E": ""}, []),
    ("names the kubelet skips or that depend on its version", {
        "envFrom": [{"configMapRef": {"name": "cfg"}}, {"configMapRef": {"name": "p"},
                                                        "prefix": "1"}]},
     {"cfg": {"__line__": 3, "GOOD": "1", "1BAD": "2", "A=B": "3", "é": "4", "__X": "5",
              "a b": "6", "__keys__": {"GOOD": 4}}, "p": {"OK": "7"}},
     {"GOOD": "1", "__X": "5"},
     ["'1BAD' from ConfigMap cfg: set only on Kubernetes 1.34 or later (relaxed variable "
      "names), skipped before: not established",
      "'A=B' from ConfigMap cfg is no valid variable name: the kubelet skips it",
      "'é' from ConfigMap cfg is no valid variable name: the kubelet skips it",
      "'a b' from ConfigMap cfg: set only on Kubernetes 1.34 or later (relaxed variable "
      "names), skipped before: not established",
      "'1OK' from ConfigMap p: set only on Kubernetes 1.34 or later (relaxed variable "
      "names), skipped before: not established"]),
    ("a key's value replaces an earlier one", {"env": [entry("A", "old"),
                                                       entry("A", **cm_key("k"))]},
     {"cfg": {"k": "v"}}, {"A": "v"}, []),
    ("an optional missing key sets nothing", {"env": [entry("A", "old"),
                                                      entry("A", **cm_key("k", optional=True))]},
     {"cfg": {"j": "v"}}, {"A": "old"},
     ["A: ConfigMap cfg has no key k and the reference is optional, so this entry sets "
      "nothing"]),
    ("a missing key, a ConfigMap not read, the loader's keys", {
        "env": [entry("A", "old"), entry("A", **cm_key("k")), entry("B", **cm_key("k", "gone")),
                entry("C", **cm_key("k", "gone", optional=True)), entry("D", **cm_key("__line__")),
                entry("E", **cm_key("__keys__"))]},
     {"cfg": {"j": "v", "__line__": 3, "__keys__": {"j": 4}}}, {},
     [f"{n} comes from ConfigMap {c} key {k}, which the manifests read do not hold: its value "
      "is unknown" for n, c, k in (("A", "cfg", "k"), ("B", "gone", "k"), ("C", "gone", "k"),
                                   ("D", "cfg", "__line__"), ("E", "cfg", "__keys__"))]),
    ("value wins over valueFrom, an empty one does not", {
        "env": [entry("A", "x", **cm_key("k")), {"name": "B", "value": "", **{
            "valueFrom": cm_key("k")}}, {"name": "C", "valueFrom": "k"}]},
     {"cfg": {"k": "v"}}, {"A": "x", "B": "v", "C": ""}, []),
    ("the pod's own fields and Secrets", {"env": [
        entry("A", "old"), entry("A", secretKeyRef={"name": "s", "key": "k"}), POD_IP,
        entry("R", resourceFieldRef={"resource": "limits.cpu"}, __line__=9,
              __keys__={"resourceFieldRef": 9})]}, {},
     {}, ["A comes from a Secret: not read",
          "POD_IP comes from fieldRef: its value is known only in the running pod",
          "R comes from resourceFieldRef: its value is known only in the running pod"]),
    ("a reference to a value not known here", {"envFrom": [SECRET, {"configMapRef": {
        "name": "cfg"}}], "env": [POD_IP, entry("HOST", "$(POD_IP):$(1X)"), entry("Z", "$(Q)"),
                                  entry("POD_IP", "10.0.0.1"), entry("B", "$(POD_IP)")]},
     {"cfg": {"1X": "a"}}, {"HOST": "$(POD_IP):$(1X)", "Z": "$(Q)", "POD_IP": "10.0.0.1",
                            "B": "10.0.0.1"},
     [FROM_SECRET, "'1X' from ConfigMap cfg: set only on Kubernetes 1.34 or later (relaxed "
      "variable names), skipped before: not established",
      "POD_IP comes from fieldRef: its value is known only in the running pod",
      uses("HOST", "$(POD_IP), $(1X)"), could("Z", "Secret hf")]),
    ("a pod field in a reference", {"env": [POD_IP, entry("VLLM_HOST_IP", "$(POD_IP)")]}, {},
     {"VLLM_HOST_IP": "$(POD_IP)"},  # the pod's IP in the pod, never the text "$(POD_IP)"
     ["POD_IP comes from fieldRef: its value is known only in the running pod",
      uses("VLLM_HOST_IP", "$(POD_IP)")]),
    ("a value known again after an unknown one", {"env": [
        entry("P", secretKeyRef={"name": "s", "key": "k"}), entry("P", **cm_key("k")),
        entry("Q", "$(P)")]}, {"cfg": {"k": "v"}},
     {"P": "v", "Q": "v"}, ["P comes from a Secret: not read"]),
    ("YAML scalars as the strings the API holds", {
        "envFrom": [{"configMapRef": {"name": "cfg"}}],
        "env": [entry("Y", True), entry("N", False), entry("I", 8), entry("K", **cm_key("T"))]},
     {"cfg": {"T": True, "F": False, "Z": 0}},
     {"T": "true", "F": "false", "Z": "0", "Y": "true", "N": "false", "I": "8", "K": "true"}, []),
]


@pytest.mark.parametrize(("container", "cms", "values", "notes"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_source_as_the_kubelet_reads_it(container: dict[str, Any],
                                             cms: dict[str, dict[str, Any]],
                                             values: dict[str, str], notes: list[str]) -> None:
    got = container_env(container, cms.get)
    assert {k: v.value for k, v in got.vars.items()} == values
    assert got.notes == notes


def test_where_each_variable_was_set() -> None:
    # its list and position in it (the manifest line is read from there), and the key it
    # came from without the prefix
    c = {"envFrom": ["junk", {"configMapRef": {"name": "a"}, "prefix": "P_"},
                     {"configMapRef": {"name": "b"}}],
         "env": ["junk", entry("E", "1"), entry("F", **cm_key("K", "b")), entry("G", "$(F)")]}
    got = container_env(c, {"a": {"K": "a1", "L": "a2"}, "b": {"K": "b1", "L": "b2"}}.get).vars
    assert got == {
        "P_K": Var("P_K", "a1", "envFrom", 1, "a", "K"),
        "P_L": Var("P_L", "a2", "envFrom", 1, "a", "L"),
        "K": Var("K", "b1", "envFrom", 2, "b", "K"), "L": Var("L", "b2", "envFrom", 2, "b", "L"),
        "E": Var("E", "1", "env", 1), "F": Var("F", "b1", "configMapKeyRef", 2, "b", "K"),
        "G": Var("G", "b1", "env", 3)}
    assert list(got) == ["P_K", "P_L", "K", "L", "E", "F", "G"]


@settings(max_examples=500, deadline=None)
@given(name=st.text(st.characters(max_codepoint=0x7f), max_size=6)
       | st.text(st.sampled_from("aZ_-.09=é \x7f\t"), max_size=4))
def test_name_status_follows_the_two_validation_rules(name: str) -> None:
    # IsEnvVarName (before 1.34): [-._a-zA-Z][-._a-zA-Z0-9]*; IsRelaxedEnvVarName: not empty,
    # every rune ASCII, unicode.IsPrint (0x20-0x7e for ASCII), and not '='
    alpha = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-._")
    strict = bool(name) and name[0] in alpha and set(name) <= alpha | set("0123456789")
    relaxed = bool(name) and all(" " <= ch <= "~" and ch != "=" for ch in name)
    want = "valid" if strict else "version-dependent" if relaxed else "invalid"
    assert name_status(name) == want
