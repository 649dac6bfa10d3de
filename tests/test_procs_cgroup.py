"""Who started a process, read from /proc/PID/cgroup as systemd lays the tree out.

Expected facts, from systemd's documentation (systemd.special(7), "The Control Group APIs"
on systemd.io, systemd-cgls(1)), written before the code was changed:
- cgroup v2 has one line, ``0::/path``; v1 has one line per hierarchy, and the one systemd
  manages is ``N:name=systemd:/path`` (a hybrid host also has ``0::/path``). Controllers'
  lines (``4:memory:/``) may name other paths and do not say who started the process.
- A system service's processes are in ``/system.slice/NAME.service`` (slices nest:
  ``/system.slice/ml.slice/NAME.service``). A unit's own sub-cgroups (Delegate=yes) lie
  below it, and the unit is still the one that started the process.
- A user's services run under the per-user manager ``user@UID.service``, in
  ``/user.slice/user-UID.slice/user@UID.service/app.slice/NAME.service``: NAME is a *user*
  unit (``systemctl --user``), not ``user@UID.service`` and not a system unit called NAME.
- A process started from a login shell is in ``session-N.scope``; from a user's terminal,
  in an app scope under ``user@UID.service/app.slice`` (``*.scope``): no service started it.
"""

from __future__ import annotations

import pytest

from agentkit._sandbox._procs import _cgroup_owner

CASES = [
    ("0::/system.slice/vllm.service\n", {"kind": "unit", "id": "vllm.service"}),
    ("0::/system.slice/ml.slice/vllm.service\n", {"kind": "unit", "id": "vllm.service"}),
    ("0::/system.slice/vllm.service/payload\n", {"kind": "unit", "id": "vllm.service"}),
    ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/vllm.service\n",
     {"kind": "unit", "id": "vllm.service", "manager": "user@1000.service"}),
    ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
     "app-org.gnome.Terminal.slice/vte-spawn-1.scope\n", {}),
    ("0::/user.slice/user-1000.slice/session-3.scope\n", {}),
    ("12:memory:/system.slice/other.service\n1:name=systemd:/system.slice/vllm.service\n"
     "0::/system.slice/vllm.service\n", {"kind": "unit", "id": "vllm.service"}),
    ("4:memory:/user.slice\n1:name=systemd:/system.slice/sglang.service\n",
     {"kind": "unit", "id": "sglang.service"}),
]


@pytest.mark.parametrize(("text", "owner"), CASES)
def test_the_innermost_unit_in_systemds_hierarchy_started_it(text: str,
                                                               owner: dict[str, str]) -> None:
    assert _cgroup_owner(text) == owner


def test_containers_and_pods_still_named() -> None:
    cid = "a" * 64
    assert _cgroup_owner(f"0::/system.slice/docker-{cid}.scope\n") == {
        "kind": "container", "id": cid[:12]}
    uid = "0d4c8f5e-2b7a-4c1e-9f3a-1b2c3d4e5f60"
    assert _cgroup_owner("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                         f"{uid.replace('-', '_')}.slice/cri-containerd-{cid}.scope\n") == {
        "kind": "pod", "id": uid}


def test_a_user_unit_is_not_the_system_unit_of_its_name() -> None:
    from agentkit._hostmodel._model import Server
    from agentkit._hostmodel.runtimes._processes import _owner

    unit = "/etc/systemd/system/vllm.service"
    system = Server(name="vllm.service", path=unit, files=[unit], argv=[], argv_source=unit,
                    argv_line=0, argv_evidence=[], env={})
    assert _owner([system], {"kind": "unit", "id": "vllm.service"}) is system
    assert _owner([system], {"kind": "unit", "id": "vllm.service",
                             "manager": "user@1000.service"}) is None
