#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded libFuzzer run for the test suite.
# Usage: run_fuzz.sh FUZZER WORK_CORPUS SEED_CORPUS [libFuzzer flags...]
# libFuzzer adds the inputs it finds to the first corpus directory it is
# given: that is WORK_CORPUS in the build directory, so the committed seeds in
# the source tree are only read, never written.
set -eu
fuzzer=$1
work=$2
seeds=$3
shift 3
mkdir -p "$work"
# libFuzzer exits 77 on a crash by default, which meson counts as a skip:
# a finding must fail the test
exec "$fuzzer" -error_exitcode=1 "$@" "$work" "$seeds"
