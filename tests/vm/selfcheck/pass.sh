#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Control case: a program that passes, so the self-check is not vacuous.
echo "1..2"
insmod "$SOFTCM_KO" && echo "ok 1 module loads" || echo "not ok 1 module loads"
rmmod softcm && echo "ok 2 module unloads" || echo "not ok 2 module unloads"
