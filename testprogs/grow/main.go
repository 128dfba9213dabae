// SPDX-License-Identifier: Apache-2.0

// Command grow writes two heap dumps of one run, before and after it adds entries
// to one map global, for `heapref diff`:
//
//	main.cache  map[int64]*Entry: base entries at the first dump, base+added at the
//	            second; made with room for all of them, so adding entries allocates
//	            no map storage, only each Entry and its buf (buf_size bytes)
//	main.other  map[int64]*Entry, otherEntries entries, untouched between the dumps
//	main.list   []*Entry, listEntries entries, untouched
//
// Between the dumps main.cache's chain must grow by exactly added Entries and added
// buffers (at their size classes) and the program's other chains not at all. The
// entries are added in a function of their own, so main's frame is the same at both
// dumps.
//
// Usage: grow DUMPFILE (the second dump goes to DUMPFILE.2)
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Entry struct {
	id  int
	buf []byte
}

var (
	cache map[int64]*Entry
	other map[int64]*Entry
	list  []*Entry
)

const (
	base         = 64
	added        = 128
	otherEntries = 16
	listEntries  = 8
	bufSize      = 1000 // in the 1024-byte size class
)

func newEntry(i int) *Entry {
	e := &Entry{id: i, buf: make([]byte, bufSize)}
	for j := range e.buf {
		e.buf[j] = byte(i)
	}
	return e
}

//go:noinline
func fill(m map[int64]*Entry, from, to int) {
	for i := from; i < to; i++ {
		m[int64(i)] = newEntry(i)
	}
}

func main() {
	path := dump.Path(os.Args[1:])

	cache = make(map[int64]*Entry, base+added)
	other = make(map[int64]*Entry, otherEntries)
	fill(cache, 0, base)
	fill(other, 0, otherEntries)
	for i := 0; i < listEntries; i++ {
		list = append(list, newEntry(i))
	}

	facts := dump.NewFacts()
	facts["base"] = base
	facts["added"] = added
	facts["other_entries"] = otherEntries
	facts["list_entries"] = listEntries
	facts["buf_size"] = bufSize
	facts["sizeof_main.Entry"] = int64(unsafe.Sizeof(Entry{}))
	facts["second_dump"] = path + ".2"

	dump.Write(path)
	fill(cache, base, base+added)
	dump.Write(path + ".2")
	runtime.KeepAlive(cache)
	runtime.KeepAlive(other)
	runtime.KeepAlive(list)
	facts.Print()
}
