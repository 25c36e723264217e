"""Helpers shared by the v1model tests."""

from __future__ import annotations


def eth(dst: int = 1, src: int = 2, etype: int = 0x1234) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + etype.to_bytes(2, "big")


def program(parser: str = "", ingress: str = "", egress: str = "", deparser: str = "",
            decls: str = "", headers: str = "struct H { ethernet_t e; }",
            meta: str = "struct M { bit<32> x; }", verify: str = "", compute: str = "") -> str:
    """A v1model program from its parts (each part is the body of its block)."""
    parser = parser or "state start { b.extract(h.e); transition accept; }"
    deparser = deparser or "b.emit(h.e);"
    return f"""
{headers}
{meta}
{decls}
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {{
{parser}
}}
control V(inout H h, inout M m) {{ apply {{ {verify} }} }}
control I(inout H h, inout M m, inout standard_metadata_t sm) {{
{ingress}
}}
control E(inout H h, inout M m, inout standard_metadata_t sm) {{
{egress or "apply { }"}
}}
control C(inout H h, inout M m) {{ apply {{ {compute} }} }}
control D(packet_out b, in H h) {{ apply {{ {deparser} }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
