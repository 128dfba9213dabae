// SPDX-License-Identifier: Apache-2.0

// Command leak leaks goroutines: main.start starts workers goroutines that each
// allocate a bufSize-byte buffer and then wait on a channel no one ever sends on or
// closes, as a forgotten request fan-out does. When they are all blocked, it writes the
// dump: the workers are one kind of goroutine (created by main.start, blocked in
// "chan receive", main.worker on their stacks), holding workers buffers.
//
// Usage: leak DUMPFILE
package main

import (
	"os"
	"runtime"
	"sync"

	"heapref/testprogs/internal/dump"
)

const workers = 1000

// bufSize is a variable: a buffer of a size known only at run time is on the heap,
// not on the goroutine's stack.
var bufSize = 4096

var started sync.WaitGroup

//go:noinline
func worker(ch chan int, id int) {
	buf := make([]byte, bufSize)
	for i := range buf {
		buf[i] = byte(id)
	}
	started.Done()
	<-ch // never: nobody sends or closes
	runtime.KeepAlive(buf)
}

//go:noinline
func start() {
	ch := make(chan int)
	for i := 0; i < workers; i++ {
		go worker(ch, i)
	}
}

func main() {
	path := dump.Path(os.Args[1:])

	started.Add(workers)
	start()
	started.Wait()

	facts := dump.NewFacts()
	facts["workers"] = workers
	facts["buf_size"] = bufSize
	facts["creator"] = "main.start"
	facts["kept_objects"] = int64(workers)
	facts["kept_bytes"] = int64(workers * bufSize)
	dump.Write(path)
	facts.Print()
}
