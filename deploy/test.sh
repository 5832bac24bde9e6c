#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install everything the tests need, build twice (plain, and with
# AddressSanitizer + UndefinedBehaviorSanitizer), and run the whole suite in
# both: unit, pcap (tshark differential and golden), e2e (live NFS through
# network namespaces), fuzz-smoke. Benchmarks are not tests: see README.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh --test
bash deploy/build.sh build
bash deploy/build.sh build-asan -Dsanitize=true -Db_lundef=false
meson test -C build --print-errorlogs --num-processes 2
# The sanitizer run skips e2e: it runs the same binary path live and takes minutes under ASan.
ASAN_OPTIONS=detect_leaks=1 meson test -C build-asan --print-errorlogs --num-processes 2 \
	--no-suite e2e
