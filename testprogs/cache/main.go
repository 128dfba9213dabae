// SPDX-License-Identifier: Apache-2.0

// Command cache builds the classic leak: a global map holding 100 entries,
// each with its own 1024-byte buffer.
//
//	main.cache  map[string]*Entry (100 entries)
//	            -> map storage -> 100 *Entry -> 100 buf backing arrays (1024 B)
//
// A correct analysis must attribute to main.cache at least the 100 Entry
// objects and 100 buffers, i.e. kept_objects / kept_bytes (which leave out
// the map's internal storage and the key strings apart from a lower bound).
//
// Usage: cache DUMPFILE
package main

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Entry struct {
	id  int
	buf []byte
}

var cache map[string]*Entry

const (
	entries = 100
	bufSize = 1024
)

func main() {
	path := dump.Path(os.Args[1:])

	cache = make(map[string]*Entry)
	for i := 0; i < entries; i++ {
		e := &Entry{id: i, buf: make([]byte, bufSize)}
		for j := range e.buf {
			e.buf[j] = byte(i)
		}
		// 32-byte keys: big enough to stay out of the tiny allocator.
		cache[fmt.Sprintf("session-%024d", i)] = e
	}

	entrySize := int64(unsafe.Sizeof(Entry{}))
	keySize := int64(len(fmt.Sprintf("session-%024d", 0)))
	// Per entry: the Entry, its buffer and its key string. The map storage
	// holds at least a string header and a pointer per entry.
	mapSlot := int64(unsafe.Sizeof("")) + int64(unsafe.Sizeof(uintptr(0)))
	perEntryBytes := entrySize + bufSize + keySize

	facts := dump.NewFacts()
	facts["entries"] = entries
	facts["buf_size"] = bufSize
	facts["key_size"] = keySize
	facts["sizeof_main.Entry"] = entrySize
	facts["offsetof_main.Entry.id"] = int64(unsafe.Offsetof(Entry{}.id))
	facts["offsetof_main.Entry.buf"] = int64(unsafe.Offsetof(Entry{}.buf))
	facts["addr_main.cache"] = dump.Addr(unsafe.Pointer(&cache))
	facts["ptr_main.cache"] = dump.Addr(*(*unsafe.Pointer)(unsafe.Pointer(&cache)))
	facts["kept_objects_main.cache"] = int64(1 + 3*entries)
	facts["kept_bytes_main.cache"] = entries * (perEntryBytes + mapSlot)
	facts["kept_objects"] = facts["kept_objects_main.cache"]
	facts["kept_bytes"] = facts["kept_bytes_main.cache"]

	dump.Write(path)
	runtime.KeepAlive(cache)
	facts.Print()
}
