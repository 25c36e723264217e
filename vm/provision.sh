#!/bin/bash
# The second stage of the VM image, run by vm/image.py inside the image's root (chroot,
# as root) after it has copied in vm/guest's files, the project (/home/ina/ina-emulator)
# and maybe the BMv2 + p4c build (/root/bmv2). MIRROR names the Debian mirror.
set -euo pipefail

# No service starts inside the chroot while packages are installed.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d

echo ina-vm > /etc/hostname
printf '127.0.0.1\tlocalhost\n127.0.1.1\tina-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
    > /etc/hosts
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' > /etc/fstab
echo 'LANG=C.UTF-8' > /etc/default/locale
rm -f /etc/apt/sources.list
cat > /etc/apt/sources.list.d/debian.sources <<SOURCES
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES

# The certificate authorities the host added (vm/image.py copied them in).
update-ca-certificates >/dev/null

id ina >/dev/null 2>&1 || useradd --create-home --shell /bin/bash --groups sudo ina
echo 'ina:ina' | chpasswd
echo 'ina ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/ina
chmod 440 /etc/sudoers.d/ina
# root has no password ('*': none matches), but is not locked ('!'): sshd refuses a locked
# account even with a key, which the cluster tests' second server needs.
usermod --password '*' root

systemctl enable systemd-networkd.service ina-vm-job.service
# The machine ID is made at every boot; no first-boot questions on the console.
systemctl mask systemd-firstboot.service
: > /etc/machine-id
rm -f /var/lib/dbus/machine-id

# The project, set up as the README says (the image proves the set-up).
cd /home/ina/ina-emulator
./setup.sh
if [ -x /root/bmv2/install.sh ]; then
    /root/bmv2/install.sh
fi
rm -rf /root/bmv2
chown -R ina:ina /home/ina/ina-emulator

apt-get clean
rm -f /usr/sbin/policy-rc.d
# qemu's user networking answers DNS on 10.0.2.3.
echo 'nameserver 10.0.2.3' > /etc/resolv.conf
touch /etc/ina-vm
