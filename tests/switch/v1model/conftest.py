from __future__ import annotations

import textwrap

import pytest

HEADERS = """
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
"""


@pytest.fixture
def build():
    """build(p4_source, **switch_kwargs) -> V1Switch (HEADERS prepended)."""
    from switch.frontend import compile_text
    from switch.v1model import V1Switch

    def make(src: str, prelude: bool = True, **kw):
        text = (HEADERS if prelude else "") + textwrap.dedent(src)
        return V1Switch(compile_text(text, "test.p4"), **kw)

    return make
