// SPDX-License-Identifier: Apache-2.0

// Command goroutine keeps memory alive only through the stack of a blocked
// goroutine: main.worker allocates a 1 MiB buffer and a 10-node linked list
// into locals, signals ready, then blocks forever receiving from a channel.
//
//	goroutine running main.worker, wait reason "chan receive"
//	  local buf  []byte -> 1 MiB backing array
//	  local head *Node  -> 10 Node (linked through next)
//
// No global points to any of it. A correct analysis must find the worker
// goroutine (id "worker_goid") blocked in "chan receive" and attribute the
// buffer and the list to a root in the frame of main.worker.
//
// Usage: goroutine DUMPFILE
package main

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Node struct {
	next *Node
	val  int64
	pad  [48]byte
}

const (
	bufSize = 1 << 20
	nodes   = 10
)

// Filled in by the worker before it signals ready. Plain integers, so they
// keep nothing alive.
var (
	workerGoid     int64
	workerBufAddr  uintptr
	workerHeadAddr uintptr
	sink           int64
)

// worker must not be inlined into the "go" statement wrapper, so that its
// frame is named main.worker in the dump.
//
//go:noinline
func worker(ready chan<- struct{}, stop <-chan struct{}) {
	buf := make([]byte, bufSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	var head *Node
	for i := 0; i < nodes; i++ {
		head = &Node{next: head, val: int64(i)}
	}

	workerGoid = currentGoid()
	workerBufAddr = uintptr(unsafe.Pointer(&buf[0]))
	workerHeadAddr = uintptr(unsafe.Pointer(head))
	ready <- struct{}{}

	<-stop

	s := int64(buf[len(buf)-1])
	for n := head; n != nil; n = n.next {
		s += n.val
	}
	sink = s
	runtime.KeepAlive(buf)
	runtime.KeepAlive(head)
}

// currentGoid parses "goroutine N [running]:" from the goroutine's own trace.
func currentGoid() int64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	id, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return id
}

// waitReason returns what the traceback of goroutine id shows in brackets,
// without the ", N minutes" suffix, e.g. "chan receive".
func waitReason(id int64) string {
	b := make([]byte, 1<<20)
	b = b[:runtime.Stack(b, true)]
	prefix := []byte("goroutine " + strconv.FormatInt(id, 10) + " [")
	i := bytes.Index(b, prefix)
	if i < 0 {
		return ""
	}
	rest := b[i+len(prefix):]
	j := bytes.IndexByte(rest, ']')
	if j < 0 {
		return ""
	}
	reason := string(rest[:j])
	if k := strings.Index(reason, ","); k >= 0 {
		reason = reason[:k]
	}
	return reason
}

func main() {
	path := dump.Path(os.Args[1:])

	ready := make(chan struct{})
	stop := make(chan struct{})
	go worker(ready, stop)
	<-ready

	dump.Write(path)

	facts := dump.NewFacts()
	facts["buf_size"] = bufSize
	facts["nodes"] = nodes
	facts["sizeof_main.Node"] = int64(unsafe.Sizeof(Node{}))
	facts["offsetof_main.Node.next"] = int64(unsafe.Offsetof(Node{}.next))
	facts["worker_function"] = "main.worker"
	facts["worker_goid"] = workerGoid
	facts["worker_wait_reason"] = waitReason(workerGoid)
	facts["expected_wait_reason"] = "chan receive"
	facts["ptr_worker.buf"] = uint64(workerBufAddr)
	facts["ptr_worker.head"] = uint64(workerHeadAddr)
	facts["kept_objects"] = int64(1 + nodes)
	facts["kept_bytes"] = int64(bufSize) + nodes*int64(unsafe.Sizeof(Node{}))
	facts.Print()
	runtime.KeepAlive(stop)
}
