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

import re
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit._hostmodel.runtimes._k8senv import container_env, expand
from agentkit._hostmodel.runtimes._kubernetes import Source, _environment
from agentkit._hostmodel.runtimes._yaml import load_yaml

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


@settings(max_examples=1500, deadline=None)
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
