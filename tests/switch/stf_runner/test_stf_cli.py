"""``ina stf`` and ``run_stf`` end to end: the real front end and switch on the runner's
own fixtures (skipped while the switch cannot run them)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from switch.stf import run_stf
from switch.stf.cli import add_stf_parser

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FWD = FIXTURES / "fwd.p4"


def stf_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ina")
    add_stf_parser(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["stf", *argv])
    return int(args.func(args))


def test_options_are_parsed() -> None:
    parser = argparse.ArgumentParser(prog="ina")
    add_stf_parser(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["stf", "p.p4", "t.stf", "-I", "a", "-I", "b", "-D", "X=1",
                              "-D", "Y", "-v", "--strict-ports"])
    assert (args.program, args.stf) == ("p.p4", "t.stf")
    assert args.include_dirs == ["a", "b"]
    assert args.defines == ["X=1", "Y"]
    assert args.verbose and args.strict_ports


def test_compile_error_exits_1_with_diagnostics_on_stderr(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = stf_main([str(tmp_path / "missing.p4"), str(FIXTURES / "pass.stf")])
    out, err = capsys.readouterr()
    assert code == 1
    assert "missing.p4: error:" in err
    assert out == ""


def test_run_stf_reports_compile_errors(tmp_path: Path) -> None:
    result = run_stf(tmp_path / "missing.p4", FIXTURES / "pass.stf")
    assert not result.passed
    assert result.stage == "compile"
    assert "missing.p4: error:" in result.report




def test_passing_test(capsys: pytest.CaptureFixture[str]) -> None:
    assert stf_main([str(FWD), str(FIXTURES / "pass.stf")]) == 0
    out, _ = capsys.readouterr()
    assert out.strip().endswith("pass.stf: 5 packet(s) in, 5 out")


def test_passing_test_through_run_stf() -> None:
    result = run_stf(FWD, FIXTURES / "pass.stf")
    assert result.passed, result.report
    assert (result.packets_in, result.packets_out) == (5, 5)


def test_failing_test_reports_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert stf_main([str(FWD), str(FIXTURES / "fail.stf")]) == 1
    out, _ = capsys.readouterr()
    stf = FIXTURES / "fail.stf"
    assert f"{stf}(3): error: port 2: packet #1 (from the packet at line 2) differs" in out
    assert f"{stf}(4): error: register_read MyIngress.seen[1]: expected 0x13" in out
    assert "FAIL" in out


def test_stf_syntax_errors_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert stf_main([str(FWD), str(FIXTURES / "bad_syntax.stf")]) == 1
    _, err = capsys.readouterr()
    assert f"{FIXTURES / 'bad_syntax.stf'}(3): error: unknown command 'frobnicate'" in err
    result = run_stf(FWD, FIXTURES / "bad_syntax.stf")
    assert (result.passed, result.stage) == (False, "stf")


def test_bad_entry_stops_with_its_line() -> None:
    result = run_stf(FWD, FIXTURES / "bad_entry.stf")
    assert not result.passed
    assert f"{FIXTURES / 'bad_entry.stf'}(2): error: add: no key named 'hdr.h.zz'" \
        in result.report


def test_verbose_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert stf_main([str(FWD), str(FIXTURES / "pass.stf"), "-v"]) == 0
    out, _ = capsys.readouterr()
    assert "-> port 2: 01120 2A2".replace(" ", "") in out.replace(" ", "")


# ---------------------------------------------------------------------------- --target bmv2

STF_DIR = FIXTURES.parents[2] / "stf"


def _bmv2_missing() -> str | None:
    from switch.stf.bmv2_target import missing_tools

    return missing_tools()


needs_bmv2 = pytest.mark.skipif(_bmv2_missing() is not None, reason=_bmv2_missing() or "")


def test_target_option() -> None:
    parser = argparse.ArgumentParser(prog="ina")
    add_stf_parser(parser.add_subparsers(dest="verb", required=True))
    assert parser.parse_args(["stf", "p.p4", "t.stf"]).target == "builtin"
    assert parser.parse_args(["stf", "p.p4", "t.stf", "--target", "bmv2"]).target == "bmv2"
    with pytest.raises(SystemExit):
        parser.parse_args(["stf", "p.p4", "t.stf", "--target", "tofino"])


@needs_bmv2
def test_bmv2_readme_command(capsys: pytest.CaptureFixture[str]) -> None:
    lpm = STF_DIR / "table" / "lpm"
    assert stf_main(["--target", "bmv2", str(lpm.with_suffix(".p4")),
                     str(lpm.with_suffix(".stf"))]) == 0
    out, _ = capsys.readouterr()
    assert out.strip() == f"PASS {lpm.with_suffix('.stf')}: 5 packet(s) in, 5 out"


@needs_bmv2
@pytest.mark.parametrize("options", [[], ["--strict-ports"]])
def test_bmv2_reports_as_the_builtin_switch(options: list[str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The same failures, the same words, the same exit status; an unchecked port is
    a note, or with --strict-ports a failure, on both."""
    stf = tmp_path / "t.stf"
    stf.write_text((FIXTURES / "fail.stf").read_text()
                   + "add fwd hdr.h.a:3 set_out(port:9)\npacket 0 03 00 00 00\n")
    outputs = []
    for target in ("builtin", "bmv2"):
        assert stf_main([str(FWD), str(stf), "--target", target, *options]) == 1
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert f"{stf}(3): error: port 2: packet #1 (from the packet at line 2) differs" \
        in outputs[1]
    assert f"{stf}(4): error: register_read MyIngress.seen[1]: expected 0x13" in outputs[1]
    if options:
        assert f"{stf}(6): error: unexpected packet on unchecked port 9" in outputs[1]
    else:
        assert "note: not checked (no packet/expect line names the port): port 9" \
            in outputs[1]


@needs_bmv2
def test_bmv2_control_plane_commands() -> None:
    """Counters, direct counters, meters, defaults, remove all, multicast nodes, clone
    sessions and registers do the same on both targets."""
    stf = FIXTURES / "control_plane.stf"
    for target in ("builtin", "bmv2"):
        result = run_stf(FIXTURES / "control_plane.p4", stf, target=target)
        assert result.passed, f"{target}:\n{result.report}"
        assert (result.packets_in, result.packets_out) == (14, 17)


@needs_bmv2
def test_bmv2_trace_shows_bmv2_log(capsys: pytest.CaptureFixture[str]) -> None:
    assert stf_main([str(FWD), str(FIXTURES / "pass.stf"), "--target", "bmv2",
                     "--trace"]) == 0
    out, _ = capsys.readouterr()
    assert "      Table 'MyIngress.fwd': hit with handle 0" in out
    assert "      Transmitting packet of size 4 out of port 2" in out


@needs_bmv2
def test_bmv2_shows_p4c_diagnostics(capsys: pytest.CaptureFixture[str]) -> None:
    bad = STF_DIR / "negative" / "syntax_error.p4"
    assert stf_main([str(bad), str(FIXTURES / "pass.stf"), "--target", "bmv2"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{bad}(" in err and "error" in err
