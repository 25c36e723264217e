"""Two switches of one program, one per engine, driven as one: every call goes to
both, and what they answer (outputs of a packet, register and counter values,
errors) must be the same, as must every register and counter after each packet."""

from __future__ import annotations

from typing import Any

from switch.v1model import V1Switch


class Mismatch(AssertionError):
    pass


class DualSwitch:
    def __init__(self, program: Any, seed: int = 0):
        self.py = V1Switch(program, seed=seed, engine="python")
        self.nat = V1Switch(program, seed=seed, engine="native")
        assert self.nat.engine == "native"
        self.packets = 0
        self.outputs = 0
        self.sent: list[tuple[int, bytes]] = []  # every packet injected

    @property
    def engine(self) -> str:
        return "dual"

    def set_trace(self, trace: Any) -> None:  # traces come from the Python engine
        self.py.set_trace(trace)

    def __getattr__(self, name: str) -> Any:
        a, b = getattr(self.py, name), getattr(self.nat, name)
        if not callable(a):
            return a

        def both(*args: Any, **kw: Any) -> Any:
            ra = rb = ea = eb = None
            try:
                ra = a(*args, **kw)
            except Exception as e:  # noqa: BLE001 - compared below
                ea = e
            try:
                rb = b(*args, **kw)
            except Exception as e:  # noqa: BLE001
                eb = e
            if (ea is None) != (eb is None) or (ea is not None and str(ea) != str(eb)):
                raise Mismatch(f"{name}{args}: python raised {ea!r}, native {eb!r}")
            if ea is not None:
                raise ea
            if name == "inject":
                self.packets += 1
                self.sent.append((args[0], bytes(args[1])))
                if ra != rb:
                    raise Mismatch(f"packet {self.packets} on port {args[0]} "
                                   f"({bytes(args[1]).hex()}): python {ra!r}, native {rb!r}")
                self.outputs += len(ra)
                self.compare_state(f"after packet {self.packets}")
            elif ra != rb:
                raise Mismatch(f"{name}{args}: python {ra!r}, native {rb!r}")
            return ra

        return both

    def compare_state(self, when: str) -> None:
        for fqn, r in self.py.externs.registers.items():
            r2 = self.nat.externs.registers[fqn]
            va = [r.read(i) for i in range(r.size)]
            vb = [r2.read(i) for i in range(r2.size)]
            if va != vb:
                i = next(i for i in range(r.size) if va[i] != vb[i])
                raise Mismatch(f"{when}: register {fqn}[{i}]: python {va[i]}, native {vb[i]}")
        for fqn, c in self.py.externs.counters.items():
            c2 = self.nat.externs.counters[fqn]
            if [int(x) for x in c.packets] != [int(x) for x in c2.packets] or \
                    [int(x) for x in c.bytes] != [int(x) for x in c2.bytes]:
                raise Mismatch(f"{when}: counter {fqn} differs")
