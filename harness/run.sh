#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make run: build, boot, run the demo (or CMD, with GUEST_FILES under /extra),
# show the output, exit with the status of what ran in the guest.
. "$(dirname "$0")/lib.sh"

"$HARNESS/build.sh"
if [ -n "${CMD:-}" ]; then
	exec "$HARNESS/boot.sh" cmd "${RUN_TIMEOUT:-1800}"
fi
exec "$HARNESS/boot.sh" demo "${RUN_TIMEOUT:-600}"
