package main

import (
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

// Item is the element of the list, map and slice shapes: 16 bytes (an exact
// size class), one pointer word. Its Next is nil outside the list.
type Item struct {
	Next *Item
	Val  int64
}

var (
	itemList  *Item
	itemMap   map[int64]*Item
	itemSlice []*Item
)

// buildItemList makes main.itemList one singly linked list of n Items.
func buildItemList(n int64, facts dump.Facts) (keptObjects, keptBytes int64) {
	for i := int64(0); i < n; i++ {
		itemList = &Item{Next: itemList, Val: i}
	}
	return n, n * itemSize()
}

// buildItemMap makes main.itemMap a map of n entries, keys 0..n-1, each value
// a pointer to its own Item. kept counts the n Items only; the map's own
// storage (header, buckets or groups and tables, depending on the Go release)
// is measured as the runtime's growth of live heap objects and bytes and
// reported apart, as map_storage_objects and map_storage_bytes.
func buildItemMap(n int64, facts dump.Facts) (keptObjects, keptBytes int64) {
	objects0, bytes0 := liveHeap()
	itemMap = make(map[int64]*Item, n)
	for i := int64(0); i < n; i++ {
		itemMap[i] = &Item{Val: i}
	}
	objects1, bytes1 := liveHeap()
	facts["map_storage_objects"] = int64(objects1-objects0) - n
	facts["map_storage_bytes"] = int64(bytes1-bytes0) - n*itemSize()
	return n, n * itemSize()
}

// buildItemSlice makes main.itemSlice a []*Item of n pointers to n Items.
func buildItemSlice(n int64, facts dump.Facts) (keptObjects, keptBytes int64) {
	itemSlice = make([]*Item, n)
	for i := range itemSlice {
		itemSlice[i] = &Item{Val: int64(i)}
	}
	backing := roundUpToClass(n * int64(unsafe.Sizeof(itemList)))
	facts["slice_backing_bytes"] = backing
	return n + 1, n*itemSize() + backing
}

func itemSize() int64 {
	return int64(unsafe.Sizeof(Item{}))
}

// liveHeap returns the runtime's count of live heap objects and bytes: after
// runtime.GC, which also finishes sweeping, nothing unreachable is counted.
func liveHeap() (objects, bytes uint64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapObjects, ms.HeapAlloc
}

// roundUpToClass returns the size the allocator gives an object of n bytes:
// the smallest size class >= n, or above 32 KiB n rounded up to 8 KiB pages.
func roundUpToClass(n int64) int64 {
	if n > 32768 {
		return (n + 8191) &^ 8191
	}
	for _, c := range sizeClasses {
		if c >= n {
			return c
		}
	}
	return 32768
}
