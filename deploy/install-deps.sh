#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Installs what tracehound needs to build, run and test on Debian 12.
# Idempotent: packages already present are left alone, and the script says
# which ones it installs. Run as root.
#
#   deploy/install-deps.sh          build + run (capture demo)
#   deploy/install-deps.sh --test   also the test tools (tshark, nfs-ganesha, libnfs, ...)
set -euo pipefail

build_pkgs=(build-essential meson ninja-build pkg-config libdpdk-dev dpdk libpcap-dev liburing-dev liblz4-dev
	    libcmocka-dev python3-pyelftools)
test_pkgs=(tshark nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils libnfs-dev iproute2 ethtool
	   clang valgrind lz4 fio ioping util-linux)

want=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then
	want+=("${test_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
	echo "install-deps: all ${#want[@]} packages already installed"
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	echo "install-deps: need root to install: ${missing[*]}" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
