// Command mutator keeps rewriting its heap while heapref takes it live (--pid): the
// pause benchmark (bench/bench_pause.py) and the consistency test of low-pause
// snapshots (tests/e2e/test_pause.py).
//
// It builds -records records, each with a buffer of -buffer bytes, then mutates them
// forever, writing -rate of its heap's pages a second: records relinked (next and peer pointers), a map grown and shrunk,
// a slice appended to and cut, buffers swapped between records and their bytes
// rewritten. Every record stays reachable from the global recs; a buffer only from its
// record, or from the global held while it moves: a swap goes through held, so that at
// every instruction (where a snapshot may stop the program) each buffer is reachable
// from main.recs or main.held, and none only from a register. A snapshot taken at any
// moment reaches exactly -records buffers of -buffer bytes under those two; a torn one
// (a page copied before a write, another after) loses some or has pointers into free
// slots.
//
// -seccomp puts it under a seccomp filter that allows everything, as a container
// runtime's would (heapref then stops it for the whole copy and says why).
//
// It prints "ready PID" once built. A goroutine sleeps 1 ms at a time and keeps the
// longest gap between its wakeups: each SIGUSR1 prints "gap_ms G" (since the previous),
// then each gap over 2 ms as END:LENGTH (nanoseconds, END on CLOCK_MONOTONIC, the clock
// heapref's --stats gives its stop on), and starts again, so a benchmark sees the
// pause as the program saw it, and other delays apart from it.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

type Rec struct {
	ID   int
	Next *Rec
	Peer *Rec
	Buf  []byte
}

var (
	recs   []*Rec
	held   Rec // the buffer on its way from one record to another
	index  = map[int]*Rec{}
	recent []*Rec
	maxGap atomic.Int64
	gaps   = make(chan [2]int64, 1024) // gaps over 2 ms: CLOCK_MONOTONIC at their end, length
)

func build(n, size int) {
	recs = make([]*Rec, n)
	for i := range recs {
		buf := make([]byte, size)
		for j := range buf { // every page of the heap written, as a real one is
			buf[j] = byte(i + j)
		}
		recs[i] = &Rec{ID: i, Buf: buf}
	}
	for i := range recs {
		recs[i].Next = recs[(i+1)%n]
	}
}

// mutate makes k changes of each kind, and rewrites bytes: about rate of the heap
// per second when called every millisecond.
func mutate(r *rand.Rand, k int, bytes int) {
	n := len(recs)
	for i := 0; i < k; i++ {
		a, b := recs[r.Intn(n)], recs[r.Intn(n)]
		a.Next, b.Next = b.Next, a.Next
		a.Peer = b
		swapBuffers(a, b)
		if len(index) < n/4 {
			index[a.ID] = a
		}
		if r.Intn(2) == 0 {
			for id := range index {
				delete(index, id)
				break
			}
		}
		recent = append(recent, a)
		if len(recent) > n/8 {
			recent = nil // dropped whole: the next appends grow a new one
		}
	}
	for done := 0; done < bytes; {
		buf := recs[r.Intn(n)].Buf
		for off := 0; off < len(buf) && done < bytes; off += 4096 {
			buf[off]++
			done += 4096
		}
	}
}

// swapBuffers swaps a's and b's buffers through held: each buffer is in a record or in
// held at every store. The compiler keeps stores to memory in program order.
//
//go:noinline
func swapBuffers(a, b *Rec) {
	held.Buf = a.Buf
	a.Buf = b.Buf
	b.Buf = held.Buf
	held.Buf = nil
}

// allowAll installs a seccomp filter of one instruction, "allow", on every thread.
func allowAll() error {
	const prSetNoNewPrivs, seccompSetModeFilter, filterFlagTsync = 38, 1, 1
	filter := [1]struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}{{code: 0x06, k: 0x7fff0000}} // BPF_RET|BPF_K, SECCOMP_RET_ALLOW
	prog := struct {
		len    uint16
		filter unsafe.Pointer
	}{1, unsafe.Pointer(&filter[0])}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); e != 0 {
		return e
	}
	if _, _, e := syscall.RawSyscall(sysSeccomp, seccompSetModeFilter, filterFlagTsync,
		uintptr(unsafe.Pointer(&prog))); e != 0 {
		return e
	}
	return nil
}

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock heapref notes its stop on.
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func watchGaps() {
	last := monotonic()
	for {
		time.Sleep(time.Millisecond)
		now := monotonic()
		g := now - last
		if g > maxGap.Load() {
			maxGap.Store(g)
		}
		if g > 2e6 {
			select {
			case gaps <- [2]int64{now, g}:
			default:
			}
		}
		last = now
	}
}

func main() {
	records := flag.Int("records", 100000, "records, each with its own buffer")
	buffer := flag.Int("buffer", 1024, "bytes of each record's buffer")
	rate := flag.Float64("rate", 0.01, "part of the heap's pages written per second (0: quiet)")
	filtered := flag.Bool("seccomp", false, "run under a seccomp filter that allows everything")
	flag.Parse()
	if *filtered {
		if err := allowAll(); err != nil {
			fmt.Fprintln(os.Stderr, "mutator: seccomp:", err)
			os.Exit(1)
		}
	}
	build(*records, *buffer)
	// -rate is in pages of the heap written per second: half by rewriting buffers' bytes
	// (one byte a page), half by pointer changes, each of which writes about four
	// pages (two records, the map, the slice).
	pages := float64(*records) * float64(*buffer+48) / 4096 * *rate / 1000 // per millisecond
	perTick := int(pages/2) * 4096                                         // bytes rewritten
	changes := int(pages / 2 / 4)                                          // pointer changes
	if *rate > 0 && changes == 0 {
		changes = 1
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go watchGaps()
	go func() {
		for range usr1 {
			line := fmt.Sprintf("gap_ms %.3f", float64(maxGap.Swap(0))/1e6)
			for more := true; more; {
				select {
				case g := <-gaps:
					line += fmt.Sprintf(" %d:%d", g[0], g[1])
				default:
					more = false
				}
			}
			fmt.Println(line)
		}
	}()
	fmt.Printf("ready %d\n", os.Getpid())
	r := rand.New(rand.NewSource(1))
	for {
		time.Sleep(time.Millisecond)
		if *rate > 0 {
			mutate(r, changes, perTick)
		}
	}
}
