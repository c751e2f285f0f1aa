// SPDX-License-Identifier: BSD-2-Clause

// gowork is an allocating Go program for the unwinder's Go test
// (tests/e2e/unwind_go.sh), built at test time when go is installed: its
// garbage collector works on g0's stack, entered through
// runtime.systemstack (and mcall, morestack), whose CFI describes the
// wrong stack once it has switched.
//
//	gowork SECONDS   allocate until the process has used SECONDS of CPU
//	                 time (all its threads), so a recording at F Hz gets
//	                 about SECONDS x F samples however busy the machine is
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

var sink [][]byte

func cpuSeconds() float64 {
	var ru syscall.Rusage

	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

//go:noinline
func alloc(n int) {
	for i := 0; i < n; i++ {
		sink = append(sink[:0], make([]byte, 1<<16))
	}
}

func main() {
	secs := 3.0
	if len(os.Args) > 1 {
		v, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "usage: gowork [SECONDS]")
			os.Exit(2)
		}
		secs = v
	}
	for cpuSeconds() < secs {
		alloc(1000)
	}
}
