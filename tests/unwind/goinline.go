// SPDX-License-Identifier: BSD-2-Clause

// goinline is a Go program for stkreport's Go DWARF test
// (tests/e2e/report_go.sh), built at test time when go is installed: its
// hot loop, main.spin, calls main.mix, which the compiler inlines (go
// build -gcflags=-m says "inlining call to mix"), and does about as much
// work of its own, a division, between the calls.  It runs until it is
// killed.
package main

import "fmt"

var sink uint64

// mix is small enough for the compiler to inline.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 29
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

//go:noinline
func spin(n int) {
	x := sink
	for i := 0; i < n; i++ {
		x = mix(x + uint64(i))
		x += x / (uint64(i) | 1)
	}
	sink = x
}

func main() {
	for {
		spin(1 << 20)
		if sink == 1 {
			fmt.Println(sink)
		}
	}
}
