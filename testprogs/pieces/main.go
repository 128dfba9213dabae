// SPDX-License-Identifier: Apache-2.0

// Command pieces keeps long runs of pointers, which heapref queues in pieces of a
// few KiB (its threads share them) and must walk as one run:
//
//	main.bigList  []*Node of bigN Nodes, each with a nodeBuf-byte buf. Element
//	              statAt is the Node main.seed was initialised with (a static
//	              object in a default build), with a seedBuf-byte buf; main
//	              then sets seed to nil, so the element is its only holder. That
//	              Node's twin is element nextAt (the last piece's) seen as a Twin,
//	              a struct of the same layout: the run claims it as a Node before
//	              the static Node is walked, so no chain goes through twin.
//	main.tail     other[cut:] of a []*Node of otherN Nodes with tailBuf-byte
//	              bufs: the first cut elements of the array lie before the view,
//	              so their Nodes are found by the GC bitmap alone, under
//	              main.tail's $sub_objects$.
//
// Usage: pieces DUMPFILE
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Node struct {
	next *Node
	twin *Twin
	buf  []byte
}

// Twin is Node by another name: a Node reached as a Twin is charged to a chain
// of its own ("twin. (*main.Twin)"), not folded into its holder's as a Node's
// next is.
type Twin Node

const (
	bigN    = 20000 // 160 KB of pointers: about 20 pieces
	statAt  = 15000
	nextAt  = 19900 // in the last piece: any piece boundary after statAt counts
	nodeBuf = 48
	seedBuf = 4096
	otherN  = 10000 // 80 KB
	cut     = 5000
	tailBuf = 64
)

var seed = &Node{}

var (
	bigList []*Node
	tail    []*Node
)

func newNode(size int) *Node {
	return &Node{buf: make([]byte, size)}
}

func main() {
	path := dump.Path(os.Args[1:])

	bigList = make([]*Node, bigN)
	for i := range bigList {
		bigList[i] = newNode(nodeBuf)
	}
	seedAddr := dump.Addr(unsafe.Pointer(seed))
	seed.buf = make([]byte, seedBuf)
	seed.twin = (*Twin)(unsafe.Pointer(bigList[nextAt]))
	bigList[statAt] = seed
	seed = nil

	other := make([]*Node, otherN)
	for i := range other {
		other[i] = newNode(tailBuf)
	}
	tail = other[cut:]

	node := int64(unsafe.Sizeof(Node{}))
	facts := dump.NewFacts()
	facts["big_n"] = bigN
	facts["node_buf"] = nodeBuf
	facts["seed_buf"] = seedBuf
	facts["other_n"] = otherN
	facts["cut"] = cut
	facts["tail_buf"] = tailBuf
	facts["sizeof_main.Node"] = node
	facts["sptr_main.seed"] = seedAddr
	facts["ptr_main.bigList"] = dump.Addr(unsafe.Pointer(&bigList[0]))
	facts["ptr_other"] = dump.Addr(unsafe.Pointer(&other[0]))
	// what it allocated, counted by itself (seed's Node may be static: not counted)
	facts["kept_objects"] = int64(2 + 2*bigN - 1 + 2*otherN)
	facts["kept_bytes"] = int64(int64(unsafe.Sizeof(other[0]))*(bigN+otherN)) + (bigN-1)*(node+nodeBuf) + seedBuf +
		otherN*(node+tailBuf)

	dump.Write(path)
	runtime.KeepAlive(bigList)
	runtime.KeepAlive(tail)
	facts.Print()
}
