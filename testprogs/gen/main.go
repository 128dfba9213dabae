// SPDX-License-Identifier: Apache-2.0

// Command gen writes a large heap dump for benchmarks (bench/bench_scale.sh).
// -shape chooses the heap; -objects sets its size N.
//
// -shape list, map and slice each hold N Items (16 bytes: a Next pointer and
// an int64) in one structure, to time one shape alone:
//
//	list   main.itemList  *Item           one singly linked list of N Items
//	map    main.itemMap   map[int64]*Item N entries, keys 0..N-1, each value
//	                                      pointing to its own Item; N counts
//	                                      entries (= Items), not the map's
//	                                      own storage objects (buckets, or
//	                                      groups and tables), which depend on
//	                                      the Go release and are reported as
//	                                      map_storage_objects / _bytes (the
//	                                      runtime's live heap growth, after a
//	                                      GC, minus the Items)
//	slice  main.itemSlice []*Item         N pointers to N Items (N + 1
//	                                      objects with the backing array)
//
// -shape small holds about N objects of 8 to 32 bytes, the heap of a
// program made of small records: maps of pointers to 2- and 3-word structs,
// strings, small slices (see buildSmall in shapes.go). N counts the objects
// it allocates, rounded down to whole units of 3.25; the maps' own storage
// is reported apart, as for -shape map.
//
// -shape records holds N objects of 16 to 64 bytes in four quarters: a
// map[int64]*Record, a []*Record of the same records, each Record (48 bytes)
// with its own 16 to 64 byte Data []byte, a linked list of 16-byte RecNodes and
// a []any of boxed 16-byte Pts (see buildRecords in shapes.go); the map's
// storage is reported apart.
//
// -shape goroutines starts N goroutines, each holding a 64-byte buffer of its
// own while it waits in "chan receive": the even ones on a channel of their
// own (leaked: nothing else can reach it), the odd ones on the global
// main.workQueue (an idle pool, not leaked): the heap of a service with many
// goroutines, for heapref goroutines' leak search (bench/bench_leaks.sh).
//
// -shape mixedleak is -shape mixed with its holders' goroutines leaked: each
// waits on a channel of its own (bench/bench_leaks.sh's worst case: the whole
// heap marked to find them, and again for what they retain).
//
// -shape mixed (the default) builds a mix of shapes scaled so that the heap
// holds about -objects objects and -bytes bytes (defaults: 10,000,000
// objects, 1 GiB):
//
//	main.lists    [16]*ListNode   16 long singly linked lists of 32-byte
//	                              nodes, holding ~25% of all objects
//	64 goroutines in main.holder, each blocked in "chan receive" with a
//	                              local holding a sublist (another ~25%)
//	main.recMap   map[int64]*Rec  half of the records
//	main.recSlice []*Rec          the other half
//	    each Rec (80 bytes) has a 32-byte Name string and an interface
//	    value holding a boxed 16-byte Box (3 objects per Rec, ~45% of all
//	    objects); records are chained through Rec.Next in runs of 8, and
//	    ~5% of objects are []byte blobs hung off Rec.Blob (more go in
//	    main.blobs if the byte target needs them). The blob size is chosen
//	    so that the total reaches -bytes; it is rounded down to a size
//	    class, so the heap does not grow past the target by rounding.
//
// The sizes of all small objects are exact size classes, so the heap's
// real figures are close to kept_objects / kept_bytes (plus the map's
// internal storage, counted only as 16 bytes per entry, and the runtime's
// own objects). If -bytes is too small for -objects, no blobs are made and
// the byte target is exceeded (a warning goes to stderr).
//
// The facts on stdout give kept_objects / kept_bytes (what this program
// allocated and keeps, counted by itself), baseline_heap_objects / _bytes
// (the runtime's live heap before building: its own objects and ours so
// far) and memstats_heap_objects / memstats_heap_alloc (the live heap right
// after the dump), so a reader can bound what an analysis must reach:
// kept <= reached <= memstats.
//
// While building, the GC percentage is raised to 400 to save time; almost
// nothing built becomes garbage, so memory stays near the live heap (the
// 40M-object, 4 GiB mixed heap peaked at 1.10x its live bytes). Peak RSS is
// reported as "peak_rss_bytes" (from /proc/self/status, 0 elsewhere).
//
// Usage: gen [-shape mixed|mixedleak|list|map|slice|small|records|goroutines] [-objects N] [-bytes N] DUMPFILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type ListNode struct {
	Next *ListNode
	Val  int64
	Pad  [2]int64
}

type Rec struct {
	ID   int64
	Seq  int64
	Name string
	Val  interface{}
	Blob []byte
	Next *Rec
}

type Box struct {
	A, B int64
}

const (
	numLists      = 16
	numGoroutines = 64
	nameLen       = 32
)

var (
	lists    [numLists]*ListNode
	recMap   map[int64]*Rec
	recSlice []*Rec
	blobs    [][]byte
	stop     = make(chan struct{})
	sink     int64
)

// Size classes up to 32 KiB (the same in every Go release this supports).
var sizeClasses = []int64{
	16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240,
	256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896,
	1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456,
	4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880,
	12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264,
	28672, 32768,
}

// roundDownToClass returns the largest size class <= n, or for n above
// 32 KiB, n rounded down to whole 8 KiB pages.
func roundDownToClass(n int64) int64 {
	if n > 32768 {
		return n &^ 8191
	}
	best := int64(0)
	for _, c := range sizeClasses {
		if c <= n {
			best = c
		}
	}
	return best
}

func buildList(n int64, seed int64) *ListNode {
	var head *ListNode
	for i := int64(0); i < n; i++ {
		head = &ListNode{Next: head, Val: seed + i}
	}
	return head
}

// holdersLeak (-shape mixedleak) has each holder wait on a channel of its own
// instead of stop: leaked goroutines, holding a quarter of the heap.
var holdersLeak bool

// holder keeps a sublist in a local until stop is closed (never).
//
//go:noinline
func holder(n, seed int64, ready *sync.WaitGroup) {
	head := buildList(n, seed)
	wait := stop
	if holdersLeak {
		wait = make(chan struct{})
	}
	ready.Done()
	<-wait
	s := int64(0)
	for p := head; p != nil; p = p.Next {
		s += p.Val
	}
	sink += s
}

func makeName(i int64) string {
	var b [nameLen]byte
	for j := range b {
		b[j] = 'a' + byte(j)
	}
	s := strconv.FormatInt(i, 10)
	copy(b[nameLen-len(s):], s)
	return string(b[:])
}

func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// buildMixed builds the mixed heap described at the top of this file and
// records its plan in facts.
func buildMixed(targetObjects, targetBytes int64, facts dump.Facts) (keptObjects, keptBytes int64) {
	if targetObjects < 1000 {
		dump.Fail(fmt.Errorf("-objects must be at least 1000 for -shape mixed"))
	}
	ptrSize := int64(unsafe.Sizeof(uintptr(0)))
	nodeSize := int64(unsafe.Sizeof(ListNode{}))
	recSize := int64(unsafe.Sizeof(Rec{}))
	boxSize := int64(unsafe.Sizeof(Box{}))
	perRec := recSize + nameLen + boxSize

	// Plan the object counts.
	n := targetObjects
	nRec := n * 15 / 100
	nMap := nRec / 2
	nSlice := nRec - nMap
	nBlob := n * 5 / 100
	nList := n - 3*nRec - nBlob
	fixedBytes := nList*nodeSize + nRec*perRec + nSlice*ptrSize + nMap*(8+ptrSize)

	// Plan the blobs to make up the byte target.
	blobSize := int64(0)
	rest := targetBytes - fixedBytes
	if rest >= 16*nBlob && nBlob > 0 {
		blobSize = roundDownToClass(rest / nBlob)
		nBlob = rest / blobSize
	} else {
		fmt.Fprintf(os.Stderr, "gen: %d objects already need %d bytes; making no blobs\n", n, fixedBytes)
		nBlob = 0
	}
	nAttached := nBlob
	if nAttached > nRec {
		nAttached = nRec
	}
	nExtraBlobs := nBlob - nAttached

	// Lists: half in globals, half in goroutine locals.
	globalNodes := nList / 2
	perGoroutine := (nList - globalNodes) / numGoroutines
	globalNodes = nList - perGoroutine*numGoroutines
	var ready sync.WaitGroup
	ready.Add(numGoroutines)
	for g := 0; g < numGoroutines; g++ {
		go holder(perGoroutine, int64(g)<<32, &ready)
	}
	for i := 0; i < numLists; i++ {
		cnt := globalNodes / numLists
		if i == numLists-1 {
			cnt = globalNodes - cnt*(numLists-1)
		}
		lists[i] = buildList(cnt, int64(i)<<40)
	}

	// Records.
	recMap = make(map[int64]*Rec, nMap)
	recSlice = make([]*Rec, 0, nSlice)
	var prev *Rec
	for i := int64(0); i < nRec; i++ {
		r := &Rec{ID: i, Seq: i * 7, Name: makeName(i)}
		r.Val = Box{A: i, B: -i}
		if i < nAttached {
			r.Blob = make([]byte, blobSize)
			r.Blob[0] = byte(i)
		}
		if i%8 != 0 {
			r.Next = prev
		}
		prev = r
		if i < nMap {
			recMap[i] = r
		} else {
			recSlice = append(recSlice, r)
		}
	}
	prev = nil
	if nExtraBlobs > 0 {
		blobs = make([][]byte, nExtraBlobs)
		for i := range blobs {
			blobs[i] = make([]byte, blobSize)
			blobs[i][0] = byte(i)
		}
	}
	ready.Wait()

	keptObjects = nList + 3*nRec + nBlob + 1 + 1 // + map, + slice backing array
	keptBytes = fixedBytes + nBlob*blobSize
	if nExtraBlobs > 0 {
		keptObjects++
		keptBytes += nExtraBlobs * int64(unsafe.Sizeof([]byte(nil)))
	}

	facts["target_objects"] = targetObjects
	facts["target_bytes"] = targetBytes
	facts["list_nodes"] = nList
	facts["list_nodes_global"] = globalNodes
	facts["list_nodes_per_goroutine"] = perGoroutine
	facts["lists"] = numLists
	facts["goroutines"] = numGoroutines
	facts["holder_function"] = "main.holder"
	facts["recs"] = nRec
	facts["map_entries"] = nMap
	facts["slice_len"] = nSlice
	facts["blobs"] = nBlob
	facts["blobs_extra"] = nExtraBlobs
	facts["blob_size"] = blobSize
	facts["sizeof_main.ListNode"] = nodeSize
	facts["sizeof_main.Rec"] = recSize
	facts["sizeof_main.Box"] = boxSize
	facts["kept_objects_goroutines"] = perGoroutine * numGoroutines
	facts["kept_bytes_goroutines"] = perGoroutine * numGoroutines * nodeSize
	return keptObjects, keptBytes
}

// builders makes each -shape's heap of about -objects objects and returns what
// it kept: objects and bytes, counted by this program from what it allocated.
var builders = map[string]func(n int64, facts dump.Facts) (int64, int64){
	"list":       buildItemList,
	"map":        buildItemMap,
	"slice":      buildItemSlice,
	"small":      buildSmall,
	"goroutines": buildGoroutines,
	"records":    buildRecords,
}

func main() {
	shape := flag.String("shape", "mixed", "heap shape: mixed, mixedleak, list, map, slice, small, records or goroutines")
	targetObjects := flag.Int64("objects", 10000000, "approximate number of heap objects (list, map, slice: exactly N Items)")
	targetBytes := flag.Int64("bytes", 1<<30, "approximate heap bytes (mixed only)")
	flag.Parse()
	path := dump.Path(flag.Args())
	build := builders[*shape]
	holdersLeak = *shape == "mixedleak"
	if *shape == "mixed" || holdersLeak {
		build = func(n int64, facts dump.Facts) (int64, int64) {
			return buildMixed(n, *targetBytes, facts)
		}
	} else if build == nil {
		dump.Fail(fmt.Errorf("-shape %q: want mixed, mixedleak, list, map, slice, small, records or goroutines", *shape))
	}
	if *targetObjects < 1 {
		dump.Fail(fmt.Errorf("-objects must be at least 1"))
	}

	facts := dump.NewFacts()
	facts["shape"] = *shape
	facts["target_objects"] = *targetObjects
	baseObjects, baseBytes := liveHeap()
	facts["baseline_heap_objects"] = baseObjects
	facts["baseline_heap_bytes"] = baseBytes

	// Almost nothing built becomes garbage, so a high GC percentage saves
	// collections without letting the heap grow much past the live data.
	start := time.Now()
	debug.SetGCPercent(400)
	keptObjects, keptBytes := build(*targetObjects, facts)
	debug.SetGCPercent(100)
	facts["build_seconds"] = time.Since(start).Seconds()
	facts["kept_objects"] = keptObjects
	facts["kept_bytes"] = keptBytes

	start = time.Now()
	dump.Write(path)
	facts["dump_seconds"] = time.Since(start).Seconds()
	facts["write_heap_dump_seconds"] = dump.WriteSeconds
	runtime.KeepAlive(&lists)
	runtime.KeepAlive(recMap)
	runtime.KeepAlive(recSlice)
	runtime.KeepAlive(blobs)
	runtime.KeepAlive(itemList)
	runtime.KeepAlive(itemMap)
	runtime.KeepAlive(itemSlice)
	runtime.KeepAlive(smallByID)
	runtime.KeepAlive(smallByName)
	runtime.KeepAlive(smallRuns)
	runtime.KeepAlive(recordMap)
	runtime.KeepAlive(recordSlice)
	runtime.KeepAlive(recordList)
	runtime.KeepAlive(recordAny)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	facts["memstats_heap_objects"] = ms.HeapObjects
	facts["memstats_heap_alloc"] = ms.HeapAlloc
	facts["peak_rss_bytes"] = peakRSS()
	if st, err := os.Stat(path); err == nil {
		facts["dump_size"] = st.Size()
	}
	facts.Print()
}
