#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Configure (once) and build a build directory.
#   deploy/build.sh [DIR [MESON-OPTIONS...]]     default DIR: build
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [[ ! -f "$dir/build.ninja" ]]; then
	meson setup "$dir" "$@"
fi
ninja -C "$dir"
