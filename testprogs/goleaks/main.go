// SPDX-License-Identifier: Apache-2.0

// Command goleaks has goroutines leaked by the runtime's definition (blocked on a
// channel, select, sync.Mutex, WaitGroup or Cond that no goroutine that may still run
// can reach) beside goroutines that wait for good reasons, for heapref goroutines to
// tell apart. Each kind is started by a function of its own, which names its group
// (created_by):
//
//	leaked:
//	  main.leakSend       chan send on a channel only the goroutine holds
//	  main.leakRecv       chan receive, likewise
//	  main.leakSelect     select on two such channels
//	  main.leakMutex      sync.Mutex.Lock on a mutex locked for good, held by nobody else
//	  main.leakWaitGroup  sync.WaitGroup.Wait on a group never done
//	  main.leakCond       sync.Cond.Wait on a cond nobody signals
//	  main.leakChain      two goroutines: one receives on a channel only the other
//	                      holds, the other on a channel only it holds
//	  main.leakStack      chan send, its buffer on its own stack (no heap memory)
//	  main.leakNil        receive on a nil channel
//	not leaked:
//	  main.startPool      workers ranging over a global channel
//	  main.startSleepers  time.Sleep
//	  main.startTicker    a ticker loop
//	  main.startGlobalMu  sync.Mutex.Lock on a global mutex
//	  main.startNet       a loopback listener's Accept and a connection's Read
//	  main.startSyscall   a read(2) of a pipe nobody writes: in a system call
//	  main.startHTTP      an HTTP server on loopback and a client that made two
//	                      requests: the server's connection goroutines
//	                      (net/http.(*Server).Serve) and the client's keep-alive
//	                      connection (net/http.(*Transport).dialConn) stay, idle
//
// It writes the heap dump, then, where the runtime has one (Go 1.27, or Go 1.26
// built with GOEXPERIMENT=goroutineleakprofile), the runtime's goroutine leak profile
// with every goroutine's stack (debug=2: leaked ones say "(leaked)") to DUMPFILE.leaks:
// the dump first, as a process whose goroutines the profile marked leaked cannot be
// dumped (Go 1.27.4: "dumpgs in STW - bad status").
//
// With -hold-after-profile, it holds for a test's core (testprogs/internal/dump: HoldFD)
// after the profile rather than after the dump: the runtime has then marked the leaked
// goroutines with its "leaked" status (Go 1.26 and later).
//
// Usage: goleaks [-hold-after-profile] DUMPFILE
package main

import (
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"heapref/testprogs/internal/dump"
)

// Each leaked kind's count; bufSize, a variable, puts each buffer on the heap.
const perKind = 3

var (
	bufSize  = 1024
	started  sync.WaitGroup
	jobs     = make(chan int)
	globalMu sync.Mutex
	sink     int
	keep     []net.Conn // the loopback connection, both ends
	pipe     []*os.File
	server   *http.Server
)

//go:noinline
func leakSend() {
	for i := 0; i < perKind; i++ {
		ch := make(chan []byte)
		started.Add(1)
		go func() {
			buf := make([]byte, bufSize)
			started.Done()
			ch <- buf
		}()
	}
}

//go:noinline
func leakRecv() {
	for i := 0; i < perKind; i++ {
		ch := make(chan int)
		started.Add(1)
		go func() {
			buf := make([]byte, bufSize)
			started.Done()
			<-ch
			runtime.KeepAlive(buf)
		}()
	}
}

//go:noinline
func leakSelect() {
	for i := 0; i < perKind; i++ {
		a, b := make(chan int), make(chan string)
		started.Add(1)
		go func() {
			buf := make([]byte, bufSize)
			started.Done()
			select {
			case <-a:
			case <-b:
			}
			runtime.KeepAlive(buf)
		}()
	}
}

// A lock and a group on objects of their own: an 8-byte sync.Mutex alone would share a
// tiny allocator block with other small objects, and be kept alive by them.
type guarded struct {
	mu  sync.Mutex
	wg  sync.WaitGroup
	pad [64]byte
}

//go:noinline
func leakMutex() {
	for i := 0; i < perKind; i++ {
		mu := &new(guarded).mu
		mu.Lock()
		started.Add(1)
		go func() {
			buf := make([]byte, bufSize)
			started.Done()
			mu.Lock()
			runtime.KeepAlive(buf)
		}()
	}
}

//go:noinline
func leakWaitGroup() {
	for i := 0; i < perKind; i++ {
		wg := &new(guarded).wg
		wg.Add(1)
		started.Add(1)
		go func() {
			buf := make([]byte, bufSize)
			started.Done()
			wg.Wait()
			runtime.KeepAlive(buf)
		}()
	}
}

//go:noinline
func leakCond() {
	for i := 0; i < perKind; i++ {
		c := sync.NewCond(new(sync.Mutex))
		started.Add(1)
		go func() {
			buf := make([]byte, bufSize)
			c.L.Lock()
			started.Done()
			c.Wait()
			runtime.KeepAlive(buf)
		}()
	}
}

//go:noinline
func chainHead(a chan int, b chan int) {
	buf := make([]byte, bufSize)
	started.Done()
	<-b // only this goroutine holds b; it also holds a, which the other waits on
	a <- 1
	runtime.KeepAlive(buf)
}

//go:noinline
func chainTail(a chan int) {
	buf := make([]byte, bufSize)
	started.Done()
	<-a
	runtime.KeepAlive(buf)
}

//go:noinline
func leakChain() {
	for i := 0; i < perKind; i++ {
		a, b := make(chan int), make(chan int)
		started.Add(2)
		go chainTail(a)
		go chainHead(a, b)
	}
}

//go:noinline
func stackBuffer(ch chan int) {
	var buf [16 << 10]byte // on the goroutine's stack: no heap memory
	for i := range buf {
		buf[i] = byte(i)
	}
	started.Done()
	ch <- int(buf[100])
}

//go:noinline
func leakStack() {
	for i := 0; i < perKind; i++ {
		started.Add(1)
		go stackBuffer(make(chan int))
	}
}

//go:noinline
func leakNil() {
	started.Add(1)
	go func() {
		var ch chan int
		started.Done()
		<-ch
	}()
}

//go:noinline
func startPool() {
	for i := 0; i < perKind; i++ {
		started.Add(1)
		go func() {
			started.Done()
			for j := range jobs {
				sink += j
			}
		}()
	}
}

//go:noinline
func startSleepers() {
	for i := 0; i < perKind; i++ {
		started.Add(1)
		go func() {
			started.Done()
			time.Sleep(time.Hour)
		}()
	}
}

//go:noinline
func startTicker() {
	started.Add(1)
	go func() {
		t := time.NewTicker(time.Hour)
		started.Done()
		for range t.C {
			sink++
		}
	}()
}

//go:noinline
func startGlobalMu() {
	globalMu.Lock()
	started.Add(1)
	go func() {
		started.Done()
		globalMu.Lock()
		sink++
	}()
}

//go:noinline
func startNet() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		dump.Fail(err)
	}
	accepted := make(chan net.Conn)
	started.Add(2)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			dump.Fail(err)
		}
		accepted <- c
		started.Done()
		_, _ = ln.Accept() // waits for good: the listener is open
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		dump.Fail(err)
	}
	server := <-accepted
	keep = []net.Conn{client, server}
	go func() {
		b := make([]byte, 1)
		started.Done()
		_, _ = server.Read(b) // the client never writes
	}()
}

//go:noinline
func startSyscall() {
	r, w, err := os.Pipe()
	if err != nil {
		dump.Fail(err)
	}
	pipe = []*os.File{r, w}
	fd := int(r.Fd()) // in blocking mode from now on: a read is a system call that waits
	started.Add(1)
	go func() {
		var b [1]byte
		started.Done()
		_, _ = syscall.Read(fd, b[:])
	}()
}

//go:noinline
func startHTTP() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		dump.Fail(err)
	}
	server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})}
	go func() { _ = server.Serve(ln) }()
	for i := 0; i < 2; i++ { // the second request reuses the kept-alive connection
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			dump.Fail(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

func main() {
	holdAfterProfile := flag.Bool("hold-after-profile", false, "hold after the leak profile")
	flag.Parse()
	path := dump.Path(flag.Args())
	dump.HoldLater = *holdAfterProfile
	for _, start := range []func(){leakSend, leakRecv, leakSelect, leakMutex, leakWaitGroup,
		leakCond, leakChain, leakStack, leakNil, startPool, startSleepers, startTicker,
		startGlobalMu, startNet, startSyscall, startHTTP} {
		start()
	}
	started.Wait()
	time.Sleep(100 * time.Millisecond) // each one parked where it waits

	dump.Write(path)
	facts := dump.NewFacts()
	facts["per_kind"] = perKind
	facts["buf_size"] = bufSize
	facts["leaked_creators"] = []string{"main.leakSend", "main.leakRecv", "main.leakSelect",
		"main.leakMutex", "main.leakWaitGroup", "main.leakCond", "main.leakChain",
		"main.leakStack", "main.leakNil"}
	facts["healthy_creators"] = []string{"main.startPool", "main.startSleepers",
		"main.startTicker", "main.startGlobalMu", "main.startNet", "main.startSyscall",
		"main.startHTTP", "net/http.(*Server).Serve", "net/http.(*Transport).dialConn"}
	if p := pprof.Lookup("goroutineleak"); p != nil {
		f, err := os.Create(path + ".leaks")
		if err != nil {
			dump.Fail(err)
		}
		if err := p.WriteTo(f, 2); err != nil {
			dump.Fail(err)
		}
		if err := f.Close(); err != nil {
			dump.Fail(err)
		}
		facts["leak_profile"] = path + ".leaks"
	}
	if *holdAfterProfile {
		dump.Hold()
	}
	facts.Print()
}
