// SPDX-License-Identifier: Apache-2.0

// Command deadslot leaves a goroutine's dead stack slot pointing into memory since
// reused by a long list:
//
//	main.worker   allocates a 1 MiB buffer and keeps it in a local across a call (so
//	              it lives in a stack slot), uses it a last time, then blocks: the slot
//	              still holds the buffer's address, but the stack map says it is dead;
//	main.head     after the buffer is collected, a list of 100000 Node (48 bytes each)
//	              is built, in the pages the buffer had (reused_dead_slot says whether
//	              the stale address now lies inside a Node).
//
// A tool that scans stacks conservatively follows the dead slot into the list and
// charges part of it to the worker's frame; the collector, and heapref, do not: all
// 100000 Nodes are main.head's, and the buffer is gone.
//
// Usage: deadslot DUMPFILE
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Node struct {
	next *Node
	val  [5]int64
}

const listNodes = 100000

var (
	head     *Node
	deadAddr uintptr // where the worker's buffer was
	sum      byte
)

//go:noinline
func fill(b []byte) { b[0] = 1 }

//go:noinline
func touch() { sum++ }

//go:noinline
func last(b []byte) { sum += b[len(b)-1]; deadAddr = uintptr(unsafe.Pointer(&b[0])) }

func worker(ready chan<- struct{}, wait <-chan struct{}) {
	buf := make([]byte, 1<<20)
	fill(buf)
	touch() // buf lives across this call: it is kept in a stack slot
	last(buf)
	ready <- struct{}{}
	<-wait // buf is dead here; its slot still holds the address
}

func main() {
	path := dump.Path(os.Args[1:])
	ready, wait := make(chan struct{}), make(chan struct{})
	go worker(ready, wait)
	<-ready
	runtime.GC()
	runtime.GC() // the buffer is freed, its pages back in the heap
	for i := 0; i < listNodes; i++ {
		head = &Node{next: head}
	}
	reused := false
	nodeSize := uintptr(unsafe.Sizeof(Node{}))
	for n := head; n != nil; n = n.next {
		a := uintptr(unsafe.Pointer(n))
		if deadAddr >= a && deadAddr < a+nodeSize {
			reused = true
			break
		}
	}

	facts := dump.NewFacts()
	facts["list_nodes"] = listNodes
	facts["sizeof_main.Node"] = int64(nodeSize)
	facts["dead_addr"] = int64(deadAddr)
	facts["reused_dead_slot"] = reused
	facts["kept_objects_main.head"] = listNodes
	facts["kept_bytes_main.head"] = listNodes * int64(nodeSize)
	facts["kept_objects"] = listNodes
	facts["kept_bytes"] = listNodes * int64(nodeSize)
	dump.Write(path)
	runtime.KeepAlive(head)
	close(wait)
	facts.Print()
}
