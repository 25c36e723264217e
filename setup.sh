#!/usr/bin/env bash
# Prepare this machine for the project: system packages, the .venv virtualenv, and the
# project installed into it. Idempotent: a second run with nothing changed is quick.
set -euo pipefail
cd "$(dirname "$0")"

# gcc: pip builds netifaces (ptf's) from source, as it has no wheel for Python 3.11, and
# the built-in switch's native engine compiles P4 programs to C (gcc, libc6-dev).
APT_PACKAGES=(python3 python3-venv python3-dev gcc libc6-dev mininet iproute2 iputils-ping ethtool tcpdump nftables make
              net-tools openssh-client openssh-server)
VENV=.venv

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: installing system packages needs root (run as root or with sudo)" >&2
        exit 1
    fi
}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    need_root
    echo "setup.sh: installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -q
    apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup.sh: creating $VENV"
    /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi

# interop/p4config gives P4Runtime clients p4.tmp.p4config_pb2 (BMv2's device config
# wrapper), which no PyPI package ships; it is installed as a plain package, beside the
# p4runtime package's p4.v1.
stamp="$VENV/.ina-installed"
want="$(cat pyproject.toml interop/p4config/pyproject.toml interop/p4config/p4/tmp/*.py | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup.sh: installing the project into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -e '.[dev]' ./interop/p4config
    echo "$want" > "$stamp"
fi
