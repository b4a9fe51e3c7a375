#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A failing case among passing ones.
echo "1..3"
echo "ok 1 first"
echo "not ok 2 deliberately failing"
echo "ok 3 third"
exit 1
