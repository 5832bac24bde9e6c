#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Disk full and read-only: segments on a 2 MiB tmpfs until it is full, then on
# a read-only tmpfs. Needs the right to mount (root); exits 77 (skip) without.
set -euo pipefail
tool=$1
mnt=$(mktemp -d /tmp/th_segfull.XXXXXX)
ro=$(mktemp -d /tmp/th_segro.XXXXXX)
cleanup() {
	umount "$mnt" 2>/dev/null || true
	umount "$ro" 2>/dev/null || true
	rmdir "$mnt" "$ro" 2>/dev/null || true
}
trap cleanup EXIT
if ! mount -t tmpfs -o size=2m tmpfs "$mnt" 2>/dev/null; then
	echo "cannot mount a tmpfs (not root?): skipped"
	exit 77
fi
"$tool" diskfull "$mnt"
mount -t tmpfs -o size=1m,ro tmpfs "$ro"
"$tool" readonly "$ro"
