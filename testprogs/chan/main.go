// SPDX-License-Identifier: Apache-2.0

// Command chan keeps objects alive only through a buffered channel:
//
//	main.gChan chan *Item (cap 64) -> hchan -> element buffer (64 pointers)
//	                                  -> 40 queued *Item (each 8 + 256 bytes)
//
// 40 items are sent and never received. A correct analysis must attribute
// the 40 Items (and the channel's own storage) to main.gChan.
//
// Usage: chan DUMPFILE
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Item struct {
	ID  int64
	Buf [256]byte
}

const (
	chanCap = 64
	queued  = 40
)

var gChan chan *Item

func main() {
	path := dump.Path(os.Args[1:])

	gChan = make(chan *Item, chanCap)
	var first *Item
	for i := 0; i < queued; i++ {
		it := &Item{ID: int64(i)}
		for j := range it.Buf {
			it.Buf[j] = byte(i + j)
		}
		if first == nil {
			first = it
		}
		gChan <- it
	}

	itemSize := int64(unsafe.Sizeof(Item{}))
	ptrSize := int64(unsafe.Sizeof(uintptr(0)))
	facts := dump.NewFacts()
	facts["chan_cap"] = chanCap
	facts["chan_len"] = len(gChan)
	facts["item_buf_size"] = len(first.Buf)
	facts["sizeof_main.Item"] = itemSize
	facts["addr_main.gChan"] = dump.Addr(unsafe.Pointer(&gChan))
	facts["ptr_main.gChan"] = dump.Addr(*(*unsafe.Pointer)(unsafe.Pointer(&gChan)))
	facts["ptr_first_item"] = dump.Addr(unsafe.Pointer(first))
	// hchan + element buffer + the items. The hchan's size is a runtime
	// detail, so only the element buffer and the items count as bytes.
	facts["kept_objects_main.gChan"] = int64(2 + queued)
	facts["kept_bytes_main.gChan"] = chanCap*ptrSize + queued*itemSize
	facts["kept_objects"] = facts["kept_objects_main.gChan"]
	facts["kept_bytes"] = facts["kept_bytes_main.gChan"]
	first = nil

	dump.Write(path)
	runtime.KeepAlive(gChan)
	facts.Print()
}
