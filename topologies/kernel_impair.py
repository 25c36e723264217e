"""Link impairments in the kernel (nftables), for switches that have none of their own.

The built-in switch impairs its ports itself (``ina switch-cli impair``); BMv2 cannot,
and these machines have no netem. So for BMv2 a host link is impaired in the kernel,
with the same spec and the same meaning, seen from the switch port at the link's other
end (``ingress``: frames the switch receives, ``egress``: frames it sends):

- loss, ingress: the host's interface drops P of the frames it sends (a ``netdev``
  egress hook in the host's namespace: a silent drop, as on a wire, where a drop in
  the IP output path would fail the sender's send call); egress: P of the frames it
  receives (``netdev`` ingress hook, before the IP stack);
- duplication, ingress: the host's interface sends a second copy of P of its frames
  (``dup``); egress: the switch's interface (in the root namespace) sends a second copy
  of P of the frames the switch transmits. A copy may be copied again, so a frame has
  P / (1 - P) copies on average.

A link that is cut (``cut_interface``): every frame a switch interface sends is
dropped (a ``netdev`` egress hook, ``policy drop``), so a link is cut both ways by
cutting both of its interfaces. This is how a link between two BMv2 switches goes down:
taking an interface down (``ip link set ... down``) stops BMv2 from receiving on every
one of its ports, for good (its libpcap read of the downed interface blocks its single
receive thread).

Delay and reordering have no kernel equivalent here (no netem): such a spec is
refused. ``seed`` is accepted but cannot make the pattern repeatable: nftables draws
its own random numbers. Loss on links between two switches is not emulated:
``impair_host_links`` refuses it when the network has such links.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Any

from switch.ports.errors import SpecError
from switch.ports.impair import ImpairmentConfig
from switch.ports.spec import parse_impairment_spec

TABLE = "ina_impair"
SCALE = 1_000_000  # nftables draws integers: P becomes "numgen random mod SCALE < P*SCALE"


class KernelImpairError(RuntimeError):
    """An impairment the kernel cannot apply, or nft failed; the message says which."""


@dataclass(frozen=True)
class HostLink:
    """One host's link to a switch: the host node and interface, the switch interface."""

    host: Any  # a Mininet host
    host_intf: str
    switch_intf: str


def parse_spec(spec: str) -> ImpairmentConfig | None:
    """The config of an ``ina switch-cli impair all SPEC`` spec; None for ``none``."""
    if spec.strip().lower() == "none":
        return None
    try:
        _, config = parse_impairment_spec(f"all:{spec}")
    except SpecError as e:
        raise KernelImpairError(str(e)) from None
    unsupported = [name for name, value in (("delay", config.delay_ms),
                                            ("reorder", config.reorder)) if value]
    if unsupported:
        raise KernelImpairError(f"{', '.join(unsupported)} needs the built-in switch: the "
                                "kernel here has no netem")
    return config


def _threshold(p: float) -> int:
    return round(p * SCALE)


def host_rules(config: ImpairmentConfig, intf: str) -> str:
    """The ``nft -f`` script for a host's namespace (``intf``: its link's interface)."""
    ingress = config.direction in ("ingress", "both")
    egress = config.direction in ("egress", "both")
    sent, received = [], []
    if ingress and config.loss:
        sent.append(f"numgen random mod {SCALE} < {_threshold(config.loss)} drop")
    if ingress and config.duplicate:
        sent.append(f"numgen random mod {SCALE} < {_threshold(config.duplicate)} "
                    f"dup to \"{intf}\"")
    if egress and config.loss:
        received.append(f"numgen random mod {SCALE} < {_threshold(config.loss)} drop")
    lines = [f"table netdev {TABLE} {{"]
    for chain, hook, rules in (("sent", "egress", sent), ("received", "ingress", received)):
        if rules:
            lines += [f"  chain {chain} {{ type filter hook {hook} device \"{intf}\" "
                      "priority 0; policy accept;", *(f"    {r}" for r in rules), "  }"]
    return "\n".join([*lines, "}"]) + "\n"


def switch_rules(config: ImpairmentConfig, intf: str) -> str | None:
    """The ``nft -f`` script for a switch interface (root namespace), if any."""
    if not (config.duplicate and config.direction in ("egress", "both")):
        return None
    return (f"table netdev {_switch_table(intf)} {{\n"
            f"  chain egress {{ type filter hook egress device \"{intf}\" priority 0; "
            f"policy accept;\n"
            f"    numgen random mod {SCALE} < {_threshold(config.duplicate)} "
            f"dup to \"{intf}\"\n  }}\n}}\n")


def _switch_table(intf: str) -> str:
    return f"{TABLE}_{intf.replace('-', '_')}"


def _nft(argv_prefix: list[str], script: str | None, args: list[str], what: str,
         check: bool = True) -> None:
    proc = subprocess.run([*argv_prefix, "nft", *args], input=script, text=True,
                          capture_output=True)
    if check and proc.returncode != 0:
        raise KernelImpairError(f"nft on {what} failed (status {proc.returncode}): "
                                f"{proc.stderr.strip()}")


def _in_host(host: Any) -> list[str]:
    """Run a command in a Mininet host's namespace (``mnexec -da PID``)."""
    return ["mnexec", "-da", str(host.pid)]


def impair_host_links(links: list[HostLink], spec: str,
                      has_switch_links: bool = False) -> None:
    """Replace the impairments of every link in ``links`` by ``spec`` (``none``
    clears them)."""
    config = parse_spec(spec)
    if config is not None and config.loss and has_switch_links:
        raise KernelImpairError("loss on links between two switches needs the built-in "
                                "switch (the kernel rules impair host links only)")
    for link in links:
        where = f"host {link.host.name}"
        _nft(_in_host(link.host), None, ["delete", "table", "netdev", TABLE], where,
             check=False)
        _nft([], None, ["delete", "table", "netdev", _switch_table(link.switch_intf)],
             link.switch_intf, check=False)
        if config is None:
            continue
        _nft(_in_host(link.host), host_rules(config, link.host_intf), ["-f", "-"], where)
        rules = switch_rules(config, link.switch_intf)
        if rules is not None:
            _nft([], rules, ["-f", "-"], f"switch interface {link.switch_intf}")


CUT_PREFIX = "ina_cut_"


def cut_interface(intf: str, cut: bool) -> None:
    """Drop every frame ``intf`` (a switch interface, in the root namespace) sends
    (``cut``), or stop dropping them."""
    table = f"{CUT_PREFIX}{intf.replace('-', '_')}"
    if not cut:
        _nft([], None, ["delete", "table", "netdev", table], intf)
        return
    _nft([], f"table netdev {table} {{\n  chain egress {{ type filter hook egress device "
             f"\"{intf}\" priority -100; policy drop; }}\n}}\n", ["-f", "-"],
         f"switch interface {intf}")


def clear_cuts() -> list[str]:
    """Remove every cut (``cut_interface``) a run left behind: a netdev table outlives
    its interface and hooks onto the next one of the same name. The tables removed."""
    proc = subprocess.run(["nft", "list", "tables", "netdev"], capture_output=True,
                          text=True)
    names = [line.split()[-1] for line in proc.stdout.splitlines()
             if line.startswith("table netdev ") and line.split()[-1].startswith(CUT_PREFIX)]
    for name in names:
        _nft([], None, ["delete", "table", "netdev", name], name, check=False)
    return names
