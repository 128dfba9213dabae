// SPDX-License-Identifier: Apache-2.0

// Command cycle builds small reference cycles held by globals:
//
//	main.cyc  *CNode -> a -> b -> c -> a   (3-node cycle)
//	main.self *CNode -> s -> s             (a node pointing to itself)
//
// Each CNode is 8 + 16 + 64 bytes; its name is a string literal (static
// data, not heap). A correct analysis must attribute exactly
// the three cycle nodes to main.cyc and the self node to main.self, and
// terminate. (An unreachable cycle would simply be collected by the GC run
// before the dump, so none is built.)
//
// Usage: cycle DUMPFILE
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type CNode struct {
	next *CNode
	name string
	pad  [64]byte
}

var (
	cyc  *CNode
	self *CNode
)

func main() {
	path := dump.Path(os.Args[1:])

	a := &CNode{name: "a"}
	b := &CNode{name: "b"}
	c := &CNode{name: "c"}
	a.next, b.next, c.next = b, c, a
	cyc = a
	s := &CNode{name: "s"}
	s.next = s
	self = s

	size := int64(unsafe.Sizeof(CNode{}))
	facts := dump.NewFacts()
	facts["cycle_len"] = 3
	facts["sizeof_main.CNode"] = size
	facts["offsetof_main.CNode.next"] = int64(unsafe.Offsetof(CNode{}.next))
	facts["addr_main.cyc"] = dump.Addr(unsafe.Pointer(&cyc))
	facts["addr_main.self"] = dump.Addr(unsafe.Pointer(&self))
	facts["ptr_a"] = dump.Addr(unsafe.Pointer(a))
	facts["ptr_b"] = dump.Addr(unsafe.Pointer(b))
	facts["ptr_c"] = dump.Addr(unsafe.Pointer(c))
	facts["ptr_main.cyc"] = dump.Addr(unsafe.Pointer(cyc))
	facts["ptr_main.self"] = dump.Addr(unsafe.Pointer(s))
	facts["kept_objects_main.cyc"] = 3
	facts["kept_bytes_main.cyc"] = 3 * size
	facts["kept_objects_main.self"] = 1
	facts["kept_bytes_main.self"] = size
	facts["kept_objects"] = 4
	facts["kept_bytes"] = 4 * size

	dump.Write(path)
	runtime.KeepAlive(cyc)
	runtime.KeepAlive(self)
	facts.Print()
}
