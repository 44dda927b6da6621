# SPDX-License-Identifier: GPL-2.0
# The demo of 'make run': a workload, then what recount measured.
echo
echo "=== recount demo on $(uname -r), $(nproc) CPUs, kernel.recount=$(cat /proc/sys/kernel/recount)"
echo
recount-demo || exit 1
echo
echo "=== the same for a command, run with getdelays -c"
echo "\$ getdelays -c sh -c 'i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done'"
getdelays -c sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' || exit 1
echo
echo "=== per CPU, since boot"
for cpu in $(seq 0 $(($(nproc) - 1))); do
	getdelays -C "$cpu" || exit 1
done
