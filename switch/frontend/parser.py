"""The P4_16 parser: preprocessed source text -> ``ast.SourceFile``.

Three steps:

1. ``_tokenize`` cuts the text into tokens (comments are skipped, although the
   preprocessor has normally removed them already).
2. ``_Classifier`` decides, like p4c's lexer, which identifiers name types
   (TYPE_IDENTIFIER) and which `<` opens the type arguments of a call. P4 needs this
   to parse at all: ``a < b > (c)`` is two comparisons but ``f<T>(c)`` is a call, and
   ``T x;`` declares a variable while ``t.apply();`` is a statement. p4c feeds the
   lexer from the parser's symbol table; here a pre-scan of the token stream follows
   the declarations instead. Type names are global and must be declared before use;
   type parameters (``T`` in ``extern register<T>``, ``H`` in ``parser P<H>(...)``)
   are types only inside their declaration, which includes the return type that
   comes before them in ``T lookahead<T>()``.
3. lark's LALR(1) parser, built from ``p4.lark``, runs ``_Builder``'s callbacks as
   it reduces, so the syntax tree is built without an intermediate parse tree.

Syntax errors are reported the way p4c reports them (``syntax error, unexpected
IDENTIFIER "foo"``) and stop the parse.
"""

from __future__ import annotations

import copy
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedInput, UnexpectedToken
from lark.lexer import Lexer

from switch.frontend import ast as A
from switch.frontend.diagnostics import Diagnostics

__all__ = ["parse", "GRAMMAR_PATH"]

GRAMMAR_PATH = Path(__file__).with_name("p4.lark")

# --------------------------------------------------------------------------- tokens

_PUNCT = {
    "&&&": "MASK", "|+|": "PLUS_SAT", "|-|": "MINUS_SAT", "<<": "SHL", "&&": "ANDAND",
    "||": "OROR", "==": "EQ", "!=": "NE", "<=": "LE", ">=": "GE", "++": "PP", "...": "DOTS",
    "..": "RANGE", "{#}": "INVALID_HEADER",
    "+=": "PLUS_ASSIGN", "-=": "MINUS_ASSIGN", "*=": "STAR_ASSIGN", "/=": "SLASH_ASSIGN",
    "%=": "PERCENT_ASSIGN", "&=": "BAND_ASSIGN", "|=": "BOR_ASSIGN", "^=": "BXOR_ASSIGN",
    "<<=": "SHL_ASSIGN", "|+|=": "PLUS_SAT_ASSIGN", "|-|=": "MINUS_SAT_ASSIGN",
    ";": "SEMI", ",": "COMMA", ":": "COLON", ".": "DOT", "=": "ASSIGN", "(": "LPAR",
    ")": "RPAR", "[": "LSQB", "]": "RSQB", "{": "LBRACE", "}": "RBRACE", "<": "LT",
    ">": "GT", "@": "AT", "?": "QMARK", "!": "BANG", "~": "TILDE", "+": "PLUS", "-": "MINUS",
    "*": "STAR", "/": "SLASH", "%": "PERCENT", "|": "BOR", "&": "BAND", "^": "BXOR",
}

_KEYWORDS = {
    word: word.upper()
    for word in (
        "abstract action actions apply bit bool break const continue control default else "
        "entries enum error exit extern false for header header_union if in inout int key "
        "match_kind out "
        "package parser priority return select state string struct switch table this "
        "transition true tuple type typedef varbit void"
    ).split()
}
_KEYWORDS["value_set"] = "VALUESET"
_KEYWORDS["_"] = "DONTCARE"

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f\v]+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<int>[0-9]+[ws](?:0[xX][0-9a-fA-F_]+|0[dD][0-9_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9_]+)
          | 0[xX][0-9a-fA-F_]+ | 0[dD][0-9_]+ | 0[oO][0-7_]+ | 0[bB][01_]+ | [0-9][0-9_]*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<punct>&&&|\|\+\|=?|\|-\|=?|<<=?|&&|\|\||==|!=|<=|>=|\+\+|\.\.\.|\.\.|\{\#\}
          |[-+*/%&|^]=
          |[;,:.=()\[\]{}<>@?!~+\-*/%|&^])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)

# Keywords that are also allowed as ordinary names (p4c's nonTypeName).
_NAME_KEYWORDS = frozenset({"APPLY", "KEY", "ACTIONS", "STATE", "ENTRIES", "TYPE", "PRIORITY"})
# Tokens after which a `.` selects a member (otherwise a `.` starts a top-level name).
_EXPR_END = frozenset({"IDENTIFIER", "TYPE_IDENTIFIER", "RPAR", "RSQB", "THIS", "ERROR"}
                      | _NAME_KEYWORDS)
_BASE_TYPES = frozenset({"BOOL", "STRING", "ERROR", "MATCH_KIND", "INT", "BIT", "VARBIT"})
# Tokens that end a type (or an instantiation's arguments) before a declared name.
_DECLARED_AFTER = frozenset({"TYPE_IDENTIFIER", "GT", "_RSHIFT", "RSQB", "RPAR", "BOOL",
                             "STRING", "ERROR", "INT", "BIT"})
_CLOSERS = ("GT", "_RSHIFT")
_OPEN = frozenset({"LPAR", "LSQB", "LBRACE"})


@dataclass(slots=True)
class _Tok:
    kind: str  # a terminal name of p4.lark; "ID" until classified, "BAD" for junk
    text: str
    start: int
    end: int
    line: int
    col: int


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    line, line_start = 1, 0
    for m in _TOKEN_RE.finditer(text):
        group = m.lastgroup
        start, end = m.start(), m.end()
        if group == "ws" or group == "comment":
            nl = text.count("\n", start, end)
            if nl:
                line += nl
                line_start = text.rfind("\n", start, end) + 1
            continue
        value = m.group()
        col = start - line_start + 1
        if group == "id":
            kind = _KEYWORDS.get(value, "ID")
        elif group == "int":
            kind = "INTEGER"
        elif group == "str":
            kind = "STRING_LITERAL"
        elif group == "punct":
            kind = _PUNCT[value]
            if value == ">" and text.startswith(">", end):
                kind = "_RSHIFT"
        else:
            kind = "BAD"
        toks.append(_Tok(kind, value, start, end, line, col))
        if group == "str" and "\n" in value:
            line += value.count("\n")
            line_start = text.rfind("\n", start, end) + 1
    return toks


def _collapse_annotation_bodies(
    toks: list[_Tok], text: str
) -> tuple[list[_Tok], dict[int, list[_Tok]]]:
    """Replace the parenthesised body of every ``@name(...)`` by one ANNOT_BODY token
    (its text is the raw body); ``@pragma name tokens...`` takes the rest of its line.
    Returns the new token list and the body tokens by the body's start offset."""
    out: list[_Tok] = []
    bodies: dict[int, list[_Tok]] = {}
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i]
        if t.kind == "AT" and i + 1 < n and _wordlike(toks[i + 1]):
            name = toks[i + 1]
            if name.text == "pragma" and i + 2 < n and _wordlike(toks[i + 2]):
                pname = toks[i + 2]
                j = i + 3
                while j < n and toks[j].line == pname.line:
                    j += 1
                out += [t, pname]
                if j > i + 3:
                    first, last = toks[i + 3], toks[j - 1]
                    body = _Tok("ANNOT_BODY", text[first.start:last.end], first.start,
                                last.end, first.line, first.col)
                    bodies[first.start] = toks[i + 3:j]
                    out.append(body)
                i = j
                continue
            if i + 2 < n and toks[i + 2].kind == "LPAR":
                close = _matching_paren(toks, i + 2)
                if close > 0:
                    lpar, rpar = toks[i + 2], toks[close]
                    out += [t, name, _Tok("ANNOT_BODY", text[lpar.end:rpar.start], lpar.start,
                                          rpar.end, lpar.line, lpar.col)]
                    bodies[lpar.start] = toks[i + 3:close]
                    i = close + 1
                    continue
        out.append(t)
        i += 1
    return out, bodies


def _wordlike(t: _Tok) -> bool:
    return t.kind == "ID" or t.text in _KEYWORDS


def _matching_paren(toks: list[_Tok], i: int) -> int:
    depth = 0
    for j in range(i, len(toks)):
        k = toks[j].kind
        if k == "LPAR":
            depth += 1
        elif k == "RPAR":
            depth -= 1
            if depth == 0:
                return j
    return -1


# ---------------------------------------------------------------- type names


class _Classifier:
    """Gives every identifier the kind IDENTIFIER or TYPE_IDENTIFIER, and every `<`
    that opens the type arguments of a call the kind _LANGLE_ARGS."""

    def __init__(self, toks: list[_Tok], types: set[str] | None = None):
        self.toks = toks
        self.n = len(toks)
        self.types: set[str] = set() if types is None else types
        self.scopes: list[frozenset[str]] = []  # type parameters in scope, innermost last

    def kind(self, i: int) -> str:
        return self.toks[i].kind if 0 <= i < self.n else "$END"

    # ---------------------------------------------------------------- driver

    def run(self) -> None:
        i = 0
        while i < self.n:
            i = max(self.declaration(i), i + 1)
        self.classify(0, self.n)
        self.mark_type_argument_lists()

    def classify(self, a: int, b: int) -> None:
        for i in range(max(a, 0), min(b, self.n)):
            if self.toks[i].kind == "ID":
                self.classify_one(i, None)

    def classify_one(self, i: int, objects: set[str] | None) -> None:
        """``objects`` (in the body of a parser, control, action or function) holds the
        parameters and the names declared so far in the enclosing blocks, which hide
        types of the same name, as in p4c."""
        t = self.toks[i]
        prev = self.kind(i - 1)
        if prev == "AT" or (prev == "DOT" and self.kind(i - 2) in _EXPR_END):
            t.kind = "IDENTIFIER"  # an annotation name or a member name
            return
        if objects is not None and t.text in objects:
            t.kind = "IDENTIFIER"
        elif t.text in self.types or any(t.text in s for s in self.scopes):
            t.kind = "TYPE_IDENTIFIER"
        else:
            t.kind = "IDENTIFIER"
        if objects is not None and prev in _DECLARED_AFTER \
                and self.kind(i + 1) in ("SEMI", "ASSIGN", "IN"):
            objects.add(t.text)  # `T name;`, `T name = e;`, `T(args) name;`, `for (T name in`

    def classify_body(self, a: int, b: int, objects: set[str]) -> None:
        """Classify ``toks[a:b]``, a body; blocks and actions open nested scopes."""
        i = max(a, 0)
        b = min(b, self.n)
        while i < b:
            k = self.toks[i].kind
            if k == "LBRACE":
                c = min(self.close(i), b - 1)
                self.classify_body(i + 1, c, set(objects))
                i = c + 1
            elif k == "ACTION" and self.kind(i + 2) == "LPAR":
                self.classify(i + 1, i + 2)
                c = self.close(i + 2)
                self.classify_body(i + 2, c + 1, set(objects))
                inner = objects | self.parameter_names(i + 2, c + 1)
                i = c + 1
                if self.kind(i) == "LBRACE":
                    c = min(self.close(i), b - 1)
                    self.classify_body(i + 1, c, inner)
                    i = c + 1
            else:
                if k == "ID":
                    self.classify_one(i, objects)
                i += 1

    def declare_type(self, i: int, force_identifier: bool = False) -> None:
        """The name of a type declaration at token ``i``: lexed before it is declared."""
        if self.kind(i) != "ID":
            return
        if force_identifier:
            self.toks[i].kind = "IDENTIFIER"
        else:
            self.classify(i, i + 1)
        self.types.add(self.toks[i].text)

    def scoped_classify(self, params: list[str], a: int, b: int) -> None:
        self.scopes.append(frozenset(params))
        try:
            self.classify(a, b)
        finally:
            self.scopes.pop()

    def classify_with_body(self, params: list[str], a: int, body: int, b: int) -> None:
        """A declaration whose parameter lists lie in ``toks[a:body]`` and whose body
        is ``toks[body:b]``: the parameters hide types of the same name in the body."""
        self.scopes.append(frozenset(params))
        try:
            self.classify(a, body)
            self.classify_body(body, b, self.parameter_names(a, body))
        finally:
            self.scopes.pop()

    def parameter_names(self, a: int, b: int) -> set[str]:
        """The names in the parameter lists in ``toks[a:b]``: identifiers directly
        before a `,`, `)` or `=` inside parentheses."""
        names: set[str] = set()
        depth = 0
        for i in range(a, min(b, self.n)):
            k = self.toks[i].kind
            if k == "LPAR":
                depth += 1
            elif k == "RPAR":
                depth -= 1
            if depth >= 1 and self.kind(i + 1) in ("COMMA", "RPAR", "ASSIGN") and \
                    self.toks[i].kind in ("ID", "IDENTIFIER", "TYPE_IDENTIFIER"):
                names.add(self.toks[i].text)
        return names

    # ------------------------------------------------------- token navigation

    def close(self, i: int) -> int:
        """Index of the bracket closing the one at ``i`` (the last token if none)."""
        depth = 0
        for j in range(i, self.n):
            k = self.toks[j].kind
            if k in _OPEN:
                depth += 1
            elif k in ("RPAR", "RSQB", "RBRACE"):
                depth -= 1
                if depth == 0:
                    return j
        return self.n - 1

    def find_semi(self, i: int) -> int:
        j = i
        while j < self.n:
            k = self.toks[j].kind
            if k in _OPEN:
                j = self.close(j)
            elif k == "SEMI":
                return j
            elif k == "RBRACE":
                return j - 1
            j += 1
        return self.n - 1

    def end_at_body(self, i: int) -> int:
        """End of a declaration that ends with a ``{...}`` body (or, if malformed, a
        semicolon)."""
        j = i
        while j < self.n:
            k = self.toks[j].kind
            if k == "LBRACE":
                return self.close(j)
            if k in ("LPAR", "LSQB"):
                j = self.close(j)
            elif k in ("SEMI", "RBRACE"):
                return j
            j += 1
        return self.n - 1

    def body_start(self, i: int, e: int) -> int:
        """Index of the `{` that opens the body ending at ``e`` (or ``e``)."""
        depth = 0
        for j in range(e, i - 1, -1):
            k = self.toks[j].kind
            if k == "RBRACE":
                depth += 1
            elif k == "LBRACE":
                depth -= 1
                if depth == 0:
                    return j
        return e

    def skip_angles(self, i: int) -> int:
        """Index after the `>` matching the `<` at ``i``."""
        depth = 0
        j = i
        while j < self.n:
            k = self.toks[j].kind
            if k == "LT":
                depth += 1
            elif k in _CLOSERS:
                depth -= 1
                if depth == 0:
                    return j + 1
            elif k == "LPAR":
                j = self.close(j)
            elif k in ("SEMI", "LBRACE", "RBRACE"):
                return j
            j += 1
        return j

    def type_params(self, i: int) -> tuple[list[str], int]:
        """The names in ``<A, B>`` at ``i`` and the index after it."""
        end = self.skip_angles(i)
        names = [t.text for t in self.toks[i + 1:end] if t.kind == "ID"]
        return names, end

    def skip_type(self, i: int) -> int:
        j = i
        if self.kind(j) == "DOT":
            j += 1
        if self.kind(j) in ("ID", "TUPLE", "VOID") or self.kind(j) in _BASE_TYPES:
            j += 1
        else:
            return j
        if self.kind(j) == "LT":
            j = self.skip_angles(j)
        while self.kind(j) == "LSQB":
            j = self.close(j) + 1
        return j

    def annotations(self, i: int) -> int:
        while self.kind(i) == "AT":
            self.classify(i + 1, i + 2)
            j = i + 2
            if self.kind(j) == "ANNOT_BODY":
                j += 1
            elif self.kind(j) == "LSQB":
                c = self.close(j)
                self.classify(j, c + 1)
                j = c + 1
            i = j
        return i

    # ----------------------------------------------------------- declarations

    def declaration(self, i: int) -> int:
        """Classify one top-level declaration starting at ``i``; returns the index
        after it."""
        start = i
        i = self.annotations(i)
        k = self.kind(i)
        if k in ("HEADER", "STRUCT", "HEADER_UNION"):
            return self.aggregate(i)
        if k == "ENUM":
            return self.enum(i)
        if k in ("TYPEDEF", "TYPE"):
            return self.typedef(i)
        if k == "EXTERN":
            return self.extern(i)
        if k in ("PARSER", "CONTROL", "PACKAGE"):
            return self.block_type(i)
        if k in ("ERROR", "MATCH_KIND") and self.kind(i + 1) == "LBRACE":
            e = self.close(i + 1)
            self.classify(i, e + 1)
            return e + 1
        if k == "CONST":
            e = self.find_semi(i)
        elif k == "ACTION":
            e = self.end_at_body(i)
            body = self.body_start(i, e)
            self.classify_with_body([], start, body, e + 1)
            return e + 1
        elif k == "SEMI" or i >= self.n:
            return i + 1
        else:
            j = self.skip_type(i)
            if self.kind(j) != "LPAR":
                return self.function(i, start)
            e = self.find_semi(j)  # an instantiation
        self.classify(start, e + 1)
        return e + 1

    def aggregate(self, i: int) -> int:
        self.declare_type(i + 1)
        j = i + 2
        params: list[str] = []
        if self.kind(j) == "LT":
            params, j = self.type_params(j)
        e = self.close(j) if self.kind(j) == "LBRACE" else self.find_semi(j)
        self.scoped_classify(params, i, e + 1)
        return e + 1

    def enum(self, i: int) -> int:
        j = i + 1
        while j < self.n and self.kind(j) not in ("LBRACE", "SEMI"):
            j += 1
        self.classify(i, j - 1)  # the underlying type of a serializable enum
        self.declare_type(j - 1)
        if self.kind(j) != "LBRACE":
            return j + 1
        e = self.close(j)
        self.classify(j, e + 1)
        return e + 1

    def typedef(self, i: int) -> int:
        j = self.annotations(i + 1)
        if self.kind(j) in ("HEADER", "STRUCT", "HEADER_UNION", "ENUM"):
            j = self.declaration(j)
        e = self.find_semi(j)
        self.classify(i, e - 1)
        self.declare_type(e - 1)
        return e + 1

    def extern(self, i: int) -> int:
        j = i + 1
        after = self.kind(j + 1)
        if self.kind(j) != "ID" or after not in ("LBRACE", "SEMI", "LT"):
            return self.function(j, i)
        params: list[str] = []
        body = j + 1
        if after == "LT":
            body = self.skip_angles(j + 1)
            if self.kind(body) != "LBRACE":
                return self.function(j, i)  # returns a specialized type
            params, _ = self.type_params(j + 1)
        self.declare_type(j, force_identifier=True)
        if after == "SEMI":
            return j + 2  # forward declaration
        self.scopes.append(frozenset(params))
        try:
            self.classify(i, body + 1)
            m = body + 1
            while m < self.n and self.kind(m) != "RBRACE":
                m = max(self.method(m), m + 1)
        finally:
            self.scopes.pop()
        return m + 1

    def method(self, i: int) -> int:
        j = self.annotations(i)
        if self.kind(j) == "ABSTRACT":
            j += 1
        if self.kind(j) == "ID" and self.kind(j + 1) == "LPAR":  # constructor
            e = self.find_semi(j)
            self.classify(i, e + 1)
            return e + 1
        return self.function(j, i)

    def function(self, i: int, start: int) -> int:
        """A function, extern function or method: return type, name, type parameters
        (in scope from the return type on), parameters, then ``;`` or a body."""
        j = self.skip_type(i) + 1
        params: list[str] = []
        if self.kind(j) == "LT":
            params, j = self.type_params(j)
        if self.kind(j) == "LPAR":
            j = self.close(j) + 1
        if self.kind(j) == "SEMI":
            e = j
        elif self.kind(j) in ("LBRACE", "AT"):
            e = self.end_at_body(j)
            self.classify_with_body(params, start, j, e + 1)
            return e + 1
        else:
            e = self.find_semi(j)
        self.scoped_classify(params, start, e + 1)
        return e + 1

    def block_type(self, i: int) -> int:
        """``parser``, ``control`` and ``package``: type declarations or definitions."""
        self.declare_type(i + 1)
        j = i + 2
        params: list[str] = []
        if self.kind(j) == "LT":
            params, j = self.type_params(j)
        if self.kind(j) == "LPAR":
            j = self.close(j) + 1
        if self.kind(j) == "SEMI":
            self.scoped_classify(params, i, j + 1)
            return j + 1
        if self.kind(j) == "LPAR":
            j = self.close(j) + 1
        e = self.close(j) if self.kind(j) == "LBRACE" else self.find_semi(j)
        self.classify_with_body(params, i, j, e + 1)
        return e + 1

    # ------------------------------------------------------- type arguments

    def mark_type_argument_lists(self) -> None:
        """``f<T>(x)``: a `<` after a plain name starts type arguments when what follows
        is a list of types closed by `>` and followed by `(`; otherwise it compares."""
        toks = self.toks
        for i in range(1, self.n):
            t = toks[i]
            if t.kind != "LT":
                continue
            prev = toks[i - 1].kind
            if prev != "IDENTIFIER" and prev not in _NAME_KEYWORDS:
                continue
            c = self.type_list(i + 1)
            if c >= 0 and self.kind(c) == "GT" and self.kind(c + 1) == "LPAR":
                t.kind = "_LANGLE_ARGS"

    def type_list(self, i: int) -> int:
        """Index of the `>` closing a type argument list that starts at ``i``, or -1."""
        if self.kind(i) in _CLOSERS:
            return i
        real = True
        while True:
            i = self.type_arg(i, real)
            if i < 0:
                return -1
            real = False
            k = self.kind(i)
            if k == "COMMA":
                i += 1
            elif k in _CLOSERS:
                return i
            else:
                return -1

    def type_arg(self, i: int, real: bool) -> int:
        """Index after a type argument at ``i``, or -1. The first argument of a list must
        be a type ("real"), later ones may also be plain names, as in p4c."""
        k = self.kind(i)
        if k in ("DONTCARE", "VOID"):
            return i + 1
        if k in _BASE_TYPES:
            j = i + 1
            if k in ("INT", "BIT", "VARBIT") and self.kind(j) == "LT":
                j += 1
                if self.kind(j) == "INTEGER":
                    j += 1
                elif self.kind(j) == "LPAR":
                    j = self.close(j) + 1
                else:
                    return -1
                if self.kind(j) not in _CLOSERS:
                    return -1
                j += 1
            return j
        if k == "TUPLE":
            if self.kind(i + 1) != "LT":
                return -1
            c = self.type_list(i + 2)
            return -1 if c < 0 else c + 1
        if k == "DOT" and self.kind(i + 1) == "TYPE_IDENTIFIER":
            i += 1
            k = "TYPE_IDENTIFIER"
        if k == "TYPE_IDENTIFIER" or (k == "IDENTIFIER" and not real):
            j = i + 1
            if self.kind(j) == "LT":
                c = self.type_list(j + 1)
                if c < 0:
                    return -1
                j = c + 1
            if self.kind(j) == "LSQB":
                j = self.close(j) + 1
            return j
        return -1


def _lark_tokens(toks: list[_Tok]) -> list[Token]:
    return [Token(t.kind, t.text, t.start, t.line, t.col, None, None, t.end) for t in toks]


# ------------------------------------------------------------------- messages

# Tokens that are neither keywords nor punctuation; p4c (bison) calls them by these names.
_TOKEN_NAMES = frozenset({"IDENTIFIER", "TYPE_IDENTIFIER", "INTEGER", "STRING_LITERAL"})
_PUNCT_TEXT = {kind: text for text, kind in _PUNCT.items()}
_PUNCT_TEXT.update({"_LANGLE_ARGS": "<", "_RSHIFT": ">", "ANNOT_BODY": "(", "DONTCARE": "_"})
_KEYWORD_KINDS = frozenset(_KEYWORDS.values()) - {"DONTCARE"}


def _describe(kind: str, text: str | None = None) -> str:
    """A token as p4c names it in a syntax error; with ``text``, quoted after names and
    literals."""
    if kind in _TOKEN_NAMES:
        if text is None:
            return kind
        if kind == "STRING_LITERAL":
            text = text[1:-1]
        return f'{kind} "{text}"'
    if kind in _KEYWORD_KINDS:
        return kind
    if kind == "$END":
        return "end of file"
    if kind == "BAD":
        return f'character "{text}"' if text is not None else "character"
    return '"' + _PUNCT_TEXT.get(kind, kind) + '"'


def _syntax_error_message(tok: Token, expected: set[str] | None) -> str:
    if tok.type == "BAD" and str(tok).startswith('"'):
        return "syntax error, unterminated string literal"
    message = "syntax error, unexpected " + _describe(tok.type, str(tok))
    if expected:
        names = sorted({_describe(k) for k in expected if not k.startswith("__")})
        if 0 < len(names) <= 4:
            message += ", expecting " + " or ".join(names)
    return message


# -------------------------------------------------------------------- builder


@dataclass(slots=True)
class _Proto:
    """A function prototype before it becomes a method, function or extern function."""

    pos: A.Pos
    return_type: A.TypeRef
    name: str
    type_params: list[str]
    params: list[A.Param]


@dataclass(slots=True)
class _BlockHeader:
    """``parser P<H>(...)`` / ``control C(...)``: the part shared by the type declaration
    and the definition."""

    pos: A.Pos
    annotations: list[A.Annotation]
    name: str
    type_params: list[str]
    params: list[A.Param]


@dataclass(slots=True)
class _ForHead:
    """The part of a ``for`` statement before its body: the three clauses, or the
    variable and collection of the ``in`` form (``var`` set)."""

    pos: A.Pos
    annotations: list[A.Annotation]
    init: list[A.Stmt] = field(default_factory=list)
    cond: A.Expr | None = None
    updates: list[A.Stmt] = field(default_factory=list)
    var: A.VarDecl | None = None
    collection: A.Expr | None = None


@dataclass(slots=True)
class _Transition:
    value: str | A.Select


@dataclass(slots=True)
class _Property:
    pos: A.Pos
    name: str
    value: Any
    is_const: bool = False
    annotations: list[A.Annotation] = field(default_factory=list)


@dataclass(slots=True)
class _Context:
    """What the callbacks need from the parse in progress."""

    diags: Diagnostics
    bodies: dict[int, list[_Tok]]
    types: set[str]
    # instances that direct applications (``T.apply(...)``) declare in the enclosing
    # parser or control; taken by the parser_decl/control_decl callback
    direct_instances: list[A.Instantiation] = field(default_factory=list)


def _pos(x: Any) -> A.Pos:
    if isinstance(x, Token):
        return A.Pos(x.line or 0, x.column or 0)
    return x.pos  # type: ignore[no-any-return]


def _str(x: Any) -> str:
    return str(x)


def _int_literal(tok: Token) -> A.IntLit:
    text = str(tok)
    digits = text.replace("_", "")
    width: int | None = None
    signed = False
    m = re.match(r"([0-9]+)([ws])(.+)$", digits)
    if m:
        width = int(m.group(1))
        signed = m.group(2) == "s"
        digits = m.group(3)
    base = {"x": 16, "X": 16, "b": 2, "B": 2, "o": 8, "O": 8, "d": 10, "D": 10}.get(
        digits[1:2], 10) if digits.startswith("0") and len(digits) > 1 else 10
    body = digits[2:] if base != 10 or digits[1:2] in ("d", "D") else digits
    return A.IntLit(_pos(tok), int(body, base), width, signed, text)


def _string_value(text: str) -> str:
    return re.sub(r'\\([\\"])', r"\1", text[1:-1])


def _name_expr(ref: A.NamedTypeRef) -> A.Name:
    if ref.name.startswith("."):
        return A.Name(ref.pos, ref.name[1:], True)
    return A.Name(ref.pos, ref.name)


def _annotations(x: list[A.Annotation] | None) -> list[A.Annotation]:
    return x if x is not None else []


def _as_stmt(x: Any) -> A.Stmt:
    if isinstance(x, A.Declaration):
        return A.DeclStmt(x.pos, x)
    return x  # type: ignore[no-any-return]


# Annotations whose body must be a list of expressions (p4c parses these itself).
_EXPRESSION_ANNOTATIONS = frozenset({
    "name", "id", "priority", "field_list", "controller_header", "deprecated", "noWarn",
    "brief", "description", "max_group_size", "selector_size_semantics",
    "max_member_weight", "pkginfo", "platform_property",
})

_TABLE_FIELDS = ("key", "actions", "entries", "default_action", "size",
                 "largest_priority_wins", "priority_delta")


class _Builder:
    """lark callbacks: one method per rule or alias of ``p4.lark``; each receives the
    rule's kept children (named terminals and sub-results; `[x]` gives None when
    absent) and returns syntax tree nodes."""

    def __init__(self) -> None:
        self.ctx: _Context | None = None
        self.lark: Lark | None = None

    @property
    def diags(self) -> Diagnostics:
        assert self.ctx is not None
        return self.ctx.diags

    # ----------------------------------------------------------- program

    def start(self, c: list[Any]) -> A.SourceFile:
        decls: list[A.Declaration] = []
        for d in c:
            if isinstance(d, list):
                decls.extend(d)
            elif d is not None:
                decls.append(d)
        return A.SourceFile(decls)

    def annotation_body(self, c: list[Any]) -> Any:
        return c[0] if c and c[0] is not None else []

    # ------------------------------------------------------------- names

    def plain_name(self, c: list[Any]) -> A.Name:
        return A.Name(_pos(c[0]), _str(c[0]))

    def top_name(self, c: list[Any]) -> A.Name:
        return A.Name(_pos(c[0]), _str(c[1]), True)

    # ------------------------------------------------------- annotations

    def annotations(self, c: list[Any]) -> list[A.Annotation]:
        return list(c)

    def annotation(self, c: list[Any]) -> A.Annotation:
        at, name, body = c
        ann = A.Annotation(_pos(at), _str(name))
        if body is not None:
            ann.raw = _str(body)
            self._annotation_body(ann, body)
        return ann

    def annotation_list(self, c: list[Any]) -> A.Annotation:
        return A.Annotation(_pos(c[0]), _str(c[1]), body=list(c[2] or []), structured=True)

    def annotation_kv(self, c: list[Any]) -> A.Annotation:
        kv: dict[str, A.Expr] = {}
        for key, value in c[2]:
            if _str(key) in kv:
                self.diags.error(_pos(key), f"{key}: duplicate annotation key", len(key))
            kv[_str(key)] = value
        return A.Annotation(_pos(c[0]), _str(c[1]), kv=kv, structured=True)

    def _annotation_body(self, ann: A.Annotation, body: Token) -> None:
        """Parse the tokens of ``@name(...)`` as expressions when they are some; a known
        annotation whose body is not is an error, an unknown one just keeps ``raw``."""
        assert self.ctx is not None and self.lark is not None
        toks = self.ctx.bodies.get(body.start_pos or 0, [])
        if not toks:
            return
        if ann.name == "p4runtime_translation":
            self._p4runtime_translation(ann, toks)
            return
        inner = [_Tok(t.kind, t.text, t.start, t.end, t.line, t.col) for t in toks]
        cls = _Classifier(inner, self.ctx.types)
        cls.classify(0, len(inner))
        cls.mark_type_argument_lists()
        try:
            result = self.lark.parse(_lark_tokens(inner), start="annotation_body")
        except LarkError:
            result = None
        if isinstance(result, list) and result and isinstance(result[0], tuple):
            ann.kv = {_str(k): v for k, v in result}
        elif isinstance(result, list):
            ann.body = result
        elif ann.name in _EXPRESSION_ANNOTATIONS:
            self.diags.error(ann.pos, f"@{ann.name}: syntax error in annotation body",
                             len(ann.name) + 1)

    def _p4runtime_translation(self, ann: A.Annotation, toks: list[_Tok]) -> None:
        """``@p4runtime_translation("uri", bit<W> | string | W)``: the uri and the
        controller type, which p4c encodes as the width W or "" for string."""
        kinds = [t.kind for t in toks]
        ok = len(toks) >= 3 and kinds[0] == "STRING_LITERAL" and kinds[1] == "COMMA"
        rest = toks[2:]
        second: A.Expr | None = None
        if ok and [t.kind for t in rest] == ["STRING"]:
            second = A.StringLit(A.Pos(rest[0].line, rest[0].col), "")
        elif ok and [t.kind for t in rest] == ["INTEGER"]:
            second = self.int_lit([_lark_tokens(rest)[0]])
        elif ok and [t.kind for t in rest][:3] == ["BIT", "LT", "INTEGER"] and len(rest) == 4 \
                and rest[3].kind in _CLOSERS:
            second = self.int_lit([_lark_tokens(rest[2:3])[0]])
        if second is None:
            self.diags.error(ann.pos, "@p4runtime_translation: expected a string literal and "
                             "a type (bit<W> or string)", len(ann.name) + 1)
            return
        first = toks[0]
        ann.body = [A.StringLit(A.Pos(first.line, first.col), _string_value(first.text)),
                    second]

    # ------------------------------------------------------------- types

    def type_name(self, c: list[Any]) -> A.NamedTypeRef:
        return A.NamedTypeRef(_pos(c[0]), _str(c[0]))

    def top_type_name(self, c: list[Any]) -> A.NamedTypeRef:
        return A.NamedTypeRef(_pos(c[0]), "." + _str(c[1]))

    def specialized_type(self, c: list[Any]) -> A.NamedTypeRef:
        ref: A.NamedTypeRef = c[0]
        ref.args = list(c[1] or [])
        return ref

    def stack_type(self, c: list[Any]) -> A.StackTypeRef:
        return A.StackTypeRef(_pos(c[0]), c[0], c[1])

    def tuple_type(self, c: list[Any]) -> A.TupleTypeRef:
        return A.TupleTypeRef(_pos(c[0]), list(c[1] or []))

    def bool_type(self, c: list[Any]) -> A.TypeRef:
        return A.BoolTypeRef(_pos(c[0]))

    def match_kind_type(self, c: list[Any]) -> A.TypeRef:
        self.diags.unsupported(_pos(c[0]), "the match_kind type", len("match_kind"))
        return A.NamedTypeRef(_pos(c[0]), "match_kind")

    def error_type(self, c: list[Any]) -> A.TypeRef:
        return A.ErrorTypeRef(_pos(c[0]))

    def string_type(self, c: list[Any]) -> A.TypeRef:
        return A.StringTypeRef(_pos(c[0]))

    def _width_value(self, w: Any) -> A.Expr:
        return self.int_lit([w]) if isinstance(w, Token) else w  # type: ignore[no-any-return]

    def bit_type(self, c: list[Any]) -> A.TypeRef:
        return A.BitTypeRef(_pos(c[0]), self._width_value(c[1]) if len(c) > 1 else None)

    def int_type(self, c: list[Any]) -> A.TypeRef:
        return A.IntTypeRef(_pos(c[0]))

    def signed_type(self, c: list[Any]) -> A.TypeRef:
        return A.BitTypeRef(_pos(c[0]), self._width_value(c[1]), signed=True)

    def varbit_type(self, c: list[Any]) -> A.TypeRef:
        return A.VarbitTypeRef(_pos(c[0]), self._width_value(c[1]))

    def type_args(self, c: list[Any]) -> list[A.TypeRef]:
        return list(c)

    def void_type(self, c: list[Any]) -> A.TypeRef:
        return A.VoidTypeRef(_pos(c[0]))

    def dontcare_type(self, c: list[Any]) -> A.TypeRef:
        return A.DontCareTypeRef(_pos(c[0]))

    def type_params(self, c: list[Any]) -> list[str]:
        return [_str(t) for t in c]

    # ------------------------------------------------- type declarations

    def _aggregate(self, cls: Any, c: list[Any]) -> Any:
        annotations, kw, name, tparams, *fields = c
        return cls(_pos(kw), _str(name), fields, list(tparams or []),
                   annotations=_annotations(annotations))

    def header_decl(self, c: list[Any]) -> A.HeaderDecl:
        return self._aggregate(A.HeaderDecl, c)  # type: ignore[no-any-return]

    def header_union_decl(self, c: list[Any]) -> A.HeaderUnionDecl:
        return self._aggregate(A.HeaderUnionDecl, c)  # type: ignore[no-any-return]

    def struct_decl(self, c: list[Any]) -> A.StructDecl:
        return self._aggregate(A.StructDecl, c)  # type: ignore[no-any-return]

    def struct_field(self, c: list[Any]) -> A.Field:
        annotations, type_ref, name = c
        return A.Field(_pos(type_ref), _str(name), type_ref, _annotations(annotations))

    def enum_decl(self, c: list[Any]) -> A.EnumDecl:
        annotations, kw, name, *members = c
        return A.EnumDecl(_pos(kw), _str(name), [(_str(m), None) for m in members],
                          annotations=_annotations(annotations))

    def ser_enum_decl(self, c: list[Any]) -> A.EnumDecl:
        annotations, kw, underlying, name, *members = c
        return A.EnumDecl(_pos(kw), _str(name), members, underlying,
                          annotations=_annotations(annotations))

    def enum_member(self, c: list[Any]) -> tuple[str, A.Expr]:
        return _str(c[0]), c[1]

    def error_decl(self, c: list[Any]) -> A.ErrorDecl:
        return A.ErrorDecl(_pos(c[0]), "error", [_str(m) for m in c[1:]])

    def match_kind_decl(self, c: list[Any]) -> A.MatchKindDecl:
        return A.MatchKindDecl(_pos(c[0]), "match_kind", [_str(m) for m in c[1:]])

    def _typedef(self, c: list[Any], new_type: bool) -> Any:
        annotations, kw, what, name = c
        out: list[A.Declaration] = []
        if isinstance(what, A.Declaration):  # typedef struct S {...} N;
            out.append(what)
            what = A.NamedTypeRef(what.pos, what.name)
        out.append(A.TypedefDecl(_pos(kw), _str(name), what, new_type,
                                 annotations=_annotations(annotations)))
        return out if len(out) > 1 else out[0]

    def typedef_decl(self, c: list[Any]) -> Any:
        return self._typedef(c, False)

    def newtype_decl(self, c: list[Any]) -> Any:
        return self._typedef(c, True)

    # ---------------------------------------------- parameters, arguments

    def params(self, c: list[Any]) -> list[A.Param]:
        return list(c)

    def param(self, c: list[Any]) -> A.Param:
        annotations, direction, type_ref, name, default = c
        anns = _annotations(annotations)
        pos = _pos(direction) if direction is not None else _pos(type_ref)
        return A.Param(pos, _str(name), _str(direction) if direction is not None else "",
                       type_ref, default, any(a.name == "optional" for a in anns),
                       annotations=anns)

    def ctor_params(self, c: list[Any]) -> list[A.Param]:
        return list(c[0] or [])

    def args(self, c: list[Any]) -> list[A.Argument]:
        return list(c)

    def arg_value(self, c: list[Any]) -> A.Argument:
        return A.Argument(_pos(c[0]), c[0])

    def arg_named(self, c: list[Any]) -> A.Argument:
        return A.Argument(_pos(c[0]), c[1], _str(c[0]))

    def arg_dontcare(self, c: list[Any]) -> A.Argument:
        return A.Argument(_pos(c[0]), None)

    def arg_named_dontcare(self, c: list[Any]) -> A.Argument:
        return A.Argument(_pos(c[0]), None, _str(c[0]))

    # ---------------------------------------------------------- externs

    def extern_object(self, c: list[Any]) -> A.ExternDecl:
        annotations, kw, name, tparams, *methods = c
        for m in methods:
            if m.return_type is None and m.name != _str(name):
                self.diags.error(m.pos, f"{m.name}: a constructor must have the name of its "
                                 f"extern {name}", len(m.name))
        return A.ExternDecl(_pos(kw), _str(name), list(tparams or []), methods,
                            annotations=_annotations(annotations))

    def extern_function(self, c: list[Any]) -> A.ExternFunctionDecl:
        annotations, kw, proto = c
        return A.ExternFunctionDecl(_pos(kw), proto.name, proto.return_type, proto.type_params,
                                    proto.params, annotations=_annotations(annotations))

    def extern_forward(self, c: list[Any]) -> None:
        return None  # declares nothing but the type name, which the lexer has seen

    def method(self, c: list[Any]) -> A.MethodDecl:
        annotations, proto = c
        return A.MethodDecl(proto.pos, proto.name, proto.return_type, proto.type_params,
                            proto.params, annotations=_annotations(annotations))

    def abstract_method(self, c: list[Any]) -> A.MethodDecl:
        annotations, kw, proto = c
        return A.MethodDecl(_pos(kw), proto.name, proto.return_type, proto.type_params,
                            proto.params, True, annotations=_annotations(annotations))

    def constructor(self, c: list[Any]) -> A.MethodDecl:
        annotations, name, params = c
        return A.MethodDecl(_pos(name), _str(name), None, [], list(params or []),
                            annotations=_annotations(annotations))

    def function_prototype(self, c: list[Any]) -> _Proto:
        return_type, name, tparams, params = c
        return _Proto(_pos(return_type), return_type, _str(name), list(tparams or []),
                      list(params or []))

    def function_decl(self, c: list[Any]) -> A.FunctionDecl:
        annotations, proto, body = c
        return A.FunctionDecl(proto.pos, proto.name, proto.return_type, proto.type_params,
                              proto.params, body, annotations=_annotations(annotations))

    def package_decl(self, c: list[Any]) -> A.PackageDecl:
        annotations, kw, name, tparams, params = c
        return A.PackageDecl(_pos(kw), _str(name), list(tparams or []), list(params or []),
                             annotations=_annotations(annotations))

    def action_decl(self, c: list[Any]) -> A.ActionDecl:
        annotations, kw, name, params, body = c
        return A.ActionDecl(_pos(kw), _str(name), list(params or []), body,
                            annotations=_annotations(annotations))

    def const_decl(self, c: list[Any]) -> A.ConstDecl:
        annotations, kw, type_ref, name, value = c
        return A.ConstDecl(_pos(kw), _str(name), type_ref, value,
                           annotations=_annotations(annotations))

    def var_decl(self, c: list[Any]) -> A.VarDecl:
        annotations, type_ref, name, init = c
        return A.VarDecl(_pos(type_ref), _str(name), type_ref, init,
                         annotations=_annotations(annotations))

    def instantiation(self, c: list[Any]) -> A.Instantiation:
        annotations, type_ref, args, name, init = c
        return A.Instantiation(_pos(type_ref), _str(name), type_ref, list(args or []), init,
                               annotations=_annotations(annotations))

    def obj_initializer(self, c: list[Any]) -> A.Block:
        return A.Block(_pos(c[0]), [A.DeclStmt(d.pos, d) for d in c[1:]])

    # ---------------------------------------------------------- parsers

    def _block_header(self, c: list[Any]) -> _BlockHeader:
        annotations, kw, name, tparams, params = c
        return _BlockHeader(_pos(kw), _annotations(annotations), _str(name),
                            list(tparams or []), list(params or []))

    def parser_type_decl(self, c: list[Any]) -> _BlockHeader:
        return self._block_header(c)

    def parser_type_only(self, c: list[Any]) -> A.ParserTypeDecl:
        h: _BlockHeader = c[0]
        return A.ParserTypeDecl(h.pos, h.name, h.type_params, h.params,
                                annotations=h.annotations)

    def parser_decl(self, c: list[Any]) -> A.ParserDecl:
        h: _BlockHeader = c[0]
        locals_ = [x for x in c[2:] if not isinstance(x, A.ParserState)]
        locals_ = locals_ + self._take_direct_instances()
        states = [x for x in c[2:] if isinstance(x, A.ParserState)]
        return A.ParserDecl(h.pos, h.name, h.type_params, h.params, list(c[1] or []),
                            locals_, states, annotations=h.annotations)

    def value_set_decl(self, c: list[Any]) -> A.ValueSetDecl:
        annotations, kw, element, size, name = c
        return A.ValueSetDecl(_pos(kw), _str(name), element, size,
                              annotations=_annotations(annotations))

    def parser_state(self, c: list[Any]) -> A.ParserState:
        annotations, kw, name, *body = c
        transition = body.pop() if body else None
        value = transition.value if isinstance(transition, _Transition) else None
        return A.ParserState(_pos(kw), _str(name), [_as_stmt(s) for s in body], value,
                             annotations=_annotations(annotations))

    def transition(self, c: list[Any]) -> _Transition:
        target = c[1]
        return _Transition(target if isinstance(target, A.Select) else _str(target))

    def select_expression(self, c: list[Any]) -> A.Select:
        return A.Select(_pos(c[0]), list(c[1] or []), list(c[2:]))

    def select_case(self, c: list[Any]) -> A.SelectCase:
        return A.SelectCase(_pos(c[0]), c[0], _str(c[1]))

    def tuple_keyset(self, c: list[Any]) -> A.ListExpr:
        return A.ListExpr(_pos(c[0]), list(c[1:]))

    def keyset_binary(self, c: list[Any]) -> A.Binary:
        return A.Binary(_pos(c[0]), _str(c[1]), c[0], c[2])

    def default_keyset(self, c: list[Any]) -> A.DefaultExpr:
        return A.DefaultExpr(_pos(c[0]))

    # --------------------------------------------------------- controls

    def control_type_decl(self, c: list[Any]) -> _BlockHeader:
        return self._block_header(c)

    def control_type_only(self, c: list[Any]) -> A.ControlTypeDecl:
        h: _BlockHeader = c[0]
        return A.ControlTypeDecl(h.pos, h.name, h.type_params, h.params,
                                 annotations=h.annotations)

    def control_decl(self, c: list[Any]) -> A.ControlDecl:
        h: _BlockHeader = c[0]
        locals_ = [x for x in c[2:-2]] + self._take_direct_instances()
        return A.ControlDecl(h.pos, h.name, h.type_params, h.params, list(c[1] or []),
                             locals_, c[-1], annotations=h.annotations)

    def table_decl(self, c: list[Any]) -> A.TableDecl:
        annotations, kw, name, *props = c
        t = A.TableDecl(_pos(kw), _str(name), [], [], None, False, [], False, None, [],
                        annotations=_annotations(annotations))
        seen: set[str] = set()
        for p in props:
            if p.name in _TABLE_FIELDS:
                if p.name in seen:
                    self.diags.error(p.pos, f"{p.name}: duplicate table property", len(p.name))
                    continue
                seen.add(p.name)
            self._table_property(t, p)
        return t

    def _table_property(self, t: A.TableDecl, p: _Property) -> None:
        name = p.name
        if name == "key":
            t.keys = p.value
        elif name == "actions":
            t.actions = p.value
        elif name == "entries":
            t.entries = p.value
            t.entries_const = p.is_const
            for e in t.entries:
                e.is_const = e.is_const or p.is_const
            self._ignored_annotations(p)
        elif name == "default_action":
            t.default_action = self._action_ref(p.value)
            t.default_is_const = p.is_const
            if t.default_action is not None:
                t.default_action.annotations = p.annotations
        elif name in ("size", "largest_priority_wins", "priority_delta"):
            setattr(t, name, p.value)
            self._ignored_annotations(p)
        else:
            t.properties.append(A.TableProperty(p.pos, name, p.value, p.is_const,
                                                p.annotations))

    def _ignored_annotations(self, p: _Property) -> None:
        for a in p.annotations:
            self.diags.warning(a.pos, f"@{a.name}: annotation on table property {p.name} "
                               "ignored", len(a.name) + 1)

    def _action_ref(self, value: A.Expr) -> A.ActionRef | None:
        """``default_action = a(1, 2);`` (or ``= a;``)."""
        if isinstance(value, A.Call) and isinstance(value.callee, A.Name) \
                and not value.type_args:
            return A.ActionRef(value.callee.pos, value.callee, value.args)
        if isinstance(value, A.Name):
            return A.ActionRef(value.pos, value, [])
        self.diags.error(value.pos, "default_action must be an action call")
        return None

    def key_property(self, c: list[Any]) -> _Property:
        return _Property(_pos(c[0]), "key", list(c[1:]))

    def actions_property(self, c: list[Any]) -> _Property:
        return _Property(_pos(c[0]), "actions", list(c[1:]))

    def entries_property(self, c: list[Any]) -> _Property:
        annotations, const, kw, *entries = c
        return _Property(_pos(kw), "entries", entries, const is not None,
                         _annotations(annotations))

    def other_property(self, c: list[Any]) -> _Property:
        annotations, const, name, value = c
        return _Property(_pos(name), _str(name), value, const is not None,
                         _annotations(annotations))

    def key_element(self, c: list[Any]) -> A.KeyElement:
        expr, kind, annotations = c
        return A.KeyElement(_pos(expr), expr, _str(kind), _annotations(annotations))

    def action_item(self, c: list[Any]) -> A.ActionRef:
        annotations, ref = c
        ref.annotations = _annotations(annotations)
        return ref  # type: ignore[no-any-return]

    def action_ref(self, c: list[Any]) -> A.ActionRef:
        return A.ActionRef(c[0].pos, c[0], [])

    def action_ref_call(self, c: list[Any]) -> A.ActionRef:
        return A.ActionRef(c[0].pos, c[0], list(c[1] or []))

    def entry(self, c: list[Any]) -> A.TableEntry:
        const, priority, keyset, action, annotations = c
        anns = _annotations(annotations)
        pos = _pos(const) if const is not None else (
            priority[0] if priority is not None else _pos(keyset))
        # like p4c, a tuple keyset gives one key per element
        keys = list(keyset.elements) if isinstance(keyset, A.ListExpr) else [keyset]
        value = priority[1] if priority is not None else None
        if value is None:
            for a in anns:
                if a.name == "priority" and len(a.body) == 1:
                    value = a.body[0]
        return A.TableEntry(pos, keys, action, value, const is not None, anns)

    def entry_priority(self, c: list[Any]) -> tuple[A.Pos, A.Expr]:
        value = c[1]
        return _pos(c[0]), self.int_lit([value]) if isinstance(value, Token) else value

    # ------------------------------------------------------- statements

    def block(self, c: list[Any]) -> A.Block:
        annotations, lbrace, *stmts = c
        return A.Block(_pos(lbrace), [_as_stmt(s) for s in stmts], _annotations(annotations))

    def if_else(self, c: list[Any]) -> A.If:
        return A.If(_pos(c[0]), c[1], _as_stmt(c[2]), _as_stmt(c[3]))

    def if_then(self, c: list[Any]) -> A.If:
        return A.If(_pos(c[0]), c[1], _as_stmt(c[2]), None)

    def assignment(self, c: list[Any]) -> A.Assign:
        return A.Assign(_pos(c[0]), c[0], c[1])

    def compound_assignment(self, c: list[Any]) -> A.Assign:
        """``a op= b`` as ``a = a op b`` (with a copy of the l-value as the left operand)."""
        target, op, value = c
        pos = _pos(target)
        return A.Assign(pos, target, A.Binary(pos, op, copy.deepcopy(target), value), op)

    def compound_op(self, c: list[Any]) -> str:
        tok = c[0]
        return ">>" if tok.type == "GE" else str(tok)[:-1]  # `>>=` arrives as `>` `>=`

    def call_statement(self, c: list[Any]) -> A.CallStmt:
        call = A.Call(_pos(c[0]), c[0], [], list(c[1] or []))
        return A.CallStmt(call.pos, call)

    def call_statement_targs(self, c: list[Any]) -> A.CallStmt:
        call = A.Call(_pos(c[0]), c[0], list(c[1] or []), list(c[2] or []))
        return A.CallStmt(call.pos, call)

    def direct_application(self, c: list[Any]) -> A.CallStmt:
        """``T.apply(args);`` is, as the spec says, the application of a fresh instance
        ``T() t;`` declared in the enclosing parser or control (one per statement)."""
        ref: A.NamedTypeRef = c[0]
        pos = _pos(ref)
        assert self.ctx is not None
        pending = self.ctx.direct_instances
        type_name = ref.name.lstrip(".")
        same = sum(1 for d in pending if d.name.startswith(f"{type_name}_inst"))
        name = f"{type_name}_inst" + (f"_{same}" if same else "")
        # p4c's naming, ``@name("T") T() T_inst;``, for every one: two applications of a
        # type with control-plane objects give them one name, which P4Info rejects
        annotations = [A.Annotation(pos, "name", body=[A.StringLit(pos, type_name)])]
        pending.append(A.Instantiation(pos, name, ref, [], annotations=annotations))
        callee = A.Member(pos, A.Name(pos, name), "apply")
        call = A.Call(pos, callee, [], list(c[2] or []))
        return A.CallStmt(pos, call)

    def _take_direct_instances(self) -> list[A.Instantiation]:
        """The instances of the block's direct applications, which go after its own
        local declarations, as p4c puts them (its P4Info lists their tables and
        externs after the block's own)."""
        assert self.ctx is not None
        taken = list(self.ctx.direct_instances)
        self.ctx.direct_instances.clear()
        return taken

    def return_statement(self, c: list[Any]) -> A.Return:
        return A.Return(_pos(c[0]), c[1])

    def exit_statement(self, c: list[Any]) -> A.Exit:
        return A.Exit(_pos(c[0]))

    def empty_statement(self, c: list[Any]) -> A.Empty:
        return A.Empty(_pos(c[0]))

    def switch_statement(self, c: list[Any]) -> A.Switch:
        return A.Switch(_pos(c[0]), c[1], list(c[2:]))

    def switch_case(self, c: list[Any]) -> A.SwitchCase:
        return A.SwitchCase(_pos(c[0]), c[0], c[1])

    def break_statement(self, c: list[Any]) -> A.Break:
        return A.Break(_pos(c[0]))

    def continue_statement(self, c: list[Any]) -> A.Continue:
        return A.Continue(_pos(c[0]))

    # `for`: the head is built first, the statement once the body is parsed

    def for_head(self, c: list[Any]) -> _ForHead:
        annotations, kw, inits, cond, updates = c
        return _ForHead(_pos(kw), _annotations(annotations), list(inits or []), cond,
                        list(updates or []))

    def for_in_head(self, c: list[Any]) -> _ForHead:
        annotations, kw, var_annotations, type_ref, name, _in, collection = c
        var = A.VarDecl(_pos(type_ref), _str(name), type_ref, None,
                        annotations=_annotations(var_annotations))
        return _ForHead(_pos(kw), _annotations(annotations), var=var, collection=collection)

    def for_statement(self, c: list[Any]) -> A.For | A.ForIn:
        head: _ForHead = c[0]
        body = _as_stmt(c[1])
        if head.var is not None:
            assert head.collection is not None
            return A.ForIn(head.pos, head.var, head.collection, body, head.annotations)
        assert head.cond is not None
        return A.For(head.pos, head.init, head.cond, head.updates, body, head.annotations)

    def for_inits(self, c: list[Any]) -> list[A.Stmt]:
        return [_as_stmt(x) for x in c]

    def for_updates(self, c: list[Any]) -> list[A.Stmt]:
        return list(c)

    def for_var_decl(self, c: list[Any]) -> A.VarDecl:
        return self.var_decl(c)

    def for_assign(self, c: list[Any]) -> A.Assign:
        return self.assignment(c)

    def for_compound_assign(self, c: list[Any]) -> A.Assign:
        return self.compound_assignment(c)

    def for_call(self, c: list[Any]) -> A.CallStmt:
        return self.call_statement(c)

    def for_call_targs(self, c: list[Any]) -> A.CallStmt:
        return self.call_statement_targs(c)

    def for_range(self, c: list[Any]) -> A.Binary:
        return A.Binary(_pos(c[0]), "..", c[0], c[2])

    # ------------------------------------------------------ expressions

    def this_expr(self, c: list[Any]) -> A.Unsupported:
        return A.Unsupported(_pos(c[0]), "'this'")

    def member(self, c: list[Any]) -> A.Member:
        return A.Member(_pos(c[0]), c[0], _str(c[1]))

    def index(self, c: list[Any]) -> A.Index:
        return A.Index(_pos(c[0]), c[0], c[1])

    def slice(self, c: list[Any]) -> A.Slice:
        return A.Slice(_pos(c[0]), c[0], c[1], c[2])

    def expr_list(self, c: list[Any]) -> list[A.Expr]:
        return list(c)

    def kv_list(self, c: list[Any]) -> list[Any]:
        # a trailing ``...`` arrives as a DOTS token (None when absent)
        return [x for x in c if x is not None]

    def kv_pair(self, c: list[Any]) -> tuple[Token, A.Expr]:
        return c[0], c[1]

    def conditional(self, c: list[Any]) -> A.Mux:
        return A.Mux(_pos(c[0]), c[0], c[1], c[2])

    def binary(self, c: list[Any]) -> A.Binary:
        return A.Binary(_pos(c[0]), _str(c[1]), c[0], c[2])

    def shift_right(self, c: list[Any]) -> A.Binary:
        return A.Binary(_pos(c[0]), ">>", c[0], c[1])

    def unary_op(self, c: list[Any]) -> A.Unary:
        return A.Unary(_pos(c[0]), _str(c[0]), c[1])

    def cast(self, c: list[Any]) -> A.Cast:
        return A.Cast(_pos(c[0]), c[1], c[2])

    def call(self, c: list[Any]) -> A.Call:
        return A.Call(_pos(c[0]), c[0], [], list(c[1] or []))

    def call_targs(self, c: list[Any]) -> A.Call:
        return A.Call(_pos(c[0]), c[0], list(c[1] or []), list(c[2] or []))

    def list_expr(self, c: list[Any]) -> A.ListExpr:
        return A.ListExpr(_pos(c[0]), list(c[1] or []))

    def struct_expr(self, c: list[Any]) -> A.StructExpr:
        pairs = [x for x in c[1] if isinstance(x, tuple)]
        fields = [(_str(k), v) for k, v in pairs]
        seen: set[str] = set()
        for (k, _), (name, _v) in zip(pairs, fields, strict=True):
            if name in seen:
                self.diags.error(_pos(k), f"{name}: duplicate field in initializer", len(name))
            seen.add(name)
        rest = any(isinstance(x, Token) and x.type == "DOTS" for x in c[1])
        return A.StructExpr(_pos(c[0]), fields, rest=rest)

    def dots(self, c: list[Any]) -> A.Dots:
        return A.Dots(_pos(c[0]))

    def invalid_header(self, c: list[Any]) -> A.InvalidHeader:
        return A.InvalidHeader(_pos(c[0]))

    def int_lit(self, c: list[Any]) -> A.IntLit:
        try:
            return _int_literal(c[0])
        except ValueError:  # only `_` after the base prefix, as in 0x_
            self.diags.error(_pos(c[0]), f"{c[0]}: invalid integer literal", len(c[0]))
            return A.IntLit(_pos(c[0]), 0, text=_str(c[0]))

    def string_lit(self, c: list[Any]) -> A.StringLit:
        return A.StringLit(_pos(c[0]), _string_value(_str(c[0])))

    def bool_lit(self, c: list[Any]) -> A.BoolLit:
        return A.BoolLit(_pos(c[0]), c[0].type == "TRUE")

    def type_member(self, c: list[Any]) -> A.Member:
        return A.Member(_pos(c[0]), _name_expr(c[0]), _str(c[1]))

    def error_member(self, c: list[Any]) -> A.Member:
        return A.Member(_pos(c[0]), A.Name(_pos(c[0]), "error"), _str(c[1]))

    def constructor_call(self, c: list[Any]) -> A.Call:
        ref: A.NamedTypeRef = c[0]
        return A.Call(ref.pos, _name_expr(ref), list(ref.args), list(c[1] or []))


class _TokenFeed(Lexer):
    """lark's lexer slot: the tokens are made beforehand, by ``_tokenize``."""

    def __init__(self, conf: Any) -> None:
        pass

    def lex(self, data: Any) -> Any:  # type: ignore[override]
        return iter(data)


_LOCK = threading.RLock()
_STATE: dict[str, Any] = {}


def _parser() -> tuple[Lark, _Builder]:
    if "lark" not in _STATE:
        builder = _Builder()
        lark = Lark(
            GRAMMAR_PATH.read_text(),
            parser="lalr",
            lexer=_TokenFeed,
            transformer=builder,  # type: ignore[arg-type]
            start=["start", "annotation_body"],
            maybe_placeholders=True,
        )
        builder.lark = lark
        _STATE["lark"] = lark
        _STATE["builder"] = builder
    return _STATE["lark"], _STATE["builder"]


def parse(text: str, diags: Diagnostics) -> A.SourceFile:
    """Parse preprocessed P4_16 source. Syntax errors are reported to ``diags`` and
    raise ``CompileError`` (through ``diags.check()``)."""
    errors_before = len(diags.errors)
    toks = _tokenize(text)
    toks, bodies = _collapse_annotation_bodies(toks, text)
    classifier = _Classifier(toks)
    classifier.run()
    with _LOCK:
        lark, builder = _parser()
        builder.ctx = _Context(diags, bodies, classifier.types)
        tree: Any = None
        try:
            tree = lark.parse(_lark_tokens(toks), start="start")
        except UnexpectedToken as e:
            tok = e.token
            if tok.type == "$END":
                pos = _end_pos(toks)
                diags.error(pos, "syntax error, unexpected end of file")
            else:
                diags.error(_pos(tok), _syntax_error_message(tok, e.expected),
                            max(1, len(str(tok))))
        except UnexpectedInput as e:
            diags.error(A.Pos(getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0),
                        "syntax error")
        except LarkError as e:
            diags.error(None, f"syntax error: {e}")
        finally:
            builder.ctx = None
    if len(diags.errors) > errors_before or tree is None:
        diags.check()
    assert isinstance(tree, A.SourceFile)
    return tree


def _end_pos(toks: list[_Tok]) -> A.Pos:
    if not toks:
        return A.Pos(1, 1)
    last = toks[-1]
    if "\n" in last.text:
        return A.Pos(last.line + last.text.count("\n"), 1)
    return A.Pos(last.line, last.col + len(last.text))
