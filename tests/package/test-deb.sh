#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package on a clean Debian root: scripts/package-deb builds it
# (in BUILD_DIR/deb); debootstrap makes a minbase root of this host's
# release from deb.debian.org, its packages cached as a tarball in
# BUILD_DIR/debootstrap (reruns fetch nothing); in a chroot of it, in a
# mount namespace of this test's own with the root bind-mounted on itself
# and /proc, /sys and /dev mounted, as the sandbox needs them (unmounted by
# a trap), `dpkg -i` installs it,
# /usr/bin/glove setup and glove exec -- true work, and `dpkg -r glove`
# leaves none of the files `dpkg -L` listed that were not there before.
# Skipped (77) only when the mirror cannot be reached and nothing is cached.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { echo "# needs root (debootstrap, chroot, dpkg)"; exit 77; }
for tool in debootstrap dpkg-deb unshare chroot; do
    command -v "$tool" >/dev/null || { echo "not ok - $tool is missing (scripts/install-deps installs it)"; exit 1; }
done
. /etc/os-release
suite=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
mirror=http://deb.debian.org/debian
cache=$BUILD_DIR/debootstrap
tarball=$cache/$suite-minbase.tgz
mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
    if ! curl -sSf -o /dev/null --max-time 20 "$mirror/dists/$suite/Release"; then
        echo "# $mirror cannot be reached and no tarball is cached in $cache: skipped"
        exit 77
    fi
    echo "# fetching Debian $suite (minbase) into $tarball"
    OUT=$(debootstrap --variant=minbase --make-tarball="$tarball.part" "$suite" "$T/fetch" "$mirror" 2>&1); rc=$?
    check "debootstrap fetches $suite into a tarball" eval '[ $rc = 0 ]'
    [ $rc = 0 ] || { finish; exit 1; }
    mv "$tarball.part" "$tarball"
fi

OUT=$("$SOURCE_DIR/scripts/package-deb" "$BUILD_DIR/deb" 2>&1); rc=$?
deb=$(printf '%s\n' "$OUT" | tail -1)
check "scripts/package-deb builds a .deb" eval '[ $rc = 0 ] && [ -f "$deb" ]'
[ $rc = 0 ] || { finish; exit 1; }
OUT=$(dpkg-deb -f "$deb" Package Version Depends Maintainer Description)
check "its control names glove $GLOVE_VERSION, a libc6 dependency and a maintainer" \
    eval '[[ $OUT == *"Package: glove"* && $OUT == *"Version: $GLOVE_VERSION"* && $OUT == *"Depends: libc6 (>= "* && $OUT == *"Maintainer: "?* ]]'

root=$T/root
OUT=$(debootstrap --variant=minbase --unpack-tarball="$tarball" "$suite" "$root" "$mirror" 2>&1); rc=$?
check "debootstrap makes a clean $suite root from the cached tarball" eval '[ $rc = 0 ] && [ -x "$root/usr/bin/dpkg" ]'
[ $rc = 0 ] || { finish; exit 1; }
cp "$deb" "$root/tmp/glove.deb"

# Everything in the root but /proc, /sys, /dev and the package itself: what
# was there before the package came
(cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev \) -prune -o -print | sort) >"$T/before"

# The part inside the root, in a mount namespace of its own whose root it
# becomes with pivot_root, not chroot: the kernel refuses a user namespace
# (the sandbox's first step) to a chrooted process (EPERM), and Glove
# finds each file's file system in /proc/self/mountinfo, which needs the
# root to be a mount. The namespace's mounts go with it; the trap
# unmounts them on every way out before that.
cat >"$root/tmp/inside.sh" <<'INNER'
set -u
trap 'umount -R /dev /sys /proc 2>/dev/null' EXIT
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
umount -l /.oldroot 2>/dev/null
echo "== dpkg -i"; dpkg -i /tmp/glove.deb || exit 10
echo "== dpkg -L"; dpkg -L glove >/tmp/dpkg-L || exit 11
echo "== setup"; /usr/bin/glove setup || exit 12
mkdir -p /root/work && cd /root/work || exit 13
echo "== exec"; /usr/bin/glove exec -- true || exit 13
echo "== exec echo"; out=$(glove exec -- sh -c 'echo inside $(id -u)') || exit 14
[ "$out" = "inside 0" ] || { echo "glove exec printed '$out'"; exit 14; }
echo "== man"; for m in man1/glove.1 man1/gloved.1 man5/glove-policy.5; do gzip -t "/usr/share/man/$m.gz" || exit 15; done
echo "== dpkg -r"; dpkg -r glove || exit 16
exit 0
INNER
cat >"$T/in-ns.sh" <<'INNER'
set -eu
root=$1
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
# the root shares the host's uids, so it shares the host's uid locks too:
# a root run inside takes a host uid of its own under /run/glove/uid, and
# with a lock directory of its own it could pick one a run outside holds
install -d -m 0755 /run/glove && install -d -m 0700 /run/glove/uid
mkdir -p "$root/run/glove/uid"
mount --bind /run/glove/uid "$root/run/glove/uid"
mkdir -p "$root/.oldroot"
cd "$root"
pivot_root . .oldroot
exec /usr/bin/env -i /bin/sh /tmp/inside.sh
INNER
OUT=$(unshare --mount --propagation private bash "$T/in-ns.sh" "$root" 2>&1); rc=$?
check "in the root: dpkg -i, glove setup, glove exec -- true, glove exec as uid 0 inside, dpkg -r (each step in order)" \
    eval '[ $rc = 0 ]'
OUT=$(grep -c . "$root/tmp/dpkg-L" 2>&1)
check "dpkg -L glove listed the package's files" grep -qx /usr/bin/glove "$root/tmp/dpkg-L"
[ -s "$root/tmp/dpkg-L" ] || echo /usr/bin/glove >"$root/tmp/dpkg-L" # no list: at least the program must be gone
left=$(while read -r p; do
    [ -e "$root$p" ] || [ -L "$root$p" ] || continue
    grep -qxF -- ".$p" "$T/before" || echo "$p"
done <"$root/tmp/dpkg-L")
OUT="left behind: $left"
check "dpkg -r glove leaves none of its files behind" test -z "$left"
OUT=$(grep -c "" "$T/before")
check "nothing is left mounted in the root" eval '! grep -q " $root/" /proc/self/mountinfo'
finish
