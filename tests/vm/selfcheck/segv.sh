#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A program that crashes after its first result, before its plan is met.
echo "1..3"
echo "ok 1 before the crash"
kill -SEGV $$
echo "ok 2 never printed"
