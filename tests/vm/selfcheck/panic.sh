#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest kernel crashes in the middle of a passing program.
echo "1..2"
echo "ok 1 before the panic"
echo c >/proc/sysrq-trigger
echo "ok 2 never printed"
