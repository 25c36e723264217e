#!/usr/bin/env bash
# The first stage of the VM image (run by vm/image.py, as root): a minimal Debian 12 root
# with the kernel, systemd and sudo, made by debootstrap and packed into a tar. The
# image's key includes this file, so a change here rebuilds both stages.
#
#   vm/base.sh MIRROR OUT.tar
set -euo pipefail
mirror=$1
out=$2
packages=linux-image-cloud-amd64,systemd-sysv,udev,kmod,dbus,sudo,ca-certificates,iproute2,procps,less,netbase

work=$(mktemp -d "$(dirname "$out")/base.XXXXXX")
# --one-file-system: never follow a mount out of the root (there is none: debootstrap's
# own mounts live in the private mount namespace below and end with it).
trap 'rm -rf --one-file-system "$work"' EXIT
unshare --mount -- debootstrap --variant=minbase --include="$packages" bookworm \
    "$work/root" "$mirror"
tar --numeric-owner --xattrs --xattrs-include='*' -C "$work/root" -cf "$work/base.tar" .
mv "$work/base.tar" "$out"
