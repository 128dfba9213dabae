// SPDX-License-Identifier: Apache-2.0

package main

import (
	"runtime"
	"strconv"
	"sync"
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

// Pair and Triple are the structs of the small shape: 2 and 3 words (exact
// size classes 16 and 24), each with one pointer.
type Pair struct {
	Ref *Triple
	Val int64
}

type Triple struct {
	Name string
	Val  int64
}

var (
	smallByID   map[int64]*Pair
	smallByName map[string]*Triple
	smallRuns   [][]*Pair
)

// smallUnitObjects is the objects one unit of the small shape allocates:
// a name, a Triple, a Pair, and a quarter of a 4-pointer slice.
const smallUnitObjects = 3.25

// buildSmall makes the small shape: about n objects of 8 to 32 bytes, as a
// program full of small records has. Unit i is a name string of 8, 16, 24 or
// 32 bytes (by i % 4; the key of main.smallByName, shared with its Triple's
// Name), a Triple{Name, Val} (smallByName's value), a Pair{Ref: the Triple}
// (main.smallByID's value, key i), and every 4 units a []*Pair of those 4
// Pairs (32 bytes) in main.smallRuns. kept counts those objects and
// smallRuns' backing array, not the maps' own storage (reported as
// map_storage_objects / _bytes, as for -shape map).
func buildSmall(n int64, facts dump.Facts) (keptObjects, keptBytes int64) {
	units := int64(float64(n) / smallUnitObjects)
	if units < 4 {
		units = 4
	}
	units &^= 3 // whole slices of 4
	objects0, bytes0 := liveHeap()
	smallByID = make(map[int64]*Pair, units)
	smallByName = make(map[string]*Triple, units)
	objects1, bytes1 := liveHeap()
	smallRuns = make([][]*Pair, 0, units/4)
	var run []*Pair
	var nameBytes int64
	for i := int64(0); i < units; i++ {
		name := smallName(i)
		nameBytes += int64(len(name))
		t := &Triple{Name: name, Val: i}
		p := &Pair{Ref: t, Val: i}
		smallByID[i] = p
		smallByName[name] = t
		if run == nil {
			run = make([]*Pair, 0, 4)
		}
		run = append(run, p)
		if len(run) == 4 {
			smallRuns = append(smallRuns, run)
			run = nil
		}
	}
	ptr := int64(unsafe.Sizeof(uintptr(0)))
	pairSize, tripleSize := int64(unsafe.Sizeof(Pair{})), int64(unsafe.Sizeof(Triple{}))
	runs := units / 4
	backing := roundUpToClass(runs * int64(unsafe.Sizeof(run)))
	// the maps were made at their final size: what they hold now is their storage
	facts["map_storage_objects"] = int64(objects1 - objects0)
	facts["map_storage_bytes"] = int64(bytes1 - bytes0)
	facts["small_units"] = units
	facts["sizeof_main.Pair"] = pairSize
	facts["sizeof_main.Triple"] = tripleSize
	facts["small_runs_backing_bytes"] = backing
	keptObjects = 3*units + runs + 1
	keptBytes = nameBytes + units*(pairSize+tripleSize) + runs*4*ptr + backing
	return keptObjects, keptBytes
}

// smallName is unit i's name: 8, 16, 24 or 32 bytes (exact size classes),
// distinct for each i.
func smallName(i int64) string {
	b := make([]byte, 8*(1+i%4))
	for j := range b {
		b[j] = 'a' + byte(j%26)
	}
	s := strconv.FormatInt(i, 36)
	copy(b[len(b)-len(s):], s)
	return string(b)
}

// Record is the record of the records shape: 48 bytes (an exact size class),
// two pointer words (Data's array, Peer).
type Record struct {
	ID   int64
	Seq  int64
	Data []byte
	Peer *Record
}

// RecNode is a node of the records shape's list: 16 bytes, one pointer word.
type RecNode struct {
	Next *RecNode
	Val  int64
}

// Pt is what the records shape boxes in its []any: 16 bytes, no pointer.
type Pt struct {
	X, Y int64
}

var (
	recordMap   map[int64]*Record
	recordSlice []*Record
	recordList  *RecNode
	recordAny   []any
)

// recordDataSize is record i's Data length: 16, 32, 48 or 64 bytes (exact size
// classes), by i % 4.
func recordDataSize(i int64) int64 {
	return 16 * (1 + i%4)
}

// buildRecords makes the records shape: n objects (rounded down to a multiple of
// 4) of 16 to 64 bytes in four quarters of q = n/4, as a service's tables
// of small records have. main.recordMap is a map[int64]*Record of q entries (keys
// 0..q-1), each Record with its own Data []byte (16 to 64 bytes): 2q objects;
// main.recordSlice a []*Record of the same q records (so every record has two
// holders: the map's group and the slice's array); main.recordList one linked
// list of q RecNodes; main.recordAny a []any of q boxed Pts. kept counts those
// objects and the two slices' backing arrays, not the map's own storage
// (reported as map_storage_objects / _bytes, as for -shape map).
func buildRecords(n int64, facts dump.Facts) (keptObjects, keptBytes int64) {
	q := n / 4
	if q < 1 {
		q = 1
	}
	objects0, bytes0 := liveHeap()
	recordMap = make(map[int64]*Record, q)
	objects1, bytes1 := liveHeap()
	recordSlice = make([]*Record, q)
	recordAny = make([]any, q)
	var dataBytes int64
	for i := int64(0); i < q; i++ {
		r := &Record{ID: i, Seq: 3 * i, Data: make([]byte, recordDataSize(i))}
		r.Data[0] = byte(i)
		dataBytes += recordDataSize(i)
		recordMap[i] = r
		recordSlice[i] = r
		recordList = &RecNode{Next: recordList, Val: i}
		recordAny[i] = Pt{X: i, Y: -i}
	}
	recordSize := int64(unsafe.Sizeof(Record{}))
	nodeSize := int64(unsafe.Sizeof(RecNode{}))
	ptSize := int64(unsafe.Sizeof(Pt{}))
	backing := roundUpToClass(q*int64(unsafe.Sizeof(recordSlice[0]))) +
		roundUpToClass(q*int64(unsafe.Sizeof(recordAny[0])))
	facts["map_storage_objects"] = int64(objects1 - objects0)
	facts["map_storage_bytes"] = int64(bytes1 - bytes0)
	facts["records"] = q
	facts["record_data_bytes"] = dataBytes
	facts["sizeof_main.Record"] = recordSize
	facts["sizeof_main.RecNode"] = nodeSize
	facts["sizeof_main.Pt"] = ptSize
	facts["slices_backing_bytes"] = backing
	keptObjects = 4*q + 2
	keptBytes = q*(recordSize+nodeSize+ptSize) + dataBytes + backing
	return keptObjects, keptBytes
}

// workQueue is what the idle half of -shape goroutines waits on: a global, so
// those goroutines are not leaked.
var workQueue = make(chan []byte)

// goroutineBuf is a variable: each goroutine's buffer is then on the heap.
var goroutineBuf = 64

func waitOn(ch chan []byte, started *sync.WaitGroup) {
	buf := make([]byte, goroutineBuf)
	started.Done()
	<-ch
	runtime.KeepAlive(buf)
}

// buildGoroutines starts n goroutines blocked in "chan receive", half of them
// leaked (see -shape goroutines).
func buildGoroutines(n int64, facts dump.Facts) (keptObjects, keptBytes int64) {
	var started sync.WaitGroup
	started.Add(int(n))
	for i := int64(0); i < n; i++ {
		if i%2 == 0 {
			go waitOn(make(chan []byte), &started)
		} else {
			go waitOn(workQueue, &started)
		}
	}
	started.Wait()
	facts["goroutines"] = n
	facts["leaked_goroutines"] = (n + 1) / 2
	return n, n * int64(goroutineBuf)
}
