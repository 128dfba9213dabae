// SPDX-License-Identifier: Apache-2.0

// Command binfacts prints facts about its own types, globals and one stack
// frame, for the binary reader's end-to-end tests (tests/e2e/test_binary.py):
//
//	sizeof_/offsetof_ main.Entry, main.Inner (with an embedded field)
//	addr_<global>       the address of each package-level variable
//	type_word_<T>       the runtime type word an interface holding T carries
//	seed_main.probe     main.probe's local buf holds seed, seed+1, seed+2, seed+3
//	                    while the heap dump is written (probe is on the stack)
//
// Build it with -gcflags=all=-N -l for the frame check: then buf lives in
// probe's frame at a fixed offset from the frame's CFA.
//
// Usage: binfacts DUMPFILE
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

// Inner is embedded in Entry.
type Inner struct {
	Tag  uint16
	Name string
}

// Entry has an embedded struct, a pointer back to itself and a slice.
type Entry struct {
	Inner
	Next  *Entry
	Vals  []int32
	Score float64
}

var (
	gEntry *Entry
	gCache map[string]*Entry
	gChan  chan *Entry
	gAny   any
	gArr   [3]Entry
)

// words returns the two words of an interface variable.
func words(p unsafe.Pointer) (uint64, uint64) {
	w := (*[2]uintptr)(p)
	return uint64(w[0]), uint64(w[1])
}

//go:noinline
func probe(path string, facts dump.Facts, seed int) {
	var buf [4]uintptr
	for i := range buf {
		buf[i] = uintptr(seed + i)
	}
	facts["seed_main.probe"] = seed
	// only a hint: the stack may be copied before the dump is written
	facts["addr_local_main.probe.buf"] = uint64(uintptr(unsafe.Pointer(&buf)))
	dump.Write(path)
	runtime.KeepAlive(&buf)
}

func main() {
	path := dump.Path(os.Args[1:])
	facts := dump.NewFacts()

	gEntry = &Entry{Inner: Inner{Tag: 7, Name: "e"}, Vals: make([]int32, 3)}
	gEntry.Next = gEntry
	gCache = map[string]*Entry{"a": gEntry}
	gChan = make(chan *Entry, 2)
	gAny = gEntry
	var e any = Inner{Tag: 1}

	facts["sizeof_main.Entry"] = int64(unsafe.Sizeof(Entry{}))
	facts["sizeof_main.Inner"] = int64(unsafe.Sizeof(Inner{}))
	facts["offsetof_main.Entry.Inner"] = int64(unsafe.Offsetof(Entry{}.Inner))
	facts["offsetof_main.Entry.Next"] = int64(unsafe.Offsetof(Entry{}.Next))
	facts["offsetof_main.Entry.Vals"] = int64(unsafe.Offsetof(Entry{}.Vals))
	facts["offsetof_main.Entry.Score"] = int64(unsafe.Offsetof(Entry{}.Score))
	facts["offsetof_main.Inner.Name"] = int64(unsafe.Offsetof(Inner{}.Name))
	facts["sizeof_[3]main.Entry"] = int64(unsafe.Sizeof(gArr))

	facts["addr_main.gEntry"] = dump.Addr(unsafe.Pointer(&gEntry))
	facts["addr_main.gCache"] = dump.Addr(unsafe.Pointer(&gCache))
	facts["addr_main.gChan"] = dump.Addr(unsafe.Pointer(&gChan))
	facts["addr_main.gAny"] = dump.Addr(unsafe.Pointer(&gAny))
	facts["addr_main.gArr"] = dump.Addr(unsafe.Pointer(&gArr))

	t, _ := words(unsafe.Pointer(&gAny))
	facts["type_word_*main.Entry"] = t
	t, _ = words(unsafe.Pointer(&e))
	facts["type_word_main.Inner"] = t

	probe(path, facts, os.Getpid())
	runtime.KeepAlive(e)
	facts.Print()
}
