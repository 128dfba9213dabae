// SPDX-License-Identifier: Apache-2.0

// Command unsafecast is the design seed's example: four Objects, each built
// by echo() (Object + 1024-byte slice backing array + the heap-moved slice
// header `bytes` + the 1024-byte string copy A), reached in four ways:
//
//	main.a *Object        -> Object (typed: DWARF shows the pointer fields)
//	main.b *int64         -> &Object.B, an interior pointer at offset
//	                         "offsetof_main.Object.B"; the Object is reached
//	                         only through b
//	main.u unsafe.Pointer -> Object (DWARF type hides the pointer fields)
//	main.p *byte          -> Object (likewise)
//
// A correct analysis must attribute one whole echo() result (4 objects,
// 32 + 1024 + 24 + 1024 bytes on 64-bit) to each of the four globals,
// including b (interior pointer -> containing object) and u/p (the object's
// pointer fields must come from the heap's pointer bitmap, not from the
// declared type of the root).
//
// Usage: unsafecast DUMPFILE
package main

import (
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Object struct {
	A string
	B int64
	C *[]byte
}

func echo() *Object {
	bytes := make([]byte, 1024)
	return &Object{A: string(bytes), C: &bytes}
}

var a = echo()
var b *int64 = &echo().B
var u unsafe.Pointer = unsafe.Pointer(echo())
var p *byte = (*byte)(unsafe.Pointer(echo()))

func main() {
	path := dump.Path(os.Args[1:])

	objSize := int64(unsafe.Sizeof(Object{}))
	offB := int64(unsafe.Offsetof(Object{}.B))
	sliceHdr := int64(unsafe.Sizeof([]byte(nil)))
	perEcho := objSize + 1024 + sliceHdr + int64(len(a.A))

	facts := dump.NewFacts()
	facts["sizeof_main.Object"] = objSize
	facts["offsetof_main.Object.A"] = int64(unsafe.Offsetof(Object{}.A))
	facts["offsetof_main.Object.B"] = offB
	facts["offsetof_main.Object.C"] = int64(unsafe.Offsetof(Object{}.C))
	facts["bytes_len"] = 1024
	for _, g := range []struct {
		name string
		addr unsafe.Pointer
		ptr  unsafe.Pointer
	}{
		{"main.a", unsafe.Pointer(&a), unsafe.Pointer(a)},
		{"main.b", unsafe.Pointer(&b), unsafe.Pointer(b)},
		{"main.u", unsafe.Pointer(&u), u},
		{"main.p", unsafe.Pointer(&p), unsafe.Pointer(p)},
	} {
		facts["addr_"+g.name] = dump.Addr(g.addr)
		facts["ptr_"+g.name] = dump.Addr(g.ptr)
		facts["kept_objects_"+g.name] = 4
		facts["kept_bytes_"+g.name] = perEcho
	}
	// The Object that b points into starts offB bytes before b.
	facts["obj_main.b"] = dump.Addr(unsafe.Pointer(b)) - uint64(offB)
	facts["kept_objects"] = 4 * 4
	facts["kept_bytes"] = 4 * perEcho

	dump.Write(path)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	runtime.KeepAlive(u)
	runtime.KeepAlive(p)
	facts.Print()
}
