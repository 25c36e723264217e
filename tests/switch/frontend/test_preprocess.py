"""Tests for the P4 C-style preprocessor and the bundled include files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from work_count import work_done, work_steps

from switch.frontend.preprocess import (
    SYSTEM_INCLUDE_DIR,
    Preprocessed,
    PreprocessError,
    SourceLine,
    preprocess,
    preprocess_text,
)


def pp(text: str, **kw) -> Preprocessed:
    return preprocess_text(text, "prog.p4", **kw)


def words(text: str) -> list[str]:
    """Non-blank output lines with whitespace runs collapsed."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def assert_consistent(r: Preprocessed) -> None:
    assert len(r.text.splitlines()) == len(r.origins)


# --------------------------------------------------------------------------
# includes
# --------------------------------------------------------------------------


def test_quote_include_is_relative_to_the_including_file(tmp_path: Path) -> None:
    main = write(tmp_path / "main.p4", '#include "sub/a.p4"\nmain_line\n')
    write(tmp_path / "sub" / "a.p4", '#include "b.p4"\na_line\n')
    write(tmp_path / "sub" / "b.p4", "b_line\n")
    write(tmp_path / "b.p4", "wrong_b\n")  # must not be picked for sub/a.p4
    r = preprocess(main)
    assert words(r.text) == ["b_line", "a_line", "main_line"]
    assert_consistent(r)


def test_quote_include_falls_back_to_include_dirs_and_system_dir(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    write(inc / "lib.p4", "from_inc_dir\n")
    main = write(tmp_path / "main.p4", '#include "lib.p4"\n#include "core.p4"\n')
    r = preprocess(main, include_dirs=[inc])
    assert "from_inc_dir" in r.text
    assert "extern packet_in" in r.text


def test_angle_include_searches_include_dirs_then_system_dir(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    write(inc / "core.p4", "my_core\n")
    main = write(tmp_path / "main.p4", "#include <core.p4>\n#include <v1model.p4>\n")
    r = preprocess(main, include_dirs=[inc])
    # -I wins over the system directory, also for v1model's own #include <core.p4>
    assert words(r.text)[0] == "my_core"
    assert r.text.count("my_core") == 2
    assert "extern packet_in" not in r.text
    assert "package V1Switch" in r.text


def test_angle_include_does_not_search_the_current_directory(tmp_path: Path) -> None:
    write(tmp_path / "local.p4", "x\n")
    main = write(tmp_path / "main.p4", "\n#include <local.p4>\n")
    with pytest.raises(PreprocessError) as ei:
        preprocess(main)
    assert ei.value.line == 2


def test_missing_include_error_has_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / "a.p4", 'ok\n\n#include "foo.p4"\n')
    main = write(tmp_path / "prog.p4", '#include "a.p4"\n')
    with pytest.raises(PreprocessError) as ei:
        preprocess(main)
    err = ei.value
    assert err.file == str(tmp_path / "a.p4")
    assert err.line == 3
    assert err.col == 1
    assert err.message == "#include: file not found: foo.p4"
    assert str(err) == f"{tmp_path / 'a.p4'}(3): error: #include: file not found: foo.p4"


def test_missing_include_error_text_in_main_file() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("\n\n#include <foo.p4>\n")
    assert str(ei.value) == "prog.p4(3): error: #include: file not found: foo.p4"


def test_include_with_macro_name(tmp_path: Path) -> None:
    write(tmp_path / "x.p4", "included\n")
    main = write(tmp_path / "m.p4", '#define HDR "x.p4"\n#include HDR\n')
    assert "included" in preprocess(main).text


def test_bad_include_syntax() -> None:
    with pytest.raises(PreprocessError, match='#include expects "FILENAME" or <FILENAME>'):
        pp("#include foo\n")


def test_include_guard_includes_once(tmp_path: Path) -> None:
    write(tmp_path / "g.p4", "#ifndef G_P4\n#define G_P4\nguarded\n#endif\n")
    main = write(tmp_path / "m.p4", '#include "g.p4"\n#include "g.p4"\n#include "g.p4"\n')
    r = preprocess(main)
    assert words(r.text) == ["guarded"]
    # the 2nd and 3rd includes contribute nothing but their own blank line
    assert len(r.origins) == 3 + 4
    assert_consistent(r)


def test_if_not_defined_guard(tmp_path: Path) -> None:
    write(tmp_path / "g.p4", "// header\n#if !defined(G)\n#define G\nbody\n#endif // G\n")
    main = write(tmp_path / "m.p4", '#include "g.p4"\n#include "g.p4"\n')
    assert words(preprocess(main).text) == ["body"]


def test_file_with_text_after_guard_is_reincluded(tmp_path: Path) -> None:
    write(tmp_path / "g.p4", "#ifndef G\n#define G\nin\n#endif\nafter\n")
    main = write(tmp_path / "m.p4", '#include "g.p4"\n#include "g.p4"\n')
    assert words(preprocess(main).text) == ["in", "after", "after"]


def test_pragma_once(tmp_path: Path) -> None:
    write(tmp_path / "o.p4", "#pragma once\nonce_only\n")
    write(tmp_path / "sub" / "p.p4", '#include "../o.p4"\n')
    main = write(tmp_path / "m.p4", '#include "o.p4"\n#include "sub/p.p4"\n#include "o.p4"\n')
    r = preprocess(main)
    assert words(r.text) == ["once_only"]
    assert "#pragma" not in r.text


def test_other_pragmas_are_dropped() -> None:
    r = pp("#pragma foo bar\nx\n")
    assert r.text == "\nx\n"


def test_include_recursion_is_bounded(tmp_path: Path) -> None:
    main = write(tmp_path / "self.p4", '#include "self.p4"\n')
    with pytest.raises(PreprocessError, match="nested too deeply") as ei:
        preprocess(main)
    assert ei.value.line == 1


def test_deep_but_legal_nesting(tmp_path: Path) -> None:
    for i in range(64):
        write(tmp_path / f"f{i}.p4", f'#include "f{i + 1}.p4"\n' if i < 63 else "leaf\n")
    main = write(tmp_path / "main.p4", '#include "f0.p4"\n')
    assert "leaf" in preprocess(main).text


def test_missing_main_file(tmp_path: Path) -> None:
    with pytest.raises(PreprocessError, match="cannot open file"):
        preprocess(tmp_path / "nope.p4")


# --------------------------------------------------------------------------
# macros
# --------------------------------------------------------------------------


def test_object_like_macro() -> None:
    r = pp("#define WIDTH 32\nbit<WIDTH> x;\n")
    assert words(r.text) == ["bit<32> x;"]


def test_function_like_macro_and_nesting() -> None:
    src = (
        "#define N 1024\n"
        "#define REG(name, w) register<bit<w>>(N) name\n"
        "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
        "REG(r1, 32);\n"
        "x = MAX(MAX(1, 2), N);\n"
    )
    assert words(pp(src).text) == [
        "register<bit<32>>(1024) r1;",
        "x = ((((1) > (2) ? (1) : (2))) > (1024) ? (((1) > (2) ? (1) : (2))) : (1024));",
    ]


def test_stringize_and_paste() -> None:
    src = (
        "#define STR(x) #x\n"
        "#define XSTR(x) STR(x)\n"
        "#define CAT(a, b) a ## b\n"
        "#define V 7\n"
        'STR(a  +  "q") XSTR(V) STR(V)\n'
        "CAT(reg_, V) CAT(x, ) CAT(, y) CAT(8w, 255)\n"
    )
    assert words(pp(src).text) == ['"a + \\"q\\"" "7" "V"', "reg_V x y 8w255"]


def test_paste_with_empty_operands() -> None:
    src = "#define T(x, y, z) a x ## y ## z b\nT(,,) T(,,1) T(1,,) T(,1,) T(1,2,3)\n"
    assert words(pp(src).text) == ["a b a 1 b a 1 b a 1 b a 123 b"]


def test_object_like_paste() -> None:
    assert words(pp("#define AB ab ## cd\nAB\n").text) == ["abcd"]


def test_no_recursive_self_expansion() -> None:
    src = "#define foo foo + 1\n#define a b\n#define b a\nfoo a b\n"
    assert words(pp(src).text) == ["foo + 1 a b"]


def test_arguments_are_expanded_before_substitution() -> None:
    src = "#define ONE 1\n#define ID(x) x\n#define TWICE(x) x x\nID(ONE) TWICE(ID(ONE))\n"
    assert words(pp(src).text) == ["1 1 1"]


def test_function_like_name_without_parens_is_untouched() -> None:
    src = "#define f(x) [x]\nf; f (1); f\n"
    assert words(pp(src).text) == ["f; [1]; f"]


def test_rescan_picks_up_following_parens() -> None:
    src = "#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)\n"
    assert words(pp(src).text) == ["2*9*g"]


def test_variadic_macros() -> None:
    src = (
        "#define LOG(fmt, ...) log_msg(fmt, {__VA_ARGS__})\n"
        "#define CALL(f, ...) f(0, ## __VA_ARGS__)\n"
        'LOG("a={} b={}", x, y);\n'
        "CALL(g) CALL(g, 1, 2)\n"
    )
    assert words(pp(src).text) == ['log_msg("a={} b={}", {x, y});', "g(0) g(0,1, 2)"]


def test_macro_argument_count_errors() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("#define F(a, b) a\n\nF(1)\n")
    assert str(ei.value) == 'prog.p4(3): error: macro "F" requires 2 arguments, but only 1 given'
    with pytest.raises(PreprocessError, match="passed 3 arguments, but takes just 2"):
        pp("#define F(a, b) a\nF(1, 2, 3)\n")
    with pytest.raises(PreprocessError, match='unterminated argument list invoking macro "F"'):
        pp("#define F(a) a\nF(1,\n")


def test_no_expansion_in_strings_or_comments() -> None:
    src = '#define X 1\n@name("X") x = X; // X\n/* X */ "a X b"\n'
    r = pp(src)
    assert r.text.splitlines() == ["", '@name("X") x = 1;', '        "a X b"']


def test_annotations_are_plain_text() -> None:
    r = pp('@name("ingress.t") @pragma stage 1\ntable t {}\n')
    assert r.text == '@name("ingress.t") @pragma stage 1\ntable t {}\n'


def test_expansion_does_not_glue_tokens() -> None:
    src = "#define NEG -1\n#define GT >\nx = -NEG; bit<8 GT y;\n"
    assert words(pp(src).text) == ["x = - -1; bit<8 > y;"]


def test_undef() -> None:
    src = "#define X 1\nX\n#undef X\nX\n#ifdef X\nbad\n#endif\n"
    assert words(pp(src).text) == ["1", "X"]


def test_redefinition_warns() -> None:
    r = pp("#define X 1\n#define X 1\n#define X 2\nX\n")
    assert words(r.text) == ["2"]
    assert r.warnings == ['prog.p4(3): warning: "X" redefined']


def test_line_and_file_builtins() -> None:
    r = pp("a\nb __LINE__ __FILE__\n")
    assert words(r.text) == ["a", 'b 2 "prog.p4"']


def test_multiline_macro_call_keeps_line_origins() -> None:
    src = "#define ADD(a, b) a + b\nx = ADD(1,\n        2);\ny;\n"
    r = pp(src)
    assert r.text.splitlines() == ["", "x = 1 + 2;", "", "y;"]
    assert [o.line for o in r.origins] == [1, 2, 3, 4]


def test_bad_define() -> None:
    with pytest.raises(PreprocessError, match="macro names must be identifiers"):
        pp("#define 3 x\n")
    with pytest.raises(PreprocessError, match='duplicate macro parameter "a"'):
        pp("#define F(a, a) a\n")
    with pytest.raises(PreprocessError, match="'##' cannot appear at either end"):
        pp("#define F(a) ## a\n")
    with pytest.raises(PreprocessError, match='"defined" cannot be used as a macro name'):
        pp("#define defined 1\n")


# --------------------------------------------------------------------------
# conditionals
# --------------------------------------------------------------------------


def test_ifdef_ifndef_else() -> None:
    src = "#define A\n#ifdef A\na\n#else\nnot_a\n#endif\n#ifndef B\nnot_b\n#endif\n"
    assert words(pp(src).text) == ["a", "not_b"]


def test_elif_chain() -> None:
    src = "#if MODE == 1\none\n#elif MODE == 2\ntwo\n#elif MODE == 3\nthree\n#else\nother\n#endif\n"
    assert words(pp(src, defines={"MODE": "2"}).text) == ["two"]
    assert words(pp(src, defines={"MODE": "3"}).text) == ["three"]
    assert words(pp(src).text) == ["other"]


def test_only_first_true_branch_is_taken() -> None:
    src = "#if 1\na\n#elif 1\nb\n#else\nc\n#endif\n"
    assert words(pp(src).text) == ["a"]


def test_nested_conditionals_in_skipped_group() -> None:
    src = "#if 0\n#if 1\nx\n#else\ny\n#endif\n#bogus directive\n#error not here\n#else\nz\n#endif\n"
    assert words(pp(src).text) == ["z"]


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("defined(A) && defined A", True),
        ("defined(NOPE) || defined NOPE", False),
        ("!defined(NOPE)", True),
        ("UNKNOWN", False),
        ("UNKNOWN == 0", True),
        ("1 + 2 * 3 == 7", True),
        ("(1 + 2) * 3 == 9", True),
        ("10 / 3 == 3 && 10 % 3 == 1", True),
        ("-7 / 2 == -3 && -7 % 2 == -1", True),
        ("1 << 4 == 16 && 256 >> 4 == 16", True),
        ("(5 & 3) == 1 && (5 | 3) == 7 && (5 ^ 3) == 6 && ~0 == -1", True),
        ("3 > 2 && 2 >= 2 && 1 < 2 && 2 <= 2 && 1 != 2", True),
        ("1 ? 0 : 1", False),
        ("0 ? 1 : 2 == 2", True),
        ("0x10 == 16 && 010 == 8 && 0b101 == 5", True),
        ("10u == 10 && 10UL == 10 && 10ll == 10 && 10ULL == 10", True),
        ("-1 < 0u", False),  # usual arithmetic conversions: -1 becomes huge
        ("(0u - 1) == 18446744073709551615u", True),
        ("0 && (1 / 0)", False),  # short-circuit: no division-by-zero error
        ("1 || (1 / 0)", True),
        ("1 ? 1 : 1 / 0", True),
        ("K >= 64 && K < 128", True),
        ("ADD(2, 3) == 5", True),
        ("(1, 0)", False),
    ],
)
def test_if_expressions(expr: str, value: bool) -> None:
    prelude = "#define A\n#define K 64\n#define ADD(a, b) ((a) + (b))\n"
    src = f"{prelude}#if {expr}\nyes\n#else\nno\n#endif\n"
    assert words(pp(src).text) == ["yes" if value else "no"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("#if\n", "#if with no expression"),
        ("#if 1 / 0\n", "division by zero in #if"),
        ("#if (1\n", "missing ')' in expression"),
        ("#if 1 2\n", 'missing binary operator before token "2"'),
        ("#if 1 +\n", "operator '+' has no right operand"),
        ('#if "s"\n', 'token ""s"" is not valid in preprocessor expressions'),
        ("#if 1.5\n", "floating constant in preprocessor expression"),
        ("#if 8w5\n", 'invalid suffix "w5" on integer constant'),
        ("#if defined\n", 'operator "defined" requires an identifier'),
        ("#ifdef\n", "no macro name given in #ifdef directive"),
    ],
)
def test_if_expression_errors(line: str, message: str) -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("\n" + line + "#endif\n")
    assert ei.value.message == message
    assert ei.value.line == 2


def test_has_include() -> None:
    src = '#if __has_include(<v1model.p4>) && !__has_include("nope.p4")\nyes\n#endif\n'
    assert words(pp(src).text) == ["yes"]


# --------------------------------------------------------------------------
# command-line defines
# --------------------------------------------------------------------------


def test_command_line_defines() -> None:
    src = "#ifdef DEBUG\ndebug DEBUG\n#endif\nsize = K;\nSQ(3)\nE|\n"
    r = pp(src, defines={"K": "64", "DEBUG": None, "SQ(x)": "((x) * (x))", "E": ""})
    assert words(r.text) == ["debug 1", "size = 64;", "((3) * (3))", "|"]


def test_source_defines_override_command_line() -> None:
    r = pp("#undef K\n#define K 2\nK\n", defines={"K": "1"})
    assert words(r.text) == ["2"]


def test_bad_command_line_define() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("x\n", defines={"3X": "1"})
    assert ei.value.file == "<command-line>"


# --------------------------------------------------------------------------
# line origins
# --------------------------------------------------------------------------


def test_origins_after_include(tmp_path: Path) -> None:
    write(tmp_path / "inc.p4", "i1\n\ni3\n")
    main = write(tmp_path / "m.p4", 'm1\n#include "inc.p4"\nm3\n')
    r = preprocess(main)
    inc = str(tmp_path / "inc.p4")
    m = str(main)
    assert r.text.splitlines() == ["m1", "", "i1", "", "i3", "m3"]
    assert r.origins == [
        SourceLine(m, 1),
        SourceLine(m, 2),
        SourceLine(inc, 1),
        SourceLine(inc, 2),
        SourceLine(inc, 3),
        SourceLine(m, 3),
    ]
    assert r.origin(6) == SourceLine(m, 3)
    assert r.source_line(6) == "m3"
    assert r.source_line(3) == "i1"


def test_multiline_block_comment_becomes_blank_lines() -> None:
    src = "a /* one\ntwo\nthree */ b\nc\n"
    r = pp(src)
    assert r.text.splitlines() == ["a", "", "         b", "c"]
    assert [o.line for o in r.origins] == [1, 2, 3, 4]
    # columns of text after a comment are kept
    assert r.text.splitlines()[2].index("b") == src.splitlines()[2].index("b")


def test_single_line_comments_keep_columns() -> None:
    r = pp("/* c */ x = 1; // done\n")
    assert r.text == "        x = 1;\n"


def test_continuations_keep_line_count() -> None:
    src = "#define LONG(a) \\\n    a + \\\n    a\nx = LONG(1);\ny = 1 + \\\n    2;\nz\n"
    r = pp(src)
    assert r.text.splitlines() == ["", "", "", "x = 1 + 1;", "y = 1 +     2;", "", "z"]
    assert [o.line for o in r.origins] == [1, 2, 3, 4, 5, 6, 7]


def test_directive_with_multiline_comment() -> None:
    src = "#define X 1 /* a\n b */ + 2\nX\n"
    r = pp(src)
    assert r.text.splitlines() == ["", "", "1 + 2"]
    assert [o.line for o in r.origins] == [1, 2, 3]


def test_hash_after_comment_continuation_is_not_a_directive() -> None:
    r = pp("a /* x\n*/ #define X 1\nX\n")
    assert words(r.text) == ["a", "#define X 1", "X"]


def test_skipped_groups_become_blank_lines() -> None:
    r = pp("#if 0\na\nb\n#endif\nc\n")
    assert r.text.splitlines() == ["", "", "", "", "c"]
    assert [o.line for o in r.origins] == [1, 2, 3, 4, 5]


def test_origin_past_end_maps_to_last_line() -> None:
    r = pp("a\nb\n")
    assert r.origin(3) == SourceLine("prog.p4", 2)
    with pytest.raises(IndexError):
        r.origin(0)


def test_crlf_and_no_trailing_newline() -> None:
    r = pp("a\r\n#define X 2\r\nX")
    assert r.text == "a\n\n2\n"
    assert [o.line for o in r.origins] == [1, 2, 3]


def test_strings_with_comment_markers_are_kept() -> None:
    r = pp('@name("a//b /* c */") x;\n')
    assert r.text == '@name("a//b /* c */") x;\n'


# --------------------------------------------------------------------------
# errors and other directives
# --------------------------------------------------------------------------


def test_unterminated_if() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("a\n#if 1\nb\n")
    assert str(ei.value) == "prog.p4(2): error: unterminated #if"


def test_unterminated_ifdef_reports_latest_directive() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("#ifdef X\n#else\n")
    assert str(ei.value) == "prog.p4(1): error: unterminated #else"


def test_unterminated_if_in_included_file(tmp_path: Path) -> None:
    write(tmp_path / "i.p4", "#ifndef X\n")
    main = write(tmp_path / "m.p4", '#include "i.p4"\n#endif\n')
    with pytest.raises(PreprocessError) as ei:
        preprocess(main)
    assert ei.value.file == str(tmp_path / "i.p4")
    assert ei.value.message == "unterminated #ifndef"


def test_stray_endif_else_elif() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("a\n\n#endif\n")
    assert str(ei.value) == "prog.p4(3): error: #endif without #if"
    with pytest.raises(PreprocessError, match="#else without #if"):
        pp("#else\n")
    with pytest.raises(PreprocessError, match="#elif without #if"):
        pp("#elif 1\n")
    with pytest.raises(PreprocessError, match="#else after #else"):
        pp("#if 1\n#else\n#else\n#endif\n")
    with pytest.raises(PreprocessError, match="#elif after #else"):
        pp("#if 1\n#else\n#elif 1\n#endif\n")


def test_error_directive() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp('ok\n#if !defined(TARGET)\n  #error "TARGET must be set"\n#endif\n')
    err = ei.value
    assert str(err) == 'prog.p4(3): error: #error "TARGET must be set"'
    assert (err.line, err.col) == (3, 3)
    assert words(pp('#ifdef T\n#error "x"\n#endif\nok\n').text) == ["ok"]


def test_warning_directive_is_collected() -> None:
    r = pp("#warning careful\nx\n")
    assert words(r.text) == ["x"]
    assert r.warnings == ["prog.p4(1): warning: #warning careful"]


def test_invalid_directive() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("x\n#foo bar\n")
    assert str(ei.value) == "prog.p4(2): error: invalid preprocessing directive #foo"


def test_line_directive_and_null_directive_are_ignored() -> None:
    r = pp('#line 100 "other.p4"\n#\nx\n')
    assert r.text.splitlines() == ["", "", "x"]
    assert r.origins[2] == SourceLine("prog.p4", 3)


def test_unterminated_comment() -> None:
    with pytest.raises(PreprocessError) as ei:
        pp("a\n  /* never closed\n")
    assert (ei.value.line, ei.value.col, ei.value.message) == (2, 3, "unterminated comment")


# --------------------------------------------------------------------------
# bundled include files
# --------------------------------------------------------------------------


def test_system_include_dir_holds_the_headers() -> None:
    assert (SYSTEM_INCLUDE_DIR / "core.p4").is_file()
    assert (SYSTEM_INCLUDE_DIR / "v1model.p4").is_file()


def test_core_p4_declarations() -> None:
    r = preprocess(SYSTEM_INCLUDE_DIR / "core.p4")
    assert_consistent(r)
    text = " ".join(r.text.split())
    for decl in [
        "error { NoError, PacketTooShort, NoMatch, StackOutOfBounds, HeaderTooShort, "
        "ParserTimeout, ParserInvalidArgument }",
        "extern packet_in {",
        "void extract<T>(out T hdr);",
        "void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);",
        "T lookahead<T>();",
        "void advance(in bit<32> sizeInBits);",
        "bit<32> length();",
        "extern packet_out { void emit<T>(in T hdr); }",
        "extern void verify(in bool check, in error toSignal);",
        "action NoAction() {}",
        "match_kind { exact, ternary, lpm }",
    ]:
        assert decl in text, decl


V1MODEL_DECLS = [
    "match_kind { range, optional, selector }",
    '@metadata @name("standard_metadata") struct standard_metadata_t {',
    "enum CounterType { packets, bytes, packets_and_bytes }",
    "enum MeterType { packets, bytes }",
    "extern direct_counter { direct_counter(CounterType type); void count(); }",
    "extern direct_meter<T> { direct_meter(MeterType type); void read(out T result); }",
    "extern action_profile { action_profile(bit<32> size); }",
    "extern void random<T>(out T result, in T lo, in T hi);",
    "extern void digest<T>(in bit<32> receiver, in T data);",
    "enum HashAlgorithm { crc32, crc32_custom, crc16, crc16_custom, random, identity, "
    "csum16, xor16 }",
    "extern void mark_to_drop();",
    "extern void mark_to_drop(inout standard_metadata_t standard_metadata);",
    "extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, "
    "in M max);",
    "extern action_selector { action_selector(HashAlgorithm algorithm, bit<32> size, "
    "bit<32> outputWidth); }",
    "enum CloneType { I2E, E2E }",
    "extern Checksum16 { Checksum16(); bit<16> get<D>(in D data); }",
    "extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, "
    "HashAlgorithm algo);",
    "extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, "
    "HashAlgorithm algo);",
    "extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, "
    "HashAlgorithm algo);",
    "extern void update_checksum_with_payload<T, O>(in bool condition, in T data, "
    "inout O checksum, HashAlgorithm algo);",
    "extern void clone(in CloneType type, in bit<32> session);",
    "extern void resubmit<T>(in T data);",
    "extern void resubmit_preserving_field_list(bit<8> index);",
    "extern void recirculate<T>(in T data);",
    "extern void recirculate_preserving_field_list(bit<8> index);",
    "extern void clone3<T>(in CloneType type, in bit<32> session, in T data);",
    "extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);",
    "extern void truncate(in bit<32> length);",
    "extern void assert(in bool check);",
    "extern void assume(in bool check);",
    "extern void log_msg(string msg);",
    "extern void log_msg<T>(string msg, in T data);",
    "parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta, "
    "inout standard_metadata_t standard_metadata);",
    "control VerifyChecksum<H, M>(inout H hdr, inout M meta);",
    "@pipeline control Ingress<H, M>(inout H hdr, inout M meta, "
    "inout standard_metadata_t standard_metadata);",
    "@pipeline control Egress<H, M>(inout H hdr, inout M meta, "
    "inout standard_metadata_t standard_metadata);",
    "control ComputeChecksum<H, M>(inout H hdr, inout M meta);",
    "@deparser control Deparser<H>(packet_out b, in H hdr);",
    "package V1Switch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, Ingress<H, M> ig, "
    "Egress<H, M> eg, ComputeChecksum<H, M> ck, Deparser<H> dep);",
]

STANDARD_METADATA_FIELDS = [
    ("ingress_port", "9"),
    ("egress_spec", "9"),
    ("egress_port", "9"),
    ("instance_type", "32"),
    ("packet_length", "32"),
    ("enq_timestamp", "32"),
    ("enq_qdepth", "19"),
    ("deq_timedelta", "32"),
    ("deq_qdepth", "19"),
    ("ingress_global_timestamp", "48"),
    ("egress_global_timestamp", "48"),
    ("mcast_grp", "16"),
    ("egress_rid", "16"),
    ("checksum_error", "1"),
    ("parser_error", None),
    ("priority", "3"),
]


def _standard_metadata_fields(text: str) -> list[tuple[str, str | None]]:
    body = text.split("struct standard_metadata_t {", 1)[1].split("}", 1)[0]
    fields = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        *annotations, ftype, fname = decl.split()
        width = ftype[4:-1] if ftype.startswith("bit<") else None
        fields.append((fname, width if ftype != "PortId_t" else "9"))
    return fields


def test_v1model_declarations() -> None:
    r = pp("#include <v1model.p4>\n")
    assert_consistent(r)
    text = " ".join(r.text.split())
    for decl in V1MODEL_DECLS:
        assert decl in text, decl
    assert "const bit<32> __v1model_version = 20180101;" in text
    assert (
        "extern counter { counter(bit<32> size, CounterType type); void count(in bit<32> index); }"
        in text
    )
    assert "extern register<T> {" in text
    assert "void execute_meter<T>(in bit<32> index, out T result);" in text
    assert "PortId_t" not in text
    assert _standard_metadata_fields(text) == STANDARD_METADATA_FIELDS
    assert '@alias("intrinsic_metadata.priority") bit<3> priority;' in text
    assert "extern packet_in" in text  # core.p4 came along
    assert not r.warnings


def test_v1model_2020_api() -> None:
    r = pp("#include <v1model.p4>\n", defines={"V1MODEL_VERSION": "20200408"})
    text = " ".join(r.text.split())
    assert "const bit<32> __v1model_version = 20200408;" in text
    assert "typedef bit<9> PortId_t;" in text
    assert (
        "extern counter<I> { counter(bit<32> size, CounterType type); void count(in I index); }"
        in text
    )
    assert (
        "extern meter<I> { meter(bit<32> size, MeterType type); "
        "void execute_meter<T>(in I index, out T result); }" in text
    )
    assert (
        "extern register<T, I> { register(bit<32> size); @noSideEffects "
        "void read(out T result, in I index); void write(in I index, in T value); }" in text
    )
    assert "PortId_t ingress_port; PortId_t egress_spec; PortId_t egress_port;" in text
    assert _standard_metadata_fields(text) == STANDARD_METADATA_FIELDS


def test_v1model_meter_color_macros_and_double_include() -> None:
    r = pp(
        "#include <core.p4>\n#include <v1model.p4>\n#include <v1model.p4>\n"
        "x = V1MODEL_METER_COLOR_RED + V1MODEL_METER_COLOR_YELLOW + V1MODEL_METER_COLOR_GREEN;\n"
    )
    assert "x = 2 + 1 + 0;" in r.text
    assert r.text.count("extern packet_in") == 1
    assert r.text.count("package V1Switch") == 1


# --------------------------------------------------------------------------
# performance and agreement with cpp
# --------------------------------------------------------------------------


def _blocks(n: int) -> str:
    """A program of ``n`` six-line blocks, each with comments and macro calls."""
    parts = [
        "#include <core.p4>\n#include <v1model.p4>\n#define N 1024\n"
        "#define REG(n, w) register<bit<w>>(N) n\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    ]
    for i in range(n):
        parts.append(
            f"/* block {i}\n   comment */\nREG(r{i}, 32);\n// line comment\n"
            f"x = MAX(h.a{i}, MAX(1, N)) + 8w3;\n"
            f'@name("t{i}") table t{i} {{ key = {{ h.x : exact; }} }}\n'
        )
    return "".join(parts)


def test_large_program_work_grows_linearly() -> None:
    """The preprocessor's work (lines run and calls made, counted: not timed) grows with the program
    by the same step for each block added, whether 200 lines come before or 800: no
    part of it rescans what it has already read or written."""
    texts = {n: _blocks(n) for n in (0, 150, 300)}
    assert texts[300].count("\n") >= 1800
    first, second = work_steps(lambda n: work_done(lambda: pp(texts[n])), 150)
    assert 0 < first and second <= 1.05 * first, (first, second)
    assert "register<bit<32>>(1024) r299;" in pp(texts[300]).text


CPP_CASES = [
    "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n#define z z[0]\n"
    "#define h g(~\n#define m(a) a(w)\n#define w 0,1\n#define t(a) a\n#define p() int\n"
    "#define q(x) x\n#define r(x,y) x ## y\n#define str(x) # x\n"
    "f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);\ng(x+(3,4)-w) | h 5) & m\n(f)^m(m);\n"
    "p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };\nchar c[2][6] = { str(hello), str() };\n",
    "#define hash_hash # ## #\n#define mkstr(a) # a\n#define in_between(a) mkstr(a)\n"
    "#define join(c, d) in_between(c hash_hash d)\nchar p[] = join(x, y);\n",
    "#define t(x,y,z) x ## y ## z\nint j[] = { t(1,2,3), t(,4,5), t(6,,7), t(8,9,),\n"
    " t(10,,), t(,11,), t(,,12), t(,,) };\n",
    "#define F(x) [x]\n#define G F\nG(1) G (2) G\n(3) F\nF\n\n(4) end\n",
    "#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)\n#define AA BB\n#define BB AA\nAA BB\n",
    "#define REG(name, w) register<bit<w>>(1024) name\nREG(r1, 32);\n"
    "#define MIN(a,b) ((a) < (b) ? (a) : (b))\nx = MIN(MIN(1, 2), y);\n"
    '"MIN(1,2)" /* MIN(3,4) */ // MIN(5,6)\n',
    "#if defined(A) || !defined B\nyes\n#endif\n#if (1 << 63) < 0 && ~0u == 18446744073709551615u\n"
    "ok\n#endif\n#if 0 && (1/0)\nbad\n#elif 1 || 1/0\nok3\n#endif\n",
]


def _tokens(text: str) -> list[str]:
    from switch.frontend.preprocess import _tokenize

    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    return [t.text for t in _tokenize("\n".join(lines)) if t.kind != "ws"]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="cpp not installed")
@pytest.mark.parametrize("src", CPP_CASES)
def test_agrees_with_cpp(src: str, tmp_path: Path) -> None:
    f = write(tmp_path / "c.p4", src)
    ref = subprocess.run(
        ["cpp", "-undef", "-nostdinc", "-x", "assembler-with-cpp", str(f)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert _tokens(preprocess(f).text) == _tokens(ref)


# --------------------------------------------------------------------------
# robustness
# --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='ab X()#/*"\\\n ,', max_size=80))
def test_one_origin_per_physical_line(src: str) -> None:
    """Whatever the input, output line i comes from input line i (no includes)."""
    try:
        r = preprocess_text("#define X(a) a a\n" + src, "h.p4")
    except PreprocessError:
        return
    physical = ("#define X(a) a a\n" + src).split("\n")
    if physical[-1] == "":
        physical.pop()
    assert_consistent(r)
    assert [o.line for o in r.origins] == list(range(1, len(physical) + 1))
    assert all(o.file == "h.p4" for o in r.origins)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abc xyz(){};<>=+-@0123456789", max_size=30), max_size=20))
def test_plain_text_passes_through(lines: list[str]) -> None:
    src = "".join(line + "\n" for line in lines)
    r = preprocess_text(src, "p.p4")
    assert r.text.splitlines() == [line.rstrip() for line in lines]


def test_splice_with_trailing_blanks() -> None:
    r = pp("#define X 1 + \\  \n 2\nX\n")
    assert words(r.text) == ["1 + 2"]
    assert len(r.origins) == 3


def test_elifdef_and_elifndef() -> None:
    src = "#ifdef A\na\n#elifdef B\nb\n#elifndef C\nnot_c\n#endif\n"
    assert words(pp(src, defines={"B": None}).text) == ["b"]
    assert words(pp(src).text) == ["not_c"]


def test_error_survives_pickling() -> None:
    import pickle

    err = PreprocessError("a.p4", 3, "boom", 2)
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.file, copy.line, copy.message, copy.col) == ("a.p4", 3, "boom", 2)
    assert str(copy) == "a.p4(3): error: boom"
