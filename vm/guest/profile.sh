# /etc/profile.d/ina-vm.sh: on the serial console (make vm-shell), take the host
# terminal's size from the kernel command line (ina.cols=, ina.rows=), which the
# serial line cannot carry, and start in the project.
if [ "$(tty)" = /dev/ttyS0 ]; then
    for arg in $(cat /proc/cmdline); do
        case "$arg" in
            ina.cols=*) stty cols "${arg#ina.cols=}" ;;
            ina.rows=*) stty rows "${arg#ina.rows=}" ;;
        esac
    done
    export TERM=${TERM:-vt220}
    [ "$TERM" = linux ] && export TERM=vt220
    cd ~/ina-emulator 2>/dev/null || true
    echo "ina-vm: the project is in ~/ina-emulator (sudo make test); leave with sudo poweroff"
fi
