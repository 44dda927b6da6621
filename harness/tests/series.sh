#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The series exports, applies in order onto the pristine tree, reproduces the
# prepared tree, and has no checkpatch --strict errors.
exec "$(dirname "$0")/../series.sh"
