# SPDX-License-Identifier: GPL-2.0
# The demo of 'make run': a workload, then what recount measured.
ncpu=$(nproc)
all=0-$((ncpu - 1))
echo
echo "=== recount demo on $(uname -r), $ncpu CPUs, kernel.recount=$(cat /proc/sys/kernel/recount)"
echo
getdelays -I || exit 1
echo
recount-demo || exit 1
echo
echo "=== the same for a command, run with getdelays -c"
echo "\$ getdelays -c sh -c 'i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done'"
getdelays -c sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' || exit 1
echo
echo "=== exit records: a listener of every CPU, while 'sleep 1' lets it register"
echo "=== and a shell with a child exits with status 3"
echo "\$ getdelays -m $all -l & sleep 1; sh -c 'sleep 0 & wait; exit 3'"
getdelays -m "$all" -l &
listener=$!
sleep 1
sh -c 'sleep 0 & wait; exit 3'
sleep 1
kill "$listener"
wait "$listener" || exit 1
echo
echo "=== every process, the five that used the most CPU time"
echo "\$ getdelays -D processes -n 5"
getdelays -D processes -n 5 || exit 1
echo
echo "=== every CPU, since boot"
echo "\$ getdelays -D cpus"
getdelays -D cpus || exit 1
echo
echo "=== and as JSON, for scripts"
echo "\$ getdelays --json -P 0"
getdelays --json -P 0 || exit 1
echo
echo "=== what happened in each interval: a shell loop in the background, and"
echo "=== the busiest processes, top-style, twice"
echo "\$ sh -c 'while :; do :; done' & getdelays --top --interval 0.5 --count 2 -n 5"
sh -c 'while :; do :; done' &
spinner=$!
getdelays --top --interval 0.5 --count 2 -n 5 || exit 1
echo
echo "=== every CPU in one interval"
echo "\$ getdelays --interval 0.5 --count 1 -D cpus"
getdelays --interval 0.5 --count 1 -D cpus || exit 1
kill "$spinner"
echo
echo "=== for Prometheus: OpenMetrics of one process"
echo "\$ getdelays --openmetrics -t 1 | head -8"
getdelays --openmetrics -t 1 | head -8
