#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a cmocka test binary and passes its TAP output on, with cmocka 1.1's
# line for a skip(), "not ok N # SKIP name", turned into the TAP skip
# "ok N - name # SKIP", which meson counts as a skip (it counts "not ok ...
# # SKIP" as a failure).  Usage: tap-skip.sh TEST [ARGS...]; the exit status
# is TEST's (cmocka exits 0 when tests were only skipped).
set -o pipefail
"$@" | sed -u 's/^not ok \([0-9][0-9]*\) # SKIP \(.*\)$/ok \1 - \2 # SKIP/'
