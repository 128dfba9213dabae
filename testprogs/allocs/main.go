// SPDX-License-Identifier: Apache-2.0

// Command allocs records every allocation in the memory profile
// (runtime.MemProfileRate = 1), allocates from a few sites of known sizes, keeps
// some objects and drops others, then writes at one moment both a heap dump and the
// runtime's own heap profile (runtime/pprof.WriteHeapProfile) to DUMPFILE.heap: the
// profile heapref rebuilds from the dump's memory-profile records must give the
// runtime's in-use figures per allocation stack.
//
// Usage: allocs DUMPFILE
package main

import (
	"os"
	"runtime"
	"runtime/pprof"

	"heapref/testprogs/internal/dump"
)

type small struct{ a, b, c *int }

var (
	keptBufs   [][]byte
	keptSmall  []*small
	keptLarge  [][]byte
	sinkBuffer []byte
)

//go:noinline
func allocBuf(n int) []byte { return make([]byte, n) }

//go:noinline
func allocSmall() *small { return &small{} }

//go:noinline
func allocLarge() []byte { return make([]byte, 100<<10) }

const (
	bufs     = 300
	bufSize  = 4096
	smalls   = 500
	larges   = 7
	keptEach = 3 // one in keptEach of each kind is kept
)

func main() {
	runtime.MemProfileRate = 1
	path := dump.Path(os.Args[1:])

	for i := 0; i < bufs; i++ {
		b := allocBuf(bufSize)
		if i%keptEach == 0 {
			keptBufs = append(keptBufs, b)
		} else {
			sinkBuffer = b
		}
	}
	for i := 0; i < smalls; i++ {
		s := allocSmall()
		if i%keptEach == 0 {
			keptSmall = append(keptSmall, s)
		}
	}
	for i := 0; i < larges; i++ {
		l := allocLarge()
		if i%keptEach == 0 {
			keptLarge = append(keptLarge, l)
		}
	}
	sinkBuffer = nil

	facts := dump.NewFacts()
	facts["bufs"] = bufs
	facts["buf_size"] = bufSize
	facts["smalls"] = smalls
	facts["larges"] = larges
	facts["kept_each"] = keptEach
	facts["kept_objects"] = int64(0)
	facts["kept_bytes"] = int64(0)

	dump.Write(path) // two GCs, then the dump: the profile's active cycle is settled
	f, err := os.Create(path + ".heap")
	if err != nil {
		dump.Fail(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		dump.Fail(err)
	}
	if err := f.Close(); err != nil {
		dump.Fail(err)
	}
	runtime.KeepAlive(keptBufs)
	runtime.KeepAlive(keptSmall)
	runtime.KeepAlive(keptLarge)
	facts.Print()
}
