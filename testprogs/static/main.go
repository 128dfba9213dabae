// SPDX-License-Identifier: Apache-2.0

// Command static keeps its memory behind objects the compiler allocates in the
// data or bss segment instead of the heap: package-level pointers initialised
// with a composite literal or an inlined constructor.
//
//	main.items     *Cache[int,*Item] from NewCache (inlined: a static Cache)
//	               -> m: map[int]*Item, cacheItems Items with a cacheBuf-byte buf
//	               -> order: []int, the keys in insertion order
//	main.registry  *Registry = &Registry{...} (a static Registry)
//	               -> byName: map[string]*Item, registryItems Items (regBuf bytes)
//	               -> all: []*Item, listItems more Items (listBuf bytes)
//	main.target    Big, a plain global holding one big buffer
//	main.alias     *Big = &target: a pointer to another named global, which keeps
//	               target's memory under main.target
//
// In a default build the Cache and the Registry are anonymous static symbols
// with no DWARF variable of their own (facts static_main.items and
// static_main.registry say so after the fact: the tests check the pointers
// against the dump's heap). With -N -l, NewCache is not inlined and its Cache
// is on the heap; the chains must be the same either way.
//
// Usage: static DUMPFILE
package main

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Item struct {
	id  int
	buf []byte
}

// Cache is a small generic cache.
type Cache[K comparable, V any] struct {
	m     map[K]V
	order []K
}

func NewCache[K comparable, V any]() *Cache[K, V] {
	return &Cache[K, V]{m: make(map[K]V)}
}

func (c *Cache[K, V]) Put(k K, v V) {
	c.m[k] = v
	c.order = append(c.order, k)
}

type Registry struct {
	byName map[string]*Item
	all    []*Item
}

type Big struct {
	data []byte
}

var items = NewCache[int, *Item]()

var registry = &Registry{byName: map[string]*Item{}}

var target Big

var alias = &target

const (
	cacheItems    = 1000
	cacheBuf      = 4096
	registryItems = 300
	regBuf        = 2048
	listItems     = 200
	listBuf       = 1024
	targetBuf     = 1 << 20
)

func newItem(id, size int) *Item {
	it := &Item{id: id, buf: make([]byte, size)}
	for j := range it.buf {
		it.buf[j] = byte(id)
	}
	return it
}

func main() {
	path := dump.Path(os.Args[1:])

	for i := 0; i < cacheItems; i++ {
		items.Put(i, newItem(i, cacheBuf))
	}
	for i := 0; i < registryItems; i++ {
		// 32-byte keys: big enough to stay out of the tiny allocator.
		registry.byName[fmt.Sprintf("item-%027d", i)] = newItem(i, regBuf)
	}
	registry.all = make([]*Item, listItems)
	for i := range registry.all {
		registry.all[i] = newItem(i, listBuf)
	}
	target.data = make([]byte, targetBuf)

	itemSize := int64(unsafe.Sizeof(Item{}))
	facts := dump.NewFacts()
	facts["cache_items"] = cacheItems
	facts["cache_buf"] = cacheBuf
	facts["registry_items"] = registryItems
	facts["registry_buf"] = regBuf
	facts["list_items"] = listItems
	facts["list_buf"] = listBuf
	facts["target_buf"] = targetBuf
	facts["key_size"] = int64(len(fmt.Sprintf("item-%027d", 0)))
	facts["sizeof_main.Item"] = itemSize
	facts["sizeof_int"] = int64(unsafe.Sizeof(0))
	facts["sptr_main.items"] = dump.Addr(unsafe.Pointer(items))
	facts["sptr_main.registry"] = dump.Addr(unsafe.Pointer(registry))
	facts["sptr_main.alias"] = dump.Addr(unsafe.Pointer(alias))
	facts["addr_main.target"] = dump.Addr(unsafe.Pointer(&target))
	facts["ptr_main.items.order"] = dump.Addr(unsafe.Pointer(&items.order[0]))
	facts["ptr_main.registry.all"] = dump.Addr(unsafe.Pointer(&registry.all[0]))
	facts["ptr_main.target.data"] = dump.Addr(unsafe.Pointer(&target.data[0]))
	kept := int64(cacheItems*2 + registryItems*3 + listItems*2 + 3)
	keptBytes := int64(cacheItems)*(itemSize+cacheBuf) +
		int64(registryItems)*(itemSize+regBuf+32) +
		int64(listItems)*(itemSize+listBuf) + targetBuf
	facts["kept_objects"] = kept
	facts["kept_bytes"] = keptBytes

	dump.Write(path)
	runtime.KeepAlive(items)
	runtime.KeepAlive(registry)
	runtime.KeepAlive(alias)
	facts.Print()
}
