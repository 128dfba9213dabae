// SPDX-License-Identifier: Apache-2.0

// Command closure keeps a buffer alive only through a heap-allocated
// closure stored in a func-typed global:
//
//	main.gFunc func() int -> closure object {code pointer, buf slice, n int}
//	                          -> 4096-byte buffer captured by the closure
//
// makeClosure returns the closure, so it escapes to the heap. The closure's
// code is "closure_func_name" (main.makeClosure.func1). A correct analysis
// must follow the func value to the closure object and from its captured
// slice to the buffer, attributing both to main.gFunc.
//
// main.gHandlers holds closures in a struct field (handler.fn), each capturing a
// 512-byte buffer: the closure is named from the field's frame as from gFunc.
//
// Usage: closure DUMPFILE
package main

import (
	"os"
	"runtime"
	"time"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

const bufSize = 4096

var gFunc func() int

// bufAddr is the captured buffer's address, recorded as a plain integer.
var bufAddr uintptr

// timerBufs 1 KiB buffers are captured by as many closures given to time.AfterFunc
// (due in an hour): the runtime's timer heap holds the closures in its timers' arg (an
// interface holding the func value), as a service's pending callbacks are held.
const (
	timerBufs   = 100
	timerBuf    = 1024
	timerClosed = "main.schedule.func1"
)

var sink int

// gHandlers holds handlerCount handlers, each a struct of a name and a func value whose
// closure captures a handlerBuf-byte buffer: a callback kept in a struct, as a service
// keeps its handlers. The closure is reached through the struct's fn field.
const (
	handlerCount   = 8
	handlerBuf     = 512
	handlerClosure = "main.makeHandler.func1"
)

type handler struct {
	name string
	fn   func() int
}

var gHandlers []*handler

// handlerClosureAddr and handlerBufAddr are handler 0's closure object and buffer.
var handlerClosureAddr, handlerBufAddr uint64

//go:noinline
func makeHandler(i int) *handler {
	buf := make([]byte, handlerBuf)
	buf[0] = byte(i)
	h := &handler{name: "handler", fn: func() int { return int(buf[0]) }}
	if i == 0 {
		handlerClosureAddr = dump.Addr(*(*unsafe.Pointer)(unsafe.Pointer(&h.fn)))
		handlerBufAddr = dump.Addr(unsafe.Pointer(&buf[0]))
	}
	return h
}

func schedule(i int) *time.Timer {
	buf := make([]byte, timerBuf)
	buf[0] = byte(i)
	return time.AfterFunc(time.Hour, func() { sink += int(buf[0]) })
}

//go:noinline
func makeClosure(n int) func() int {
	buf := make([]byte, bufSize)
	for i := range buf {
		buf[i] = byte(i * n)
	}
	bufAddr = uintptr(unsafe.Pointer(&buf[0]))
	return func() int {
		s := n
		for _, b := range buf {
			s += int(b)
		}
		return s
	}
}

func main() {
	path := dump.Path(os.Args[1:])
	for i := 0; i < timerBufs; i++ {
		schedule(i)
	}
	for i := 0; i < handlerCount; i++ {
		gHandlers = append(gHandlers, makeHandler(i))
	}
	n := os.Getpid()
	gFunc = makeClosure(n)

	closure := *(*unsafe.Pointer)(unsafe.Pointer(&gFunc))
	code := *(*uintptr)(closure)
	ptrSize := int64(unsafe.Sizeof(uintptr(0)))
	// code pointer + slice header + int
	closureSize := ptrSize + int64(unsafe.Sizeof([]byte(nil))) + int64(unsafe.Sizeof(n))

	facts := dump.NewFacts()
	facts["buf_size"] = bufSize
	facts["captured_int"] = n
	facts["addr_main.gFunc"] = dump.Addr(unsafe.Pointer(&gFunc))
	facts["ptr_main.gFunc"] = dump.Addr(closure)
	facts["closure_code"] = uint64(code)
	facts["closure_func_name"] = runtime.FuncForPC(code).Name()
	facts["closure_size"] = closureSize
	facts["ptr_buf"] = uint64(bufAddr)
	facts["kept_objects_main.gFunc"] = 2
	facts["kept_bytes_main.gFunc"] = closureSize + bufSize
	facts["kept_objects"] = 2
	facts["kept_bytes"] = closureSize + bufSize
	facts["call_result"] = gFunc()
	facts["timer_bufs"] = timerBufs
	facts["timer_buf"] = timerBuf
	facts["timer_closure"] = timerClosed
	facts["handler_count"] = handlerCount
	facts["handler_closure"] = handlerClosure
	facts["ptr_handler_closure"] = handlerClosureAddr
	facts["ptr_handler_buf"] = handlerBufAddr

	dump.Write(path)
	runtime.KeepAlive(gFunc)
	runtime.KeepAlive(gHandlers)
	facts.Print()
}
