"""Lexical scopes: what a name means at a point of the program."""

from __future__ import annotations

from switch.frontend import ast as A

# Declarations that may share a name when their parameter counts differ.
OVERLOADABLE = (A.ExternFunctionDecl, A.FunctionDecl, A.MethodDecl)


def arity(decl: object) -> int:
    params = getattr(decl, "params", None)
    return len(params) if params is not None else -1


class Scope:
    """One level of names; ``lookup`` walks out to the enclosing scopes."""

    def __init__(self, parent: Scope | None = None, kind: str = "") -> None:
        self.parent = parent
        self.kind = kind
        self.names: dict[str, list[object]] = {}

    def local(self, name: str) -> list[object]:
        return self.names.get(name, [])

    def add(self, name: str, decl: object) -> object | None:
        """Declare ``name``; returns the clashing earlier declaration, if any (the new
        one is not added then)."""
        existing = self.names.get(name)
        if existing:
            if isinstance(decl, OVERLOADABLE) and all(
                isinstance(e, OVERLOADABLE) and type(e) is type(decl) and arity(e) != arity(decl)
                for e in existing
            ):
                existing.append(decl)
                return None
            return existing[0]
        self.names[name] = [decl]
        return None

    def lookup(self, name: str) -> list[object]:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found:
                return found
            scope = scope.parent
        return []

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope
