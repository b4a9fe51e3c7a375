#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A case skipped the way the kselftest harness reports it (no name on the
# "ok N # SKIP" line, only on the RUN line before it): not on
# tests/vm/skips, so the run must go red.
echo "TAP version 13"
echo "1..2"
echo "#  RUN           global.runs ..."
echo "#            OK  global.runs"
echo "ok 1 global.runs"
echo "#  RUN           global.needs_something ..."
echo "#      SKIP      the thing it needs is missing"
echo "#            OK  global.needs_something"
echo "ok 2 # SKIP the thing it needs is missing"
