//go:build !unix

package main

import "time"

// cpuTime returns -1: this system's CPU time is not read.
func cpuTime() time.Duration { return -1 }
