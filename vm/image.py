"""``make vm``: build the Debian 12 image the test suite runs in, or reuse the cached one.

    python3 -m vm.image [--bmv2 DIR | --no-bmv2] [--mirror URL]    (make vm)

Two stages, each cached under its own key (a hash of what went into it) in the cache
directory (``INA_VM_CACHE``, by default ``~/.cache/ina-emulator/vm``), so that a second
checkout, or CI, builds the image once and reuses it:

1. ``base-KEY.tar``: debootstrap of Debian 12 with the kernel, systemd and sudo
   (``vm/base.sh``; the key covers that script and the mirror).
2. ``image-KEY/``: that root with the user ``ina``, the guest's services
   (``vm/guest/``), the project copied to ``/home/ina/ina-emulator`` and set up there by
   ``./setup.sh`` (``vm/provision.sh``, in a chroot), and BMv2 + p4c when a build of
   them is given; then ``image.qcow2`` (one ext4 file system, no partitions) with the
   kernel (``vmlinuz``) and ``initrd.img`` beside it, which qemu boots directly. The key
   covers the base, the files of this stage (``vm/image.py``, ``vm/tree.py``,
   ``vm/provision.sh``, ``vm/guest/``), ``setup.sh`` and what it installs from
   (``pyproject.toml``, ``interop/``) and the BMv2 build.

The rest of the tree is not in the key: every boot copies the current tree over the
image's copy and runs ``./setup.sh`` there (``vm/guest/ina-vm-job``), so editing the
code never rebuilds the image. ``build/vm`` links to the image in use.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from vm import tree

ROOT = Path(__file__).resolve().parents[1]
VM = ROOT / "vm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_BMV2 = ROOT.parent / "shared" / "bmv2"
DISK_SIZE = "8G"
# How many images and Debian bases the cache keeps (the most recently used ones): every
# change to what goes into the image makes a new one, of about 1.5 GB.
KEEP_IMAGES = 3
KEEP_BASES = 2
# Debian's packages for what the build needs on the host, by command or file.
HOST_NEEDS = {"debootstrap": "debootstrap", "qemu-img": "qemu-utils",
              "qemu-system-x86_64": "qemu-system-x86", "mkfs.ext4": "e2fsprogs",
              "unshare": "util-linux", "chroot": "coreutils",
              "/usr/share/keyrings/debian-archive-keyring.gpg": "debian-archive-keyring"}
# Where vm/guest's files go in the image, and their modes.
GUEST_FILES = {
    "ina-vm-job": ("usr/local/sbin/ina-vm-job", 0o755),
    "ina-vm-job.service": ("etc/systemd/system/ina-vm-job.service", 0o644),
    "20-dhcp.network": ("etc/systemd/network/20-dhcp.network", 0o644),
    "autologin.conf": ("etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf",
                       0o644),
    "profile.sh": ("etc/profile.d/ina-vm.sh", 0o644),
}
# What the end-to-end tests need of the kernel: network namespaces, veth pairs, htb for
# Mininet's TCLink, raw (packet) sockets for the switches and agents.
KERNEL_NEEDS = {"CONFIG_NET_NS": "y", "CONFIG_VETH": "ym", "CONFIG_NET_SCH_HTB": "ym",
                "CONFIG_PACKET": "ym"}
# Where Debian keeps the certificate authorities a machine adds to its trusted ones.
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
# The proxy settings the build passes on to debootstrap, apt and pip in the chroot.
PROXY_VARIABLES = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                   "NO_PROXY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST")


class BuildError(RuntimeError):
    """The image cannot be built; the message says what and where."""


def say(message: str) -> None:
    print(f"vm: {message}", flush=True)


def cache_dir() -> Path:
    if os.environ.get("INA_VM_CACHE"):
        return Path(os.environ["INA_VM_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ina-emulator" / "vm"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _key(parts: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def base_key(mirror: str) -> str:
    return _key({"mirror": mirror, "vm/base.sh": _sha256_file(VM / "base.sh")})


def image_key(mirror: str, bmv2: Path | None) -> tuple[str, dict[str, str]]:
    """The image's key and what it was computed from (kept in the image's info.json)."""
    parts = {"base": base_key(mirror), "mirror": mirror}
    # What ./setup.sh installs from: the project's pyproject.toml and the packages of
    # interop/ it installs beside it.
    setup = [ROOT / "setup.sh", ROOT / "pyproject.toml",
             *(ROOT / name for name in tree.project_files(ROOT) if name.startswith("interop/"))]
    inputs = [*setup, VM / "image.py", VM / "tree.py", VM / "provision.sh",
              *sorted((VM / "guest").iterdir())]
    for path in inputs:
        parts[str(path.relative_to(ROOT))] = _sha256_file(path)
    if bmv2 is not None:
        parts["bmv2/install.sh"] = _sha256_file(bmv2 / "install.sh")
        for tarball in sorted(bmv2.glob("*.tar*")):
            parts[f"bmv2/{tarball.name}"] = _sha256_file(tarball)
    return _key(parts), parts


def _run(argv: list[str], what: str, **kwargs: object) -> None:
    proc = subprocess.run(argv, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        raise BuildError(f"{what} failed (exit status {proc.returncode}): {' '.join(argv)}")


def _remove(path: Path) -> None:
    """Remove a tree without ever leaving its file system (a mount inside stays)."""
    if path.exists() or path.is_symlink():
        subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)


def need_host_tools() -> None:
    """The build's tools on the host, installed with apt when missing (as setup.sh does)."""
    def present(need: str) -> bool:
        if need.startswith("/"):
            return Path(need).exists()
        return shutil.which(need) is not None or Path("/usr/sbin", need).exists()

    missing = sorted({pkg for need, pkg in HOST_NEEDS.items() if not present(need)})
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise BuildError(f"the build needs {', '.join(missing)} (Debian package names) and "
                         "this machine has no apt-get: install them, or use the Vagrantfile")
    say(f"installing the build's tools: {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _run(["apt-get", "update", "-q"], "apt-get update", env=env)
    _run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing],
         "apt-get install", env=env)


def proxy_environment() -> dict[str, str]:
    """The host's proxy settings for the chroot: the environment's, and apt's HTTP proxy
    when the environment names none."""
    env = {name: os.environ[name] for name in PROXY_VARIABLES if os.environ.get(name)}
    if "http_proxy" not in env and shutil.which("apt-config"):
        out = subprocess.run(["apt-config", "shell", "P", "Acquire::http::Proxy"],
                             capture_output=True, text=True).stdout
        match = re.match(r"P='(.+)'", out.strip())
        if match:
            env["http_proxy"] = match.group(1)
    return env


@contextmanager
def locked(cache: Path) -> Iterator[None]:
    """One build at a time per cache directory (two checkouts may share it)."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another build in {cache}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_base(cache: Path, mirror: str) -> Path:
    tar = cache / f"base-{base_key(mirror)}.tar"
    if tar.exists():
        say(f"reusing the Debian base {tar}")
        return tar
    say(f"debootstrap of Debian 12 from {mirror} (a few minutes)")
    env = {**os.environ, **proxy_environment()}
    _run([str(VM / "base.sh"), mirror, str(tar)], "vm/base.sh", env=env)
    return tar


def check_kernel(root: Path) -> str:
    """The kernel's version, once its configuration shows what the tests need."""
    configs = sorted((root / "boot").glob("config-*"))
    if not configs:
        raise BuildError(f"no kernel in the image ({root}/boot has no config-*)")
    config = configs[-1].read_text()
    for option, values in KERNEL_NEEDS.items():
        match = re.search(rf"^{option}=(\w)", config, re.M)
        if not match or match.group(1) not in values:
            raise BuildError(f"the image's kernel ({configs[-1].name}) lacks {option}, "
                             "which the tests need")
    return configs[-1].name.removeprefix("config-")


def provision(root: Path, mirror: str, bmv2: Path | None) -> None:
    for name, (dest, mode) in GUEST_FILES.items():
        target = root / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(VM / "guest" / name, target)
        target.chmod(mode)
    shutil.copyfile(VM / "provision.sh", root / "root/provision.sh")
    project = root / "home/ina/ina-emulator"
    project.mkdir(parents=True)
    tree.copy_project(ROOT, project)
    if bmv2 is not None:
        shutil.copytree(bmv2, root / "root/bmv2")
    # The certificate authorities the host added: through a TLS-inspecting proxy the
    # image reaches PyPI as the host does.
    if LOCAL_CAS.is_dir():
        shutil.copytree(LOCAL_CAS, root / LOCAL_CAS.relative_to("/"), dirs_exist_ok=True)
    shutil.copyfile("/etc/resolv.conf", root / "etc/resolv.conf", follow_symlinks=True)
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME": "/root", "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive",
           "MIRROR": mirror, **proxy_environment()}
    # The mounts live in a private mount namespace: they end with it, whatever happens.
    script = ('mount -t proc proc "$1/proc" && mount -t sysfs sysfs "$1/sys" && '
              'mount --rbind /dev "$1/dev" && exec chroot "$1" /bin/bash /root/provision.sh')
    say("provisioning: the user, the guest's services, ./setup.sh"
        + (f", BMv2 and p4c from {bmv2}" if bmv2 else ""))
    _run(["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script,
          "sh", str(root)], "provisioning (vm/provision.sh in the image)",
         env=env)
    (root / "root/provision.sh").unlink()


def build_image(cache: Path, mirror: str, bmv2: Path | None) -> Path:
    key, parts = image_key(mirror, bmv2)
    final = cache / f"image-{key}"
    if (final / "image.qcow2").exists():
        say(f"the image is up to date: {final / 'image.qcow2'}")
        return final
    started = time.monotonic()
    for leftover in [*cache.glob("image-*.*"), *cache.glob("base.*")]:
        _remove(leftover)  # of a build that was killed: this one holds the lock
    base = build_base(cache, mirror)
    work = Path(tempfile.mkdtemp(prefix=f"image-{key}.", dir=cache))
    try:
        root = work / "root"
        root.mkdir()
        say("unpacking the base")
        _run(["tar", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-C", str(root),
              "-xpf", str(base)], "unpacking the base")
        provision(root, mirror, bmv2)
        kernel = check_kernel(root)
        shutil.copyfile(root / "boot" / f"vmlinuz-{kernel}", work / "vmlinuz")
        shutil.copyfile(root / "boot" / f"initrd.img-{kernel}", work / "initrd.img")
        say(f"making the disk ({DISK_SIZE}, ext4)")
        raw = work / "image.raw"
        _run(["mkfs.ext4", "-q", "-F", "-L", "ina-vm", "-d", str(root), str(raw), DISK_SIZE],
             "mkfs.ext4")
        _run(["qemu-img", "convert", "-O", "qcow2", str(raw), str(work / "image.qcow2")],
             "qemu-img convert")
        raw.unlink()
        _remove(root)
        info = {"key": key, "kernel": kernel, "bmv2": str(bmv2) if bmv2 else None,
                "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "build_seconds": round(time.monotonic() - started), "inputs": parts}
        (work / "info.json").write_text(json.dumps(info, indent=2) + "\n")
        work.chmod(0o755)
        work.rename(final)
    finally:
        _remove(work)
    say(f"built {final / 'image.qcow2'} in {time.monotonic() - started:.0f} s")
    return final


def prune(cache: Path, *used: Path) -> None:
    """Mark ``used`` as just used; remove all but the ``KEEP_IMAGES`` most recently used
    images and ``KEEP_BASES`` bases (a VM running from a removed image keeps its open
    file)."""
    for path in used:
        with suppress(OSError):  # a base that was removed, a cache of another user
            os.utime(path)
    for pattern, keep in (("image-*", KEEP_IMAGES), ("base-*.tar", KEEP_BASES)):
        # Only finished ones: image-KEY/ and base-KEY.tar, not a build's work directory.
        done = [p for p in cache.glob(pattern) if "." not in p.name.removesuffix(".tar")]
        done.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in done[keep:]:
            say(f"removing {old}, the least recently used")
            _remove(old)


def link(image: Path) -> None:
    """``build/vm`` names the image in use."""
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    tmp = build / "vm.new"
    _remove(tmp)
    tmp.symlink_to(image)
    tmp.replace(build / "vm")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m vm.image", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--bmv2", metavar="DIR", type=Path,
                       help="put the BMv2 + p4c build in DIR (its install.sh) into the image "
                            f"(default: {DEFAULT_BMV2} when it is there)")
    group.add_argument("--no-bmv2", action="store_true", help="leave BMv2 and p4c out")
    parser.add_argument("--mirror", default=DEFAULT_MIRROR,
                        help=f"the Debian mirror (default {DEFAULT_MIRROR})")
    return parser.parse_args(argv)


def choose_bmv2(args: argparse.Namespace) -> Path | None:
    if args.no_bmv2:
        return None
    if args.bmv2 is None:
        return DEFAULT_BMV2.resolve() if (DEFAULT_BMV2 / "install.sh").is_file() else None
    if not (args.bmv2 / "install.sh").is_file():
        raise BuildError(f"--bmv2 {args.bmv2}: no install.sh there")
    return args.bmv2.resolve()


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        bmv2 = choose_bmv2(args)
        cache = cache_dir()
        key, _ = image_key(args.mirror, bmv2)
        if not (cache / f"image-{key}" / "image.qcow2").exists():
            if os.geteuid() != 0:
                raise BuildError("building the image needs root (debootstrap, chroot): "
                                 "run it as root or with sudo")
            need_host_tools()
        with locked(cache):
            image = build_image(cache, args.mirror, bmv2)
            prune(cache, image, cache / f"base-{base_key(args.mirror)}.tar")
        link(image)
    except BuildError as e:
        print(f"vm: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
