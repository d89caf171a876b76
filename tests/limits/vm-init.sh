#!/bin/busybox sh
# PID 1 of the limit-test VM (tests/limits/vm-cgroup.sh builds the
# initramfs around it). Stage 1 copies the initramfs into a tmpfs and
# switch_roots there: pivot_root, which the sandbox uses, refuses a rootfs
# root. Stage 2 mounts what Glove needs, cgroup2 with every controller (no
# cgroup v1 here), runs the guest tests and powers off; everything goes to
# the serial console.
/bin/busybox mkdir -p /proc /sys /dev /tmp /newroot
if [ ! -e /.stage2 ]; then
        /bin/busybox mount -t tmpfs -o size=256M,mode=0755 root /newroot
        for d in bin etc glove root lib lib64 usr; do [ -e "/$d" ] && /bin/busybox cp -a "/$d" /newroot/; done
        /bin/busybox cp -a /init /newroot/init
        /bin/busybox mkdir -p /newroot/proc /newroot/sys /newroot/dev /newroot/tmp
        /bin/busybox touch /newroot/.stage2
        exec /bin/busybox switch_root /newroot /init
fi
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs -o mode=1777 tmp /tmp
mkdir -p /run && mount -t tmpfs -o mode=0755 run /run
mount -t cgroup2 none /sys/fs/cgroup
echo "VM-BOOTED kernel $(uname -r), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
sh /glove/guest.sh
echo "VM-EXIT $?"
sync
poweroff -f
