"""The compiled-program artifact written by ``ina p4c -o``.

It carries the preprocessed source with its line origins (so diagnostics and packet
traces still point into the user's files) and the P4Info in text format. Loading it runs
parse and check again, which is quick, and is what a P4Runtime
SetForwardingPipelineConfig's device config holds for the built-in switch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from switch.frontend.diagnostics import CompileError, Diagnostic
from switch.frontend.program import Program

FORMAT = "ina-p4-program"
VERSION = 1


@dataclass
class StoredOrigin:
    file: str
    line: int


class StoredSource:
    """A preprocessed program restored from an artifact (the preprocessor's
    ``Preprocessed`` interface: ``text``, ``origin`` and ``source_line``)."""

    def __init__(self, text: str, origins: list[StoredOrigin], lines: list[str]):
        self.text = text
        self.origins = origins
        self.lines = lines

    def origin(self, line: int) -> StoredOrigin:
        if 1 <= line <= len(self.origins):
            return self.origins[line - 1]
        return StoredOrigin("<unknown>", line)

    def source_line(self, line: int) -> str:
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""


def dump_artifact(program: Program) -> str:
    from switch.frontend.p4info import p4info_text

    source = program.source
    text: str = source.text  # type: ignore[attr-defined]
    count = text.count("\n") + 1
    origins = [source.origin(i) for i in range(1, count + 1)]  # type: ignore[attr-defined]
    return json.dumps(
        {
            "format": FORMAT,
            "version": VERSION,
            "program": program.filename,
            "text": text,
            "origins": [[o.file, o.line] for o in origins],
            "lines": [source.source_line(i) for i in range(1, count + 1)],  # type: ignore[attr-defined]
            "p4info": p4info_text(program),
        },
        indent=1,
    )


def load_artifact(data: str | bytes, name: str = "<device config>") -> Program:
    """Rebuild the Program from an artifact; a malformed artifact is a CompileError."""
    from switch.frontend import compile_preprocessed

    def fail(why: str) -> CompileError:
        return CompileError([Diagnostic("error", f"not a compiled program: {why}", name, 0, 0)])

    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise fail(f"invalid JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise fail(f"missing format marker {FORMAT!r}")
    if doc.get("version") != VERSION:
        raise fail(f"unsupported version {doc.get('version')!r} (expected {VERSION})")
    try:
        origins = [StoredOrigin(str(f), int(n)) for f, n in doc["origins"]]
        source = StoredSource(str(doc["text"]), origins, [str(x) for x in doc["lines"]])
        filename = str(doc["program"])
    except (KeyError, TypeError, ValueError) as e:
        raise fail(f"bad field {e}") from None
    return compile_preprocessed(source, filename)
