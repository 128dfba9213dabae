// SPDX-License-Identifier: Apache-2.0

// Command finalizer registers finalizers on six 128-byte Res objects:
//
//	main.gFinal *Res -> one Res that stays reachable; its finalizer is still
//	                    registered (a "finalizer" record in the dump)
//	five more Res    -> unreachable; the first GC queues their finalizers
//	                    (the queued objects stay alive for the finalizer:
//	                    "queued finalizer" records in the dump)
//
// Every finalizer blocks forever on a channel, so the finalizer goroutine
// runs exactly one of the queued finalizers and then stays blocked inside it
// (its frame holds that object); the other four stay in the queue. The
// program waits for that first finalizer to start before dumping.
//
// A correct analysis must find main.gFinal keeping its Res (kept_* facts,
// which count only that object), and should show the five unreachable
// objects as kept by the finalizer queue / finalizer goroutine rather than
// by any variable of main.
//
// Usage: finalizer DUMPFILE
package main

import (
	"os"
	"runtime"
	"time"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Res struct {
	ID   int64
	Data [120]byte
}

const unreachable = 5

var (
	gFinal  *Res
	started = make(chan int64, 16)
	block   = make(chan struct{})
)

func finalize(r *Res) {
	started <- r.ID
	<-block
}

func newRes(id int64) *Res {
	r := &Res{ID: id}
	for i := range r.Data {
		r.Data[i] = byte(id)
	}
	runtime.SetFinalizer(r, finalize)
	return r
}

//go:noinline
func makeGarbage() {
	for i := int64(1); i <= unreachable; i++ {
		newRes(i)
	}
}

func main() {
	path := dump.Path(os.Args[1:])

	gFinal = newRes(0)
	makeGarbage()
	runtime.GC()

	// Wait until the finalizer goroutine has started (and blocked in) the
	// first queued finalizer.
	firstStarted := int64(-1)
	select {
	case firstStarted = <-started:
	case <-time.After(10 * time.Second):
	}

	dump.Write(path)

	// Anything else that started by now (should be nothing).
	startedCount := 0
	if firstStarted >= 0 {
		startedCount = 1
	}
	for more := true; more; {
		select {
		case <-started:
			startedCount++
		default:
			more = false
		}
	}

	resSize := int64(unsafe.Sizeof(Res{}))
	facts := dump.NewFacts()
	facts["finalizers_registered"] = 1 + unreachable
	facts["finalizers_reachable"] = 1
	facts["finalizers_unreachable"] = unreachable
	facts["finalizers_started"] = startedCount
	facts["first_finalized_id"] = firstStarted
	facts["finalizer_func_name"] = "main.finalize"
	facts["sizeof_main.Res"] = resSize
	facts["addr_main.gFinal"] = dump.Addr(unsafe.Pointer(&gFinal))
	facts["ptr_main.gFinal"] = dump.Addr(unsafe.Pointer(gFinal))
	facts["kept_objects_main.gFinal"] = 1
	facts["kept_bytes_main.gFinal"] = resSize
	// The reachable one plus the five kept alive for their finalizers.
	facts["kept_objects"] = 1 + unreachable
	facts["kept_bytes"] = (1 + unreachable) * resSize
	runtime.KeepAlive(gFinal)
	facts.Print()
}
