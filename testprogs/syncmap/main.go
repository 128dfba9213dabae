// SPDX-License-Identifier: Apache-2.0

// Command syncmap keeps objects alive only through the sync package's
// concurrent containers, whose internals hold them in untyped words:
//
//	main.items sync.Map, 100 string keys (32 bytes) -> *Item, each Item with
//	           a 1024-byte buf. Go <= 1.23: the read and dirty maps of
//	           *entry, each entry's p -> a boxed interface; Go >= 1.24: a
//	           hash-trie of indirect and entry nodes (internal/sync).
//	main.mixed sync.Map, three entries of each kind:
//	             Key{A, B int64}   -> *Item (256-byte buf)
//	             string (24 bytes) -> []byte (64 bytes)
//	             string (24 bytes) -> string (48 bytes)
//	             string (24 bytes) -> Pair{It *Item (256-byte buf), Name string (40 bytes)}
//	main.pool  sync.Pool holding 20 *Buf, each Buf with a 512-byte data
//	           slice: one in the P's private slot, the rest in its shared
//	           chain of dequeues. Every collection empties a pool, so the Bufs
//	           are put in right before the dump with the collector off
//	           (dump.WriteAfter), on one P (GOMAXPROCS 1).
//
// 60 of main.items' entries are stored and then loaded twice each, which on
// Go <= 1.23 promotes them to the read map; the other 40 are stored after,
// so the dirty map holds all 100 and shares the 60 with the read map.
//
// Everything is built in functions that have returned by the dump, so no
// frame variable reaches a key, an Item or a Buf before the containers do.
// A correct analysis names the keys and values under the map variables as
// $mapkey/$mapval by their dynamic types, the pooled objects under the pool,
// and charges the containers' own storage to the variables themselves.
//
// Usage: syncmap DUMPFILE
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Item struct {
	id  int
	buf []byte
}

type Key struct {
	A, B int64
}

type Pair struct {
	It   *Item
	Name string
}

type Buf struct {
	n    int
	data []byte
}

var (
	items sync.Map
	mixed sync.Map
	pool  sync.Pool

	// Always nil: a variable of type *Buf, so that the binary's DWARF has the
	// type (Go <= 1.23 links DWARF only for the types its variables and
	// functions use, and *Buf is otherwise only ever converted to any).
	noBuf *Buf
)

const (
	nItems      = 100
	nPromoted   = 60
	itemBufSize = 1024
	perKind     = 3
	smallBuf    = 256
	bytesLen    = 64
	stringLen   = 48
	nameLen     = 40
	nBufs       = 20
	bufDataSize = 512
)

func itemKey(i int) string    { return fmt.Sprintf("item-%027d", i) }
func mixedKey(k, i int) string { return fmt.Sprintf("mixed-%c-%016d", 'a'+k, i) }

func fillItems() {
	for i := 0; i < nItems; i++ {
		if i == nPromoted {
			for r := 0; r < 2; r++ {
				for j := 0; j < nPromoted; j++ {
					items.Load(itemKey(j))
				}
			}
		}
		items.Store(itemKey(i), &Item{id: i, buf: make([]byte, itemBufSize)})
	}
}

func fillMixed(pid int64) {
	for i := 0; i < perKind; i++ {
		mixed.Store(Key{A: pid, B: int64(i)}, &Item{id: i, buf: make([]byte, smallBuf)})
		mixed.Store(mixedKey(0, i), make([]byte, bytesLen))
		mixed.Store(mixedKey(1, i), fmt.Sprintf("%0*d", stringLen, i))
		mixed.Store(mixedKey(2, i), Pair{It: &Item{id: i, buf: make([]byte, smallBuf)},
			Name: fmt.Sprintf("%0*d", nameLen, i)})
	}
}

func fillPool() {
	for i := 0; i < nBufs; i++ {
		pool.Put(&Buf{n: i, data: make([]byte, bufDataSize)})
	}
}

func main() {
	path := dump.Path(os.Args[1:])
	runtime.GOMAXPROCS(1)
	pid := int64(os.Getpid())

	fillItems()
	fillMixed(pid)

	ptrSize := int64(unsafe.Sizeof(uintptr(0)))
	keySize := int64(len(itemKey(0)))
	itemSize := int64(unsafe.Sizeof(Item{}))
	bufSize := int64(unsafe.Sizeof(Buf{}))
	facts := dump.NewFacts()
	facts["items"] = nItems
	facts["item_key_size"] = keySize
	facts["item_buf_size"] = itemBufSize
	facts["sizeof_main.Item"] = itemSize
	facts["sizeof_string"] = int64(unsafe.Sizeof(""))
	facts["sizeof_slice"] = int64(unsafe.Sizeof([]byte(nil)))
	facts["sizeof_main.Key"] = int64(unsafe.Sizeof(Key{}))
	facts["sizeof_main.Pair"] = int64(unsafe.Sizeof(Pair{}))
	facts["mixed_per_kind"] = perKind
	facts["mixed_key_size"] = int64(len(mixedKey(0, 0)))
	facts["small_buf_size"] = smallBuf
	facts["bytes_len"] = bytesLen
	facts["string_len"] = stringLen
	facts["name_len"] = nameLen
	facts["bufs"] = nBufs
	facts["buf_data_size"] = bufDataSize
	facts["sizeof_main.Buf"] = bufSize
	facts["gomaxprocs"] = runtime.GOMAXPROCS(0)
	// Lower bounds: each key (box and bytes), Item and buf of main.items; the
	// Bufs and their data in the pool; main.mixed's values and keys.
	keptItems := int64(nItems) * (2*ptrSize + keySize + itemSize + itemBufSize)
	keptPool := int64(nBufs) * (bufSize + bufDataSize)
	facts["kept_objects_main.items"] = int64(4 * nItems)
	facts["kept_bytes_main.items"] = keptItems
	facts["kept_objects_main.pool"] = int64(2 * nBufs)
	facts["kept_bytes_main.pool"] = keptPool
	facts["kept_objects"] = int64(4*nItems + 2*nBufs)
	facts["kept_bytes"] = keptItems + keptPool
	facts["addr_main.items"] = dump.Addr(unsafe.Pointer(&items))
	facts["addr_main.mixed"] = dump.Addr(unsafe.Pointer(&mixed))
	facts["addr_main.pool"] = dump.Addr(unsafe.Pointer(&pool))
	facts["sizeof_sync.Map"] = int64(unsafe.Sizeof(items))
	facts["sizeof_sync.Pool"] = int64(unsafe.Sizeof(pool))

	dump.WriteAfter(path, fillPool)
	runtime.KeepAlive(noBuf)
	facts.Print()
}
