// SPDX-License-Identifier: Apache-2.0

// Command list builds long pointer chains:
//
//	main.head *Node -> singly linked list of 100000 Node (40 bytes each)
//	main.ring *Ring -> doubly linked cycle of 1000 Ring (24 bytes each)
//	main.tree *Tree -> complete binary tree of depth 10: 1023 Tree (24 bytes
//	                   each), 511 under the root's Left and 511 under its Right
//
// A correct analysis must attribute all 100000 Nodes to main.head, all
// 1000 Rings to main.ring and all 1023 Trees to main.tree, without recursing
// itself to death on the long chain or looping forever on the cycle.
//
// Usage: list DUMPFILE
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Node struct {
	next *Node
	val  [4]int64
}

type Ring struct {
	next, prev *Ring
	val        int64
}

type Tree struct {
	Left, Right *Tree
	val         int64
}

const (
	listNodes = 100000
	ringNodes = 1000
	treeDepth = 10
	treeNodes = 1<<treeDepth - 1
)

var (
	head *Node
	ring *Ring
	tree *Tree
)

// buildTree returns a complete binary tree of the given depth (0: none).
func buildTree(depth int) *Tree {
	if depth == 0 {
		return nil
	}
	return &Tree{Left: buildTree(depth - 1), Right: buildTree(depth - 1), val: int64(depth)}
}

func main() {
	path := dump.Path(os.Args[1:])

	for i := 0; i < listNodes; i++ {
		n := &Node{next: head}
		n.val[0] = int64(i)
		head = n
	}

	ring = &Ring{val: 0}
	ring.next, ring.prev = ring, ring
	for i := 1; i < ringNodes; i++ {
		r := &Ring{val: int64(i), next: ring, prev: ring.prev}
		ring.prev.next = r
		ring.prev = r
	}

	tree = buildTree(treeDepth)

	nodeSize := int64(unsafe.Sizeof(Node{}))
	treeSize := int64(unsafe.Sizeof(Tree{}))
	ringSize := int64(unsafe.Sizeof(Ring{}))
	facts := dump.NewFacts()
	facts["list_nodes"] = listNodes
	facts["ring_nodes"] = ringNodes
	facts["sizeof_main.Node"] = nodeSize
	facts["sizeof_main.Ring"] = ringSize
	facts["tree_depth"] = treeDepth
	facts["tree_nodes"] = treeNodes
	facts["sizeof_main.Tree"] = treeSize
	facts["offsetof_main.Node.next"] = int64(unsafe.Offsetof(Node{}.next))
	facts["offsetof_main.Ring.next"] = int64(unsafe.Offsetof(Ring{}.next))
	facts["offsetof_main.Ring.prev"] = int64(unsafe.Offsetof(Ring{}.prev))
	facts["addr_main.head"] = dump.Addr(unsafe.Pointer(&head))
	facts["addr_main.ring"] = dump.Addr(unsafe.Pointer(&ring))
	facts["ptr_main.head"] = dump.Addr(unsafe.Pointer(head))
	facts["ptr_main.ring"] = dump.Addr(unsafe.Pointer(ring))
	facts["ptr_main.tree"] = dump.Addr(unsafe.Pointer(tree))
	facts["kept_objects_main.head"] = listNodes
	facts["kept_bytes_main.head"] = listNodes * nodeSize
	facts["kept_objects_main.ring"] = ringNodes
	facts["kept_bytes_main.ring"] = ringNodes * ringSize
	facts["kept_objects_main.tree"] = treeNodes
	facts["kept_bytes_main.tree"] = treeNodes * treeSize
	facts["kept_objects"] = listNodes + ringNodes + treeNodes
	facts["kept_bytes"] = listNodes*nodeSize + ringNodes*ringSize + treeNodes*treeSize

	dump.Write(path)
	runtime.KeepAlive(head)
	runtime.KeepAlive(ring)
	runtime.KeepAlive(tree)
	facts.Print()
}
