"""The VM's tools without a VM: what a boot gives the guest (``vm.tree``), what the
image's key covers (``vm.image``), how the job's output and exit status come back and
how qemu is started (``vm.boot``), the errors, and the README's VM commands as make
expands them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from readme_sections import blocks, section

from vm import boot, image, tree

ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _names(path: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(path) as tar:
        return {info.name: info for info in tar.getmembers()}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git (not in the tests' VM)")
def test_pack_holds_the_git_tree_and_the_job(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / ".gitignore").write_text(".venv/\nbuild/\n")
    (repo / "sub" / "run.sh").write_text("#!/bin/sh\n")
    (repo / "sub" / "run.sh").chmod(0o755)
    (repo / "gone.txt").write_text("deleted below\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    (repo / "gone.txt").unlink()
    (repo / "new.txt").write_text("not committed yet\n")
    for ignored in (".venv/bin/python", "build/vm/image.qcow2"):
        (repo / ignored).parent.mkdir(parents=True, exist_ok=True)
        (repo / ignored).write_text("x")
    out = tmp_path / "job.tar"
    tree.pack(repo, out, "exec true\n")
    members = _names(out)
    assert sorted(members) == ["job.sh", "project/.gitignore", "project/new.txt",
                               "project/sub/run.sh"]
    assert members["project/sub/run.sh"].mode & 0o111
    assert members["job.sh"].uid == 0
    with tarfile.open(out) as tar:
        job = tar.extractfile("job.sh")
        assert job is not None and job.read() == b"exec true\n"
    assert out.stat().st_size % 512 == 0  # a disk's whole sectors


def test_pack_outside_git_leaves_out_the_environment(tmp_path: Path) -> None:
    for name in ("a.py", "p4/b.p4", ".venv/bin/python", "build/x", "runs/r/results.json",
                 "pkg.egg-info/PKG-INFO", "sub/__pycache__/a.pyc"):
        (tmp_path / "t" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "t" / name).write_text("x")
    tree.pack(tmp_path / "t", tmp_path / "shell.tar")
    assert sorted(_names(tmp_path / "shell.tar")) == ["project/a.py", "project/p4/b.p4"]


def test_image_key_covers_what_goes_into_the_image(tmp_path: Path) -> None:
    key, parts = image.image_key(image.DEFAULT_MIRROR, None)
    assert key == image.image_key(image.DEFAULT_MIRROR, None)[0]
    assert {"setup.sh", "pyproject.toml", "interop/p4config/pyproject.toml",
            "vm/provision.sh", "vm/guest/ina-vm-job", "vm/image.py", "base"} <= set(parts)
    assert "README.md" not in parts and "vm/boot.py" not in parts
    assert image.image_key("http://mirror.example/debian", None)[0] != key
    bmv2 = tmp_path / "bmv2"
    bmv2.mkdir()
    (bmv2 / "install.sh").write_text("#!/bin/sh\n")
    (bmv2 / "bmv2-p4c.tar.xz").write_bytes(b"1")
    with_bmv2, bmv2_parts = image.image_key(image.DEFAULT_MIRROR, bmv2)
    assert with_bmv2 != key and "bmv2/bmv2-p4c.tar.xz" in bmv2_parts
    (bmv2 / "bmv2-p4c.tar.xz").write_bytes(b"2")
    assert image.image_key(image.DEFAULT_MIRROR, bmv2)[0] != with_bmv2


def test_prune_keeps_the_most_recently_used(tmp_path: Path) -> None:
    names = ["image-a", "image-b", "image-c", "image-d", "image-e.x1y2", "base-a.tar",
             "base-b.tar", "base-c.tar", "base.x1y2"]
    for age, name in enumerate(names):
        path = tmp_path / name
        if name.endswith(".tar"):
            path.write_text("x")
        else:
            (path / "sub").mkdir(parents=True)
        os.utime(path, (1000 - age, 1000 - age))  # image-a the newest
    image.prune(tmp_path, tmp_path / "image-d", tmp_path / "base-c.tar",
                tmp_path / "base-gone.tar")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "base-a.tar", "base-c.tar", "base.x1y2", "image-a", "image-b", "image-d",
        "image-e.x1y2"]


def test_the_job_status_line_ends_the_stream(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    proc = subprocess.Popen(["printf", "collected 2 items\\n..\\nina-vm: exit status 3\\n"],
                            stdout=subprocess.PIPE)
    assert boot._stream(proc, timeout=30) == 3
    assert capfdbinary.readouterr().out.endswith(b"..\nina-vm: exit status 3\n")
    proc = subprocess.Popen(["printf", "no newline at its endina-vm: exit status 0\\n"],
                            stdout=subprocess.PIPE)
    assert boot._stream(proc, timeout=30) == 0
    proc = subprocess.Popen(["printf", "Kernel panic\\n"], stdout=subprocess.PIPE)
    assert boot._stream(proc, timeout=30) is None
    proc = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE)
    with pytest.raises(boot.BootError, match="did not end within 0.2 s"):
        boot._stream(proc, timeout=0.2)
    proc.kill()
    proc.wait()


def test_qemu_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The command, not qemu itself: also where qemu is not installed (inside the VM).
    monkeypatch.setattr(boot.shutil, "which", lambda name: f"/usr/bin/{name}")
    for name in ("image.qcow2", "vmlinuz", "initrd.img"):
        (tmp_path / name).write_text("x")
    argv = boot.Machine(image=tmp_path, accel="tcg").argv(tmp_path / "job.tar")
    text = " ".join(argv)
    assert "-accel tcg" in text and "-smp 2 -m 6G" in text
    assert f"file={tmp_path / 'image.qcow2'},if=virtio,format=qcow2,snapshot=on" in argv
    assert f"file={tmp_path / 'job.tar'},if=virtio,format=raw,readonly=on" in argv
    assert argv[argv.index("-append") + 1].startswith("root=/dev/vda rw console=ttyS0")


def test_boot_without_an_image_says_make_vm(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "vm.boot", "--image", str(tmp_path),
                           "--accel", "tcg", "test"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == boot.CANNOT_RUN
    assert proc.stderr == (f"vm: error: no VM image in {tmp_path} (its image.qcow2 is "
                           "missing): build it with `make vm`\n")


def test_image_rejects_a_bmv2_directory_without_install_sh(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "vm.image", "--bmv2", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr == f"vm: error: --bmv2 {tmp_path}: no install.sh there\n"


# A make run by this suite's own make (`make test`) would inherit its flags and print
# "Entering directory" lines around what it would run.
TOP_MAKE = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def _make_commands() -> list[str]:
    return [line.split("#")[0].strip() for block in blocks(section("The tests in a VM"), "")
            for line in block.splitlines()
            if line.startswith("make ")]


def test_readme_make_commands_expand_to_the_vm_tools() -> None:
    commands = _make_commands()
    assert commands == ["make vm", "make vm-test PYTEST_ARGS=\"-m 'not slow'\"",
                        "make vm-shell"]
    expected = ["python3 -m vm.image", "python3 -m vm.boot test -- -m 'not slow'",
                "python3 -m vm.boot shell"]
    for command, last in zip(commands, expected, strict=True):
        proc = subprocess.run(f"{command} -n", shell=True, cwd=ROOT, capture_output=True,
                              text=True, timeout=60, env=TOP_MAKE)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split("\n")[-2].strip() == last, proc.stdout


def test_make_passes_the_options_on() -> None:
    proc = subprocess.run(["make", "-n", "vm-test", "VM_ACCEL=tcg", "BMV2=none",
                           "VM_MIRROR=http://mirror.example/debian", "PYTEST_ARGS=tests/vm"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, env=TOP_MAKE)
    assert proc.stdout.split("\n")[:2] == [
        "python3 -m vm.image --no-bmv2 --mirror http://mirror.example/debian",
        "python3 -m vm.boot --accel tcg test -- tests/vm"]
