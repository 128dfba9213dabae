// SPDX-License-Identifier: Apache-2.0

// Command globals builds one package-level variable of each kind, every one
// holding its own, disjoint set of heap objects:
//
//	main.gptr    *Pair        -> Pair -> 2 Leaf
//	main.gslice  []*Leaf      -> backing array (20 pointers) -> 20 Leaf
//	main.gstring string       -> 4096-byte string built at run time
//	main.gstruct Holder       (value in the data/bss segment) -> Name string,
//	                          P *Pair -> Pair -> 2 Leaf, Items backing array -> 5 Leaf
//	main.garray  [16]*Leaf    (value in the data/bss segment) -> 16 Leaf
//	main.gmap    map[string]*Leaf with 50 entries -> map storage, 50 Leaf
//
// A correct analysis must find each global by its DWARF name, at the address
// reported in "addr_<name>", and attribute to it at least
// "kept_objects_<name>" objects and "kept_bytes_<name>" bytes. Leaf has no
// pointers (64 bytes); Pair and Holder do, at the offsets reported.
//
// Usage: globals DUMPFILE
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

// Leaf is a pointer-free 64-byte object (exactly a size class).
type Leaf struct {
	ID   int64
	Data [56]byte
}

// Pair has two pointer fields followed by a scalar.
type Pair struct {
	A *Leaf
	B *Leaf
	N int64
}

// Holder mixes a string, a pointer, a slice and a scalar.
type Holder struct {
	Name  string
	P     *Pair
	Items []*Leaf
	Count int64
}

var (
	gptr    *Pair
	gslice  []*Leaf
	gstring string
	gstruct Holder
	garray  [16]*Leaf
	gmap    map[string]*Leaf
)

var nextID int64

func newLeaf() *Leaf {
	nextID++
	l := &Leaf{ID: nextID}
	for i := range l.Data {
		l.Data[i] = byte(nextID)
	}
	return l
}

const (
	sliceLen  = 20
	stringLen = 4096
	itemsLen  = 5
	mapLen    = 50
)

func main() {
	path := dump.Path(os.Args[1:])
	facts := dump.NewFacts()

	leafSize := int64(unsafe.Sizeof(Leaf{}))
	pairSize := int64(unsafe.Sizeof(Pair{}))
	ptrSize := int64(unsafe.Sizeof(uintptr(0)))
	var keptObjects, keptBytes int64
	kept := func(name string, objects, bytes int64) {
		facts["kept_objects_"+name] = objects
		facts["kept_bytes_"+name] = bytes
		keptObjects += objects
		keptBytes += bytes
	}

	gptr = &Pair{A: newLeaf(), B: newLeaf(), N: 1}
	kept("main.gptr", 3, pairSize+2*leafSize)

	gslice = make([]*Leaf, sliceLen)
	for i := range gslice {
		gslice[i] = newLeaf()
	}
	kept("main.gslice", 1+sliceLen, sliceLen*ptrSize+sliceLen*leafSize)

	gstring = strings.Repeat("s", stringLen)
	kept("main.gstring", 1, stringLen)

	name := fmt.Sprintf("holder-%032d", os.Getpid()) // 39 bytes, heap
	gstruct = Holder{
		Name:  name,
		P:     &Pair{A: newLeaf(), B: newLeaf(), N: 2},
		Items: make([]*Leaf, itemsLen),
		Count: itemsLen,
	}
	for i := range gstruct.Items {
		gstruct.Items[i] = newLeaf()
	}
	kept("main.gstruct", 1+3+1+itemsLen,
		int64(len(name))+pairSize+2*leafSize+itemsLen*ptrSize+itemsLen*leafSize)

	for i := range garray {
		garray[i] = newLeaf()
	}
	kept("main.garray", int64(len(garray)), int64(len(garray))*leafSize)

	gmap = make(map[string]*Leaf)
	for i := 0; i < mapLen; i++ {
		gmap[fmt.Sprintf("key-%04d", i)] = newLeaf()
	}
	// The map's own storage holds at least the 50 keys (string headers) and
	// values (pointers) inline; the key strings are 8 bytes without pointers
	// and go to the tiny allocator, so they are not counted.
	kept("main.gmap", 1+mapLen,
		mapLen*(int64(unsafe.Sizeof(""))+ptrSize)+mapLen*leafSize)

	facts["kept_objects"] = keptObjects
	facts["kept_bytes"] = keptBytes

	facts["sizeof_main.Leaf"] = leafSize
	facts["sizeof_main.Pair"] = pairSize
	facts["offsetof_main.Pair.A"] = int64(unsafe.Offsetof(Pair{}.A))
	facts["offsetof_main.Pair.B"] = int64(unsafe.Offsetof(Pair{}.B))
	facts["offsetof_main.Pair.N"] = int64(unsafe.Offsetof(Pair{}.N))
	facts["sizeof_main.Holder"] = int64(unsafe.Sizeof(Holder{}))
	facts["offsetof_main.Holder.Name"] = int64(unsafe.Offsetof(Holder{}.Name))
	facts["offsetof_main.Holder.P"] = int64(unsafe.Offsetof(Holder{}.P))
	facts["offsetof_main.Holder.Items"] = int64(unsafe.Offsetof(Holder{}.Items))
	facts["offsetof_main.Holder.Count"] = int64(unsafe.Offsetof(Holder{}.Count))

	facts["slice_len"] = sliceLen
	facts["string_len"] = stringLen
	facts["array_len"] = len(garray)
	facts["map_len"] = len(gmap)
	facts["items_len"] = itemsLen

	// Addresses of the globals themselves (in the data or bss segment).
	facts["addr_main.gptr"] = dump.Addr(unsafe.Pointer(&gptr))
	facts["addr_main.gslice"] = dump.Addr(unsafe.Pointer(&gslice))
	facts["addr_main.gstring"] = dump.Addr(unsafe.Pointer(&gstring))
	facts["addr_main.gstruct"] = dump.Addr(unsafe.Pointer(&gstruct))
	facts["addr_main.garray"] = dump.Addr(unsafe.Pointer(&garray))
	facts["addr_main.gmap"] = dump.Addr(unsafe.Pointer(&gmap))
	// Heap addresses the globals point to.
	facts["ptr_main.gptr"] = dump.Addr(unsafe.Pointer(gptr))
	facts["ptr_main.gslice"] = dump.Addr(unsafe.Pointer(&gslice[0]))
	facts["ptr_main.gstring"] = uint64((*[2]uintptr)(unsafe.Pointer(&gstring))[0])
	facts["ptr_main.gstruct.P"] = dump.Addr(unsafe.Pointer(gstruct.P))
	facts["ptr_main.gmap"] = dump.Addr(*(*unsafe.Pointer)(unsafe.Pointer(&gmap)))

	dump.Write(path)
	runtime.KeepAlive(gptr)
	runtime.KeepAlive(gslice)
	runtime.KeepAlive(gstring)
	runtime.KeepAlive(&gstruct)
	runtime.KeepAlive(&garray)
	runtime.KeepAlive(gmap)
	facts.Print()
}
