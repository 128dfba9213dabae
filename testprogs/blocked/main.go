// SPDX-License-Identifier: Apache-2.0

// Command blocked has many goroutines blocked for good on channels, each holding a
// small buffer of its own, as a service that leaks goroutines does:
//
//	senders    goroutines in "chan send" on an unbuffered channel nobody reads
//	receivers  goroutines in "chan receive" on a channel nobody writes
//	selectors  goroutines in "select" on two such channels
//
// While a goroutine waits, the runtime's own frames on its stack point to its g and
// to the sudog that queues it on the channel (runtime.chansend's gp and mysg,
// runtime.selectgo's ...): heapref must charge that memory to the goroutine's
// bookkeeping, not to runtime variables, and each buffer to the frame variable of
// main.send, main.receive or main.choose that holds it.
//
// Usage: blocked DUMPFILE
package main

import (
	"os"
	"runtime"
	"time"

	"heapref/testprogs/internal/dump"
)

const (
	senders   = 200
	receivers = 200
	selectors = 200
)

// bufSize is a variable, so that each buffer is on the heap: the compiler keeps a
// small buffer of constant size on the goroutine's stack.
var bufSize = 2048

var (
	never    = make(chan []byte) // nobody receives
	nothing  = make(chan []byte) // nobody sends
	nothing2 = make(chan int)
	sink     int
)

//go:noinline
func send() {
	buf := make([]byte, bufSize)
	buf[0] = 1
	never <- nil
	sink += int(buf[0])
	runtime.KeepAlive(buf)
}

//go:noinline
func receive() {
	buf := make([]byte, bufSize)
	buf[0] = 2
	<-nothing
	sink += int(buf[0])
	runtime.KeepAlive(buf)
}

//go:noinline
func choose() {
	buf := make([]byte, bufSize)
	buf[0] = 3
	select {
	case <-nothing:
	case <-nothing2:
	}
	sink += int(buf[0])
	runtime.KeepAlive(buf)
}

func main() {
	path := dump.Path(os.Args[1:])
	for i := 0; i < senders; i++ {
		go send()
	}
	for i := 0; i < receivers; i++ {
		go receive()
	}
	for i := 0; i < selectors; i++ {
		go choose()
	}
	for runtime.NumGoroutine() < 1+senders+receivers+selectors {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // each one parked on its channel

	dump.Write(path)

	facts := dump.NewFacts()
	facts["senders"] = senders
	facts["receivers"] = receivers
	facts["selectors"] = selectors
	facts["buf_size"] = bufSize
	facts["kept_objects"] = int64(senders + receivers + selectors)
	facts["kept_bytes"] = int64((senders + receivers + selectors) * bufSize)
	facts["goroutines"] = runtime.NumGoroutine()
	facts.Print()
}
