#!/usr/bin/env bash
# The resource limits with real cgroup v2: boots Debian's kernel package
# under qemu with a small initramfs (busybox-static, the static glove and
# limits-hog, gloved, tests/limits/vm-init.sh as PID 1, vm-guest-tests.sh) in which
# cgroup2 holds every controller, runs the limit tests there and reads their
# results from the serial console.
#
#   vm-cgroup.sh GLOVE HOG FAULT WORKDIR
#
# FAULT is tests/fault/fault-inject (static), for the doctor checks that
# take a step away (a system call failing) inside the guest.
# The kernel comes from `apt-get download` of the package linux-image-amd64
# depends on, unpacked with dpkg-deb into WORKDIR (never installed on the
# host); qemu-system-x86 and busybox-static come from scripts/install-deps.
# A second boot of the same kernel runs only vm-guest-sd254.sh, 'glove
# daemon' under systemd 254 (DelegateSubgroup=), whose packages come from
# Debian's bookworm-backports the same way, with an apt configuration of
# the test's own in WORKDIR (the host's apt is not touched).
# KVM when /dev/kvm is usable, else software emulation (tcg). Skips (77)
# only when qemu is not installed; with GLOVE_TESTS_MUST_WORK=1 that fails.
set -euo pipefail

if [ $# -ne 4 ]; then
        echo "usage: $0 GLOVE HOG FAULT WORKDIR" >&2
        exit 2
fi
glove=$(realpath "$1")
hog=$(realpath "$2")
fault=$(realpath "$3")
work=$4
here=$(cd "$(dirname "$0")" && pwd)

skip() {
        if [ "${GLOVE_TESTS_MUST_WORK:-0}" = 1 ]; then
                echo "not ok - $1 (GLOVE_TESTS_MUST_WORK=1 forbids skipping)"
                exit 1
        fi
        echo "# skip: $1"
        exit 77
}
fail() {
        echo "not ok - $1"
        echo "0 passed, 1 failed"
        exit 1
}

qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || skip "qemu-system-x86_64 is not installed (scripts/install-deps installs qemu-system-x86)"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && file -L "$busybox" | grep -Eq "static(-pie)? linked|statically linked" ||
        fail "busybox-static is not installed (scripts/install-deps installs it)"
file -L "$glove" | grep -Eq "static(-pie)? linked|statically linked" || fail "$glove is not a static binary (the VM has no libraries)"

mkdir -p "$work"
# One kernel, fetched once. A lock keeps concurrent runs from fetching twice.
exec 9>"$work/.lock"
flock 9
kernel=$(ls "$work"/kroot/boot/vmlinuz-* 2>/dev/null | head -n 1 || true)
if [ -z "$kernel" ]; then
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
        [ -n "$pkg" ] || fail "cannot tell which kernel package linux-image-amd64 depends on (apt-cache depends)"
        echo "# fetching $pkg with apt-get download into $work"
        rm -rf "$work/dl" "$work/kroot"
        mkdir -p "$work/dl"
        (cd "$work/dl" && apt-get download "$pkg" >/dev/null 2>"$work/dl/err") ||
                fail "apt-get download $pkg failed: $(cat "$work/dl/err")"
        dpkg-deb -x "$work"/dl/*.deb "$work/kroot.tmp"
        # only the kernel image is needed: the guest loads no modules
        mkdir -p "$work/kroot/boot"
        mv "$work"/kroot.tmp/boot/vmlinuz-* "$work"/kroot.tmp/boot/config-* "$work/kroot/boot/"
        rm -rf "$work/kroot.tmp" "$work/dl"
        kernel=$(ls "$work"/kroot/boot/vmlinuz-* | head -n 1)
fi
# systemd 254 for the second boot, fetched once too: bookworm has 252,
# bookworm-backports 254. apt reads only the test's own sources list,
# lists and cache (in WORKDIR/apt); nothing is installed.
sd254="$work/sd254"
if [ ! -x "$sd254/lib/systemd/systemd" ] || [ ! -x "$sd254/bin/systemctl" ]; then
        echo "# fetching systemd 254 from bookworm-backports with apt-get download into $work"
        a="$work/apt"
        rm -rf "$a" "$sd254" "$sd254.tmp"
        mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/parts" "$a/prefs" "$a/dl"
        printf '%s\n' 'deb http://deb.debian.org/debian bookworm main' \
                'deb http://deb.debian.org/debian bookworm-backports main' >"$a/sources.list"
        aopts=(-o "Dir::Etc::SourceList=$a/sources.list" -o "Dir::Etc::SourceParts=$a/parts"
                -o "Dir::Etc::Preferences=$a/prefs/none" -o "Dir::Etc::PreferencesParts=$a/prefs"
                -o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache" -o APT::Sandbox::User=root)
        apt-get "${aopts[@]}" -q update >/dev/null 2>"$a/err" ||
                fail "apt-get update of bookworm-backports (the test's own sources list) failed: $(cat "$a/err")"
        (cd "$a/dl" && apt-get "${aopts[@]}" download systemd/bookworm-backports \
                libsystemd-shared/bookworm-backports libsystemd0/bookworm-backports >/dev/null 2>"$a/err") ||
                fail "apt-get download of systemd 254 from bookworm-backports failed: $(cat "$a/err")"
        for deb in "$a"/dl/*.deb; do dpkg-deb -x "$deb" "$sd254.tmp"; done
        mv "$sd254.tmp" "$sd254"
        rm -rf "$a"
fi
flock -u 9

# The initramfs, rebuilt every run (it holds this build's glove).
t=$(mktemp -d "$work/run.XXXXXX")
trap 'rm -rf "$t"' EXIT
# copy_elf ROOT FILE [DEST [LIBPATH]]: FILE at DEST (else its own path) in
# ROOT, with the libraries it links (searched first in LIBPATH)
copy_elf() {
        local root=$1 file=$2 dest=${3:-$2} libpath=${4:-} lib libs
        mkdir -p "$root$(dirname "$dest")"
        cp -L "$file" "$root$dest"
        libs=$(LD_LIBRARY_PATH=$libpath ldd "$file") || fail "ldd $file failed"
        ! grep -q 'not found' <<<"$libs" || fail "$file links libraries this host lacks: $libs"
        for lib in $(awk '$3 ~ /^\// { print $3 } $1 ~ /^\/lib64\// { print $1 }' <<<"$libs"); do
                # a library of the unpacked packages goes where the package puts it
                dest=$lib
                [ -n "$libpath" ] && case $lib in "$sd254"/*) dest=${lib#"$sd254"} ;; esac
                mkdir -p "$root$(dirname "$dest")"
                cp -L "$lib" "$root$dest"
        done
}
# base_root ROOT GUEST: what every boot has; GUEST runs as /glove/guest.sh
base_root() {
        local root=$1
        mkdir -p "$root"/{bin,etc,glove,root,proc,sys,dev,tmp}
        install -m 755 "$busybox" "$root/bin/busybox"
        ln -s busybox "$root/bin/sh"
        install -m 755 "$here/vm-init.sh" "$root/init"
        install -m 755 "$glove" "$root/glove/glove"
        # gloved, static like glove and built beside it, for 'glove daemon'
        install -m 755 "$(dirname "$glove")/gloved" "$root/glove/gloved"
        install -m 755 "$hog" "$root/glove/limits-hog"
        install -m 755 "$fault" "$root/glove/fault-inject"
        install -m 644 "$2" "$root/glove/guest.sh"
        install -m 644 "$here/vm-guest-lib.sh" "$root/glove/guest-lib.sh"
        printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home/nobody:/bin/sh\n' >"$root/etc/passwd"
        printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
        chmod 700 "$root/root"
}
user_units="default.target basic.target sockets.target timers.target paths.target exit.target shutdown.target
        app.slice background.slice session.slice"

root="$t/root"
base_root "$root" "$here/vm-guest-tests.sh"
# The systemd user manager, for the transient-scope check, when this host
# has systemd installed: its binary, the libraries it links and the user
# units default.target needs. Without it the guest says so and skips that
# part (a "#" line, no pass, no fail).
systemd_bin=/lib/systemd/systemd
if [ -x "$systemd_bin" ]; then
        mkdir -p "$root/usr/lib/systemd/user"
        copy_elf "$root" "$systemd_bin" /lib/systemd/systemd
        for u in $user_units; do
                [ -e "/usr/lib/systemd/user/$u" ] && cp -L "/usr/lib/systemd/user/$u" "$root/usr/lib/systemd/user/"
        done
        # a session bus too, when there is dbus-daemon: the manager starts
        # it on demand (dbus.socket), as on a desktop, and the scope request
        # goes over it (Hello, a destination)
        if [ -x /usr/bin/dbus-daemon ] && [ -e /usr/lib/systemd/user/dbus.socket ] &&
                [ -e /usr/share/dbus-1/session.conf ]; then
                mkdir -p "$root/usr/share/dbus-1" "$root/usr/lib/systemd/user/sockets.target.wants"
                cp -L /usr/lib/systemd/user/dbus.socket /usr/lib/systemd/user/dbus.service "$root/usr/lib/systemd/user/"
                ln -s ../dbus.socket "$root/usr/lib/systemd/user/sockets.target.wants/dbus.socket"
                cp -L /usr/share/dbus-1/session.conf "$root/usr/share/dbus-1/"
                copy_elf "$root" /usr/bin/dbus-daemon
        fi
        # systemctl, which 'glove daemon' executes (from /usr/bin)
        [ -x /usr/bin/systemctl ] && copy_elf "$root" /usr/bin/systemctl
        # /lib is a directory of its own in the initramfs; /usr/lib holds the units
        [ -e "$root/lib64" ] || ln -s lib "$root/lib64" 2>/dev/null || true
fi
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$t/initrd.gz"

# The second boot's: systemd 254's manager, systemctl and libraries at the
# standard paths, its user units, and vm-guest-sd254.sh
root="$t/root254"
base_root "$root" "$here/vm-guest-sd254.sh"
sdlib="$sd254/usr/lib/x86_64-linux-gnu/systemd:$sd254/usr/lib/x86_64-linux-gnu:$sd254/lib/x86_64-linux-gnu"
mkdir -p "$root/usr/lib/systemd/user"
copy_elf "$root" "$sd254/lib/systemd/systemd" /lib/systemd/systemd "$sdlib"
copy_elf "$root" "$sd254/bin/systemctl" /usr/bin/systemctl "$sdlib"
for u in $user_units; do
        cp -L "$sd254/usr/lib/systemd/user/$u" "$root/usr/lib/systemd/user/" || fail "systemd 254 has no user unit $u"
done
[ -e "$root/lib64" ] || ln -s lib "$root/lib64"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$t/initrd254.gz"

# KVM only when it really runs a guest: /dev/kvm can exist where nested
# virtualisation fails (qemu aborts, or the guest never prints). A tiny
# guest that prints one line decides, within 10 s; GLOVE_VM_ACCEL=tcg|kvm
# overrides.
accel=${GLOVE_VM_ACCEL:-}
if [ -z "$accel" ]; then
        accel=tcg
        if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
                mkdir -p "$t/probe/bin"
                install -m 755 "$busybox" "$t/probe/bin/busybox"
                printf '#!/bin/busybox sh\n/bin/busybox echo GLOVE-VM-PROBE\n/bin/busybox poweroff -f\n' >"$t/probe/init"
                chmod 755 "$t/probe/init"
                (cd "$t/probe" && find . | cpio -o -H newc --quiet | gzip -1) >"$t/probe.gz"
                timeout -k 2 10 "$qemu" -accel kvm -m 256 -nodefaults -display none -no-reboot -kernel "$kernel" \
                        -initrd "$t/probe.gz" -append "console=ttyS0 panic=-1 quiet rdinit=/init" \
                        -serial "file:$t/probe.log" -monitor none </dev/null >/dev/null 2>&1 || true
                grep -q GLOVE-VM-PROBE "$t/probe.log" 2>/dev/null && accel=kvm
        fi
fi
# boot NAME INITRD SECONDS: runs the guest, prints its lines; its
# VM-RESULT in $result
boot() {
        local log="$t/console-$1.log" rc=0 start=$SECONDS
        echo "# $1: booting $(basename "$kernel") under qemu ($accel)"
        timeout -k 10 "$3" "$qemu" -accel "$accel" -m 2048 -smp 2 -nodefaults -display none -no-reboot \
                -kernel "$kernel" -initrd "$2" \
                -append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init" \
                -serial "file:$log" -monitor none </dev/null || rc=$?
        tr -d '\r' <"$log" >"$log.txt" || true
        grep -E '^(ok|not ok|#|VM-)' "$log.txt" || true
        if ! grep -q '^VM-RESULT ' "$log.txt"; then
                echo "# --- console (last 40 lines) ---"
                tail -n 40 "$log.txt" | sed 's/^/# /'
                fail "$1: the guest did not report a result (qemu exit status $rc)"
        fi
        result=$(sed -n 's/^VM-RESULT //p' "$log.txt" | tail -n 1)
        echo "$1: $result ($((SECONDS - start)) s)"
}
# the whole run is bounded, so that a loaded host does not cut it short
boot "systemd 252" "$t/initrd.gz" 480
result252=$result
boot "systemd 254" "$t/initrd254.gz" 240
case $result252 in *" 0 failed") ;; *) exit 1 ;; esac
case $result in *" 0 failed") exit 0 ;; *) exit 1 ;; esac
