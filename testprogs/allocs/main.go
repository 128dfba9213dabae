// SPDX-License-Identifier: Apache-2.0

// Command allocs records every allocation in the memory profile
// (runtime.MemProfileRate = 1), allocates from a few sites of known sizes, keeps
// some objects and drops others, then writes at one moment both a heap dump and the
// runtime's own heap profile (runtime/pprof.WriteHeapProfile) to DUMPFILE.heap: the
// profile heapref rebuilds from the dump's memory-profile records must give the
// runtime's in-use figures per allocation stack. newPair and newConn are left for the
// compiler to inline (it does, in a default build): their allocations are sites whose
// leaf frames are inlined, main.newConn inlined into main.newPair inlined into
// main.main, which the runtime's profile names function by function.
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

type conn struct{ buf []byte }

type pair struct {
	c    *conn
	name string
}

var (
	keptBufs   [][]byte
	keptSmall  []*small
	keptLarge  [][]byte
	keptPairs  []*pair
	sinkBuffer []byte
)

//go:noinline
func allocBuf(n int) []byte { return make([]byte, n) }

//go:noinline
func allocSmall() *small { return &small{} }

//go:noinline
func allocLarge() []byte { return make([]byte, 100<<10) }

func newConn() *conn { return &conn{buf: make([]byte, connBuf)} }

func newPair() *pair { return &pair{c: newConn()} }

const (
	bufs     = 300
	bufSize  = 4096
	smalls   = 500
	larges   = 7
	pairs    = 200
	connBuf  = 1024
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
	for i := 0; i < pairs; i++ {
		p := newPair()
		if i%keptEach == 0 {
			keptPairs = append(keptPairs, p)
		}
	}
	sinkBuffer = nil

	facts := dump.NewFacts()
	facts["bufs"] = bufs
	facts["buf_size"] = bufSize
	facts["smalls"] = smalls
	facts["larges"] = larges
	facts["pairs"] = pairs
	facts["conn_buf"] = connBuf
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
	runtime.KeepAlive(keptPairs)
	facts.Print()
}
