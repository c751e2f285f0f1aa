#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_rate: what -F really delivered.  stkrec counts every cpu-clock
# overflow its program sees (STAT sample_events, of any task, before the
# -p/-t/CMD filter) over the CPU time its events were attached (STAT
# sampled_cpu_time_ns); when that rate is below 90% of -F (of at least
# 100 events expected; the kernel
# throttles sampling that costs too much) it says so in one line, and
# stkreport's pprof period is the delivered one, else 1e9 / -F.  Checked at
# the default rate and at the kernel's maximum (perf_event_max_sample_rate),
# which this VM cannot keep up with; the checks are of consistency between
# the counts, the warning and the period, never of how fast this machine is.
# -F above the maximum is refused (record_errors.sh).
#
# Runs alone: sampling every CPU at the kernel's maximum rate for seconds
# would load the machine under other tests' recordings.  A kernel whose
# sampling costs too much lowers kernel.perf_event_max_sample_rate by
# itself (machine-wide, for every later test): the value found is put back
# on exit.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/pprof.sh"
need_pprof_tools

max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
at_exit='[ "$(cat /proc/sys/kernel/perf_event_max_sample_rate)" = "$max" ] ||
	echo "$max" > /proc/sys/kernel/perf_event_max_sample_rate'
for hz in 49 "$max"; do
	f=$tmp/r$hz.stk
	"$REC" -F "$hz" -o "$f" -- "$CW" 1 2> "$tmp/r$hz.err"
	check "-F $hz: recorded" [ $? = 0 ]
	ev=$(stat_of "$f" sample_events)
	ns=$(stat_of "$f" sampled_cpu_time_ns)
	n=$(stat_of "$f" samples)
	check "-F $hz: STAT sample_events ($ev)" [ "$ev" -gt 0 ]
	check "-F $hz: STAT sampled_cpu_time_ns ($ns)" [ "$ns" -gt 0 ]
	check "-F $hz: samples of CMD ($n) are some of the events" [ "$n" -le "$ev" ]
	# On the busiest CPU (an idle one's late timers miss periods):
	# delivered < 90% of -F, of at least 100 expected?
	# busiest < 0.9 * (ns / cpus) * hz / 1e9
	bz=$(stat_of "$f" sample_events_busiest_cpu)
	nc=$(stat_of "$f" sampled_cpus)
	check "-F $hz: STAT sample_events_busiest_cpu ($bz of $ev) and sampled_cpus ($nc)" \
		[ "$bz" -gt 0 -a "$bz" -le "$ev" -a "$nc" -gt 0 ]
	low=$(awk -v e="$bz" -v t="$ns" -v c="$nc" -v h="$hz" \
		'BEGIN { x = t / c * h / 1e9; print (x >= 100 && e < 0.9 * x) ? 1 : 0 }')
	if [ "$low" = 1 ]; then
		want=$(awk -v e="$bz" -v t="$ns" -v c="$nc" 'BEGIN { printf "%d", int(t / c) / e }')
		check "-F $hz, delivered under 90%: one line says so" \
			grep -q "^stkrec: warning: -F $hz: the kernel delivered [0-9]* Hz per CPU" "$tmp/r$hz.err"
	else
		want=$((1000000000 / hz))
		check "-F $hz, delivered 90% or more: no warning" \
			sh -c '! grep -q "the kernel delivered" "$1"' - "$tmp/r$hz.err"
		# Some runs the VM does keep up (a clean-clone CI run got 98%
		# at 100 kHz): then the warning's branch is not reached, which
		# says nothing against stkrec, so it is a note, not a skip that
		# STK_REQUIRE_BPF=1 would turn into a failure.
		[ "$hz" = "$max" ] && echo "note: -F $max: this machine delivered 90% of it; the warning was not exercised"
	fi
	"$REP" -f pprof -o "$tmp/r$hz.pb.gz" "$f" 2> /dev/null
	got=$(decode "$tmp/r$hz.pb.gz" | sed -n 's/^period: //p')
	check "-F $hz: pprof period $got ns, the delivered one ($want)" [ "$got" = "$want" ]
done
finish
