// SPDX-License-Identifier: Apache-2.0

// Command shared keeps one big buffer alive from two globals at once, besides a
// buffer of each one's own:
//
//	main.a  *Holder -> own (ownA bytes), shared (bigSize bytes)
//	main.b  *Holder -> own (ownB bytes), shared (the same buffer)
//
// Freeing main.a alone would free its Holder and its own buffer, not the shared
// one, which main.b still reaches: neither retains the shared buffer, the two
// together do. main.c holds a list of listLen nodes that nothing else reaches: it
// retains all of them.
//
// Usage: shared DUMPFILE
package main

import (
	"os"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Holder struct {
	shared []byte
	own    []byte
}

type Node struct {
	next *Node
	data [48]byte
}

var a, b *Holder

var c *Node

const (
	bigSize = 1 << 20
	ownA    = 64 << 10
	ownB    = 32 << 10
	listLen = 1000
)

func main() {
	path := dump.Path(os.Args[1:])

	big := make([]byte, bigSize)
	a = &Holder{shared: big, own: make([]byte, ownA)}
	b = &Holder{shared: big, own: make([]byte, ownB)}
	for i := 0; i < listLen; i++ {
		c = &Node{next: c}
	}

	facts := dump.NewFacts()
	facts["big_size"] = bigSize
	facts["own_a"] = ownA
	facts["own_b"] = ownB
	facts["list_len"] = listLen
	facts["sizeof_main.Holder"] = int64(unsafe.Sizeof(Holder{}))
	facts["sizeof_main.Node"] = int64(unsafe.Sizeof(Node{}))
	facts["ptr_main.a"] = dump.Addr(unsafe.Pointer(a))
	facts["ptr_main.b"] = dump.Addr(unsafe.Pointer(b))
	facts["ptr_main.c"] = dump.Addr(unsafe.Pointer(c))
	facts["ptr_big"] = dump.Addr(unsafe.Pointer(&big[0]))
	facts["ptr_main.a.own"] = dump.Addr(unsafe.Pointer(&a.own[0]))
	facts["ptr_main.b.own"] = dump.Addr(unsafe.Pointer(&b.own[0]))
	facts["kept_objects"] = int64(5 + listLen)
	facts["kept_bytes"] = int64(bigSize + ownA + ownB + 2*int64(unsafe.Sizeof(Holder{})) +
		listLen*int64(unsafe.Sizeof(Node{})))

	dump.Write(path) // big is dead by now: only main.a and main.b hold the buffer
	facts.Print()
}
