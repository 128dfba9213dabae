// SPDX-License-Identifier: Apache-2.0

// Command merge builds linked lists that run into each other, for pass 1's streams
// (a worker walking part of a narrow walk ahead of the thread that applies it):
//
//	main.lists [numLists]*Node -> list i: listLen + i*step Nodes of its own, then
//	                              the shared tail of tailLen Nodes that all end in
//	main.ring  *Node           -> a cycle of ringLen Nodes
//
// Every own Node's side points to the Node sideGap places further down the next
// list (or nil past its end), so lists claim each other's Nodes out of turn: the
// shortest list reaches the tail first, and a Node is often reached sideways before
// its own list gets there. Walked in halves by two threads, the worker's half claims
// objects the other half reached first, which must stop its stream without changing
// the profile.
//
// Usage: merge DUMPFILE
package main

import (
	"os"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Node struct {
	next, side *Node
	val        [2]int64
}

const (
	numLists = 12
	listLen  = 1500
	step     = 97
	tailLen  = 2000
	ringLen  = 500
	sideGap  = 37
)

var (
	lists [numLists]*Node
	ring  *Node
)

func main() {
	path := dump.Path(os.Args[1:])

	var tail *Node
	for i := 0; i < tailLen; i++ {
		tail = &Node{next: tail, val: [2]int64{-1, int64(i)}}
	}
	own := make([][]*Node, numLists)
	for i := range lists {
		n := listLen + i*step
		own[i] = make([]*Node, n)
		next := tail
		for j := n - 1; j >= 0; j-- {
			own[i][j] = &Node{next: next, val: [2]int64{int64(i), int64(j)}}
			next = own[i][j]
		}
		lists[i] = own[i][0]
	}
	ownNodes := int64(0)
	for i := range lists {
		other := own[(i+1)%numLists]
		for j, n := range own[i] {
			if j+sideGap < len(other) {
				n.side = other[j+sideGap]
			}
		}
		ownNodes += int64(len(own[i]))
	}
	own = nil
	first := &Node{}
	ring = first
	for i := 1; i < ringLen; i++ {
		ring = &Node{next: ring, val: [2]int64{-2, int64(i)}}
	}
	first.next = ring

	facts := dump.NewFacts()
	nodes := ownNodes + tailLen + ringLen
	facts["nodes"] = nodes
	facts["sizeof_main.Node"] = int64(unsafe.Sizeof(Node{}))
	dump.Write(path)
	facts.Print()
}
