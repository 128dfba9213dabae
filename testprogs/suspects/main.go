// SPDX-License-Identifier: Apache-2.0

// Command suspects builds one leak of a known shape, chosen by -scenario, for
// heapref suspects to find: the variable that holds it, where the memory piles up
// and how many elements are there are known here and printed as facts.
//
//	map     main.sessions   map[string]*Session, mapEntries entries, each with a
//	                        sessionBuf-byte buffer
//	slice   main.events     []*Event of length sliceLen (capacity from append),
//	                        each with an eventBuf-byte payload
//	list    main.queue      a list of listLen *Node linked by next, nodeBuf bytes each
//	chan    main.jobs       chan *Job, capacity chanCap, chanLen jobs in its buffer
//	shared  main.requests and main.defaultRegistry point at one *Registry whose
//	                        map holds mapEntries metrics: shared, retained by neither
//	spread  main.byID (map[int]*Record) and main.all ([]*Record) hold the same
//	                        spreadLen records of recordBuf bytes each: shared, and
//	                        no one record keeps most of it (the records are the pile)
//	frame   workers goroutines run main.worker, each with a small buffer; one of
//	                        them (its goroutine id is a fact) holds a []*Record of
//	                        frameLen records in its local variable records
//	goroutines  leakCount goroutines started by main.startLeaky, each blocked for
//	                        good sending on a channel only it holds (leaked by the
//	                        runtime's definition) with a leakBuf-byte buffer
//	none    noneCount globals, each with noneBuf bytes: none reaches 10%
//	static  main.holders    []*Holder whose one Holder points at the Registry the
//	                        compiler allocated in the data segment for
//	                        staticRegistry (set to nil before the dump): its map of
//	                        mapEntries metrics is found only by walking the heap
//
// Besides the leak, each scenario keeps a few small globals, so that the leak is
// not the only thing in the heap.
//
// Usage: suspects -scenario NAME DUMPFILE
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Session struct {
	id  int
	buf []byte
}

type Event struct {
	seq     int
	payload []byte
}

type Node struct {
	next *Node
	buf  [nodeBuf]byte
}

type Job struct {
	id   int
	data []byte
}

type Registry struct {
	name    string
	metrics map[string]*Metric
}

type Metric struct {
	name    string
	samples []float64
}

// Holder holds a registry.
type Holder struct {
	reg *Registry
}

type Record struct {
	key   string
	value []byte
}

var (
	sessions        map[string]*Session
	events          []*Event
	queue           *Node
	jobs            chan *Job
	requests        *Registry
	defaultRegistry *Registry
	byID            map[int]*Record
	all             []*Record
	// none: twenty globals of their own, not one array (which would retain all)
	s00, s01, s02, s03, s04, s05, s06, s07, s08, s09 []byte
	s10, s11, s12, s13, s14, s15, s16, s17, s18, s19 []byte
	config                                           = map[string]string{"mode": "test", "region": "local"}
	names                                            []string
	// a composite literal: the Registry is static, not a heap object
	staticRegistry = &Registry{name: "static", metrics: map[string]*Metric{}}
	holders        []*Holder
)

const (
	mapEntries = 7000
	sessionBuf = 512
	sliceLen   = 6400
	eventBuf   = 640
	listLen    = 5000
	nodeBuf    = 760
	chanCap    = 10000
	chanLen    = 3000
	jobBuf     = 1024
	workers    = 40
	frameLen   = 8000
	spreadLen  = 4000
	recordBuf  = 500
	noneCount  = 20
	noneBuf    = 64 << 10
	leakCount  = 200
	leakBuf    = 16 << 10
)

func goid() int64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseInt(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// worker holds its buffer (and, for the chosen one, records) until release closes.
func worker(chosen bool, ids chan<- int64, ready *sync.WaitGroup, release chan struct{}) {
	buf := make([]byte, 1024)
	var records []*Record
	if chosen {
		for i := 0; i < frameLen; i++ {
			records = append(records, &Record{key: fmt.Sprintf("record-%08d", i),
				value: make([]byte, recordBuf)})
		}
		ids <- goid()
	}
	ready.Done()
	<-release
	runtime.KeepAlive(buf)
	runtime.KeepAlive(records)
}

// leaky blocks for good: nobody else has ch.
func leaky(buf []byte, started *sync.WaitGroup) {
	ch := make(chan int)
	started.Done()
	ch <- len(buf)
	runtime.KeepAlive(buf)
}

func startLeaky() {
	var started sync.WaitGroup
	started.Add(leakCount)
	for i := 0; i < leakCount; i++ {
		go leaky(make([]byte, leakBuf), &started)
	}
	started.Wait()
}

func build(scenario string, facts dump.Facts) func() {
	switch scenario {
	case "map":
		sessions = make(map[string]*Session)
		for i := 0; i < mapEntries; i++ {
			sessions[fmt.Sprintf("session-%08d", i)] = &Session{id: i, buf: make([]byte, sessionBuf)}
		}
		facts["root"], facts["kind"], facts["count"] = "main.sessions", "map", mapEntries
		facts["type"] = "map[string]*main.Session"
		facts["element"], facts["element_bytes"] = "main.Session", sessionBuf
	case "slice":
		for i := 0; i < sliceLen; i++ {
			events = append(events, &Event{seq: i, payload: make([]byte, eventBuf)})
		}
		facts["root"], facts["kind"], facts["count"] = "main.events", "slice", sliceLen
		facts["type"], facts["capacity"] = "[]*main.Event", cap(events)
		facts["element"] = "main.Event"
	case "list":
		for i := 0; i < listLen; i++ {
			queue = &Node{next: queue}
		}
		facts["root"], facts["kind"], facts["count"] = "main.queue", "list", listLen
		facts["type"], facts["element"] = "main.Node", "main.Node"
	case "chan":
		jobs = make(chan *Job, chanCap)
		for i := 0; i < chanLen; i++ {
			jobs <- &Job{id: i, data: make([]byte, jobBuf)}
		}
		facts["root"], facts["kind"], facts["count"] = "main.jobs", "channel", chanLen
		facts["type"], facts["capacity"] = "chan *main.Job", chanCap
		facts["element"] = "main.Job"
	case "shared":
		r := &Registry{name: "default", metrics: make(map[string]*Metric)}
		for i := 0; i < mapEntries; i++ {
			name := fmt.Sprintf("metric_%08d", i)
			r.metrics[name] = &Metric{name: name, samples: make([]float64, 64)}
		}
		requests, defaultRegistry = r, r
		facts["roots"] = []string{"main.defaultRegistry", "main.requests"}
		facts["addr_main.requests"] = dump.Addr(unsafe.Pointer(&requests))
		facts["addr_main.defaultRegistry"] = dump.Addr(unsafe.Pointer(&defaultRegistry))
		facts["kind"], facts["count"] = "map", mapEntries
		facts["type"], facts["element"] = "map[string]*main.Metric", "main.Metric"
	case "spread":
		byID = make(map[int]*Record, spreadLen)
		for i := 0; i < spreadLen; i++ {
			r := &Record{key: fmt.Sprintf("key-%06d", i), value: make([]byte, recordBuf)}
			byID[i] = r
			all = append(all, r)
		}
		facts["roots"] = []string{"main.all", "main.byID"}
		facts["kind"], facts["count"] = "shared", spreadLen
		facts["type"], facts["element"] = "main.Record", "main.Record"
	case "frame":
		ids := make(chan int64, 1)
		release := make(chan struct{})
		var ready sync.WaitGroup
		ready.Add(workers)
		for i := 0; i < workers; i++ {
			go worker(i == workers/2, ids, &ready, release)
		}
		ready.Wait()
		facts["goid"] = <-ids
		facts["root"], facts["kind"], facts["count"] = "main.worker.records", "slice", frameLen
		facts["type"], facts["element"], facts["workers"] = "[]*main.Record", "main.Record", workers
		return func() { close(release) }
	case "goroutines":
		startLeaky()
		for i := 0; i < 100; i++ { // until every one is parked on its send
			runtime.Gosched()
		}
		facts["creator"], facts["goroutines"], facts["buf"] = "main.startLeaky", leakCount, leakBuf
		facts["root"] = "main.leaky.buf"
	case "static":
		r := staticRegistry
		for i := 0; i < mapEntries; i++ {
			name := fmt.Sprintf("metric_%08d", i)
			r.metrics[name] = &Metric{name: name, samples: make([]float64, 64)}
		}
		holders = []*Holder{{reg: r}}
		staticRegistry = nil
		facts["addr_registry"] = dump.Addr(unsafe.Pointer(r))
		facts["kind"], facts["count"] = "map", mapEntries
		facts["type"], facts["element"] = "map[string]*main.Metric", "main.Metric"
	case "none":
		for _, p := range []*[]byte{&s00, &s01, &s02, &s03, &s04, &s05, &s06, &s07, &s08,
			&s09, &s10, &s11, &s12, &s13, &s14, &s15, &s16, &s17, &s18, &s19} {
			*p = make([]byte, noneBuf)
		}
		facts["globals"], facts["global_bytes"] = noneCount, noneBuf
	default:
		fmt.Fprintf(os.Stderr, "suspects: unknown scenario %q\n", scenario)
		os.Exit(2)
	}
	return func() {}
}

func main() {
	scenario := flag.String("scenario", "map", "map, slice, list, chan, shared, spread, frame, goroutines, none or static")
	flag.Parse()
	path := dump.Path(flag.Args())

	for i := 0; i < 50; i++ {
		names = append(names, fmt.Sprintf("name-%d", i))
	}
	facts := dump.NewFacts()
	facts["scenario"] = *scenario
	done := build(*scenario, facts)
	dump.Write(path)
	done()
	runtime.KeepAlive(config)
	facts.Print()
}
