// SPDX-License-Identifier: Apache-2.0

// Package dump holds the few helpers every test program shares: argument
// parsing, writing the heap dump and printing the facts JSON.
//
// Nothing in here allocates anything the programs count in kept_objects /
// kept_bytes, so it does not change the heap shapes the programs build.
package dump

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
	"unsafe"
)

// Facts is the JSON object a program prints on stdout. encoding/json sorts
// map keys, so the output is stable.
type Facts map[string]interface{}

// NewFacts returns a Facts with the keys every program reports.
func NewFacts() Facts {
	return Facts{
		"go_version":   runtime.Version(),
		"goarch":       runtime.GOARCH,
		"pointer_size": int(unsafe.Sizeof(uintptr(0))),
	}
}

// Path returns the dump file named on the command line (the last argument,
// so programs with flags can use flag.Args()). It exits with status 2 on a
// usage error.
func Path(args []string) string {
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintf(os.Stderr, "usage: %s [flags] DUMPFILE\n", os.Args[0])
		os.Exit(2)
	}
	return args[0]
}

// Write runs the garbage collector twice (so everything unreachable has been
// swept and objects with finalizers have been queued) and writes the heap
// dump to path, creating or truncating it. It exits with status 1 on error.
func Write(path string) {
	WriteAfter(path, nil)
}

// WriteAfter is Write with then (if not nil) run after the two collections,
// right before the dump, with the collector off: every collection empties a
// sync.Pool, so a program fills its pools in then.
func WriteAfter(path string, then func()) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		Fail(err)
	}
	runtime.GC()
	runtime.GC()
	if then != nil {
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		then()
	}
	start := time.Now()
	debug.WriteHeapDump(f.Fd())
	WriteSeconds = time.Since(start).Seconds()
	if !HoldLater {
		hold()
	}
	if err := f.Close(); err != nil {
		Fail(err)
	}
}

// Print writes the facts as one JSON object on one line to stdout.
func (f Facts) Print() {
	b, err := json.Marshal(f)
	if err != nil {
		Fail(err)
	}
	b = append(b, '\n')
	if _, err := os.Stdout.Write(b); err != nil {
		Fail(err)
	}
}

// Addr returns the address p points to as a number for the facts.
func Addr(p unsafe.Pointer) uint64 {
	return uint64(uintptr(p))
}

// Fail prints err and exits with status 1.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

// HoldFD is the file descriptor a test opens (one end of a socket pair) when it wants
// the process held after the dump, to take a core of the state the dump shows.
const HoldFD = 100

// hold, when the test opened HoldFD, says "held" on it and waits for a byte (or the end)
// from it. Without that descriptor both calls fail at once. It allocates nothing (an
// environment variable would: os.Getenv copies the environment into a map on first
// use; so would a local buffer), and the caller's frame keeps what it kept while the dump was written (f is used
// after), so the core's heap is the dump's heap.
// HoldLater, set, has Write not hold after the dump: the program calls Hold itself
// when the state to take a core of is reached.
var HoldLater bool

// Hold holds as Write does after the dump (when the test opened HoldFD).
func Hold() { hold() }

func hold() {
	if n, _ := syscall.Write(HoldFD, holdMsg[:]); n != len(holdMsg) {
		return
	}
	syscall.Read(HoldFD, holdBuf[:])
}

// WriteSeconds is how long the last runtime/debug.WriteHeapDump took (benchmarks).
var WriteSeconds float64

// Globals, not locals: a local array passed to a system call escapes to the heap.
var (
	holdMsg = [...]byte{'h', 'e', 'l', 'd', '\n'}
	holdBuf [1]byte
)
