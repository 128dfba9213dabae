// Command seedprog writes the heap dump behind the seeds of the fuzz_analyze target
// (tests/fuzz/README.md): one small heap with a value of every shape heapref's typed
// walk knows, so that one binary serves every seed.
//
//	main.gList    *Node             8 nodes in a ring, each with a *Leaf
//	main.gSlice   []*Leaf           12 leaves, 4 nil slots past len
//	main.gString  string            built at run time
//	main.gHolder  Holder            a struct of every field kind
//	main.gArray   [8]*Leaf          sparse
//	main.gSmall   map[int]*Leaf     6 entries (one swiss group)
//	main.gBig     map[string]*Rect  100 entries (swiss directory and tables)
//	main.gChan    chan *Leaf        buffered, 5 of 8 slots full
//	main.gFunc    func() int        closure capturing a slice and an int
//	main.gShapes  []Shape           interfaces holding *Rect and Small
//	main.gAny     []interface{}     *Leaf (direct), string, []byte, int64
//	main.gUnsafe  unsafe.Pointer    to a Rect
//	main.gAtomic  atomic.Pointer    to a Node
//	a finalizer on a *Rect no variable holds, and 3 goroutines blocked in a
//	channel receive, each with a local list.
//
// Usage: seedprog DUMPFILE
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

type Leaf struct {
	ID   int64
	Data [24]byte
}

type Node struct {
	Next *Node
	Val  int64
	Leaf *Leaf
}

type Shape interface{ Area() int64 }

type Rect struct {
	W, H int64
	Tag  *Leaf
}

func (r *Rect) Area() int64 { return r.W * r.H }

type Small int64

func (s Small) Area() int64 { return int64(s) }

type Holder struct {
	Name  string
	P     *Node
	Items []*Leaf
	M     map[string]*Leaf
	C     chan *Leaf
	F     func() int
	I     Shape
	E     interface{}
	U     unsafe.Pointer
	A     atomic.Pointer[Leaf]
	Arr   [4]*Leaf
	Count int64
}

var (
	gList   *Node
	gSlice  []*Leaf
	gString string
	gHolder Holder
	gArray  [8]*Leaf
	gSmall  map[int]*Leaf
	gBig    map[string]*Rect
	gChan   chan *Leaf
	gFunc   func() int
	gShapes []Shape
	gAny    []interface{}
	gUnsafe unsafe.Pointer
	gAtomic atomic.Pointer[Node]
	stop    = make(chan struct{})
	nextID  int64
)

func leaf() *Leaf {
	nextID++
	return &Leaf{ID: nextID}
}

func ring(n int) *Node {
	head := &Node{Val: 0, Leaf: leaf()}
	p := head
	for i := 1; i < n; i++ {
		p.Next = &Node{Val: int64(i), Leaf: leaf()}
		p = p.Next
	}
	p.Next = head
	return head
}

//go:noinline
func makeClosure(n int) func() int {
	buf := make([]byte, 256)
	return func() int { return len(buf) + n }
}

//go:noinline
func holder(n int, ready *sync.WaitGroup) {
	head := ring(n)
	ready.Done()
	<-stop
	runtime.KeepAlive(head)
}

func build() {
	gList = ring(8)
	gSlice = make([]*Leaf, 12, 16)
	for i := range gSlice {
		gSlice[i] = leaf()
	}
	gString = strings.Repeat("seed", 20)
	gHolder = Holder{
		Name:  fmt.Sprint("holder-", os.Getpid()%7),
		P:     ring(3),
		Items: []*Leaf{leaf(), nil, leaf()},
		M:     map[string]*Leaf{"a": leaf(), "b": leaf()},
		C:     make(chan *Leaf, 2),
		F:     makeClosure(3),
		I:     &Rect{W: 2, H: 3, Tag: leaf()},
		E:     []byte("held by an empty interface"),
		U:     unsafe.Pointer(leaf()),
		Count: 7,
	}
	gHolder.C <- leaf()
	gHolder.A.Store(leaf())
	gHolder.Arr[1] = leaf()
	gArray[0], gArray[5] = leaf(), leaf()
	gSmall = map[int]*Leaf{}
	for i := 0; i < 6; i++ {
		gSmall[i] = leaf()
	}
	gBig = map[string]*Rect{}
	for i := 0; i < 100; i++ {
		gBig[fmt.Sprint("key-", i)] = &Rect{W: int64(i), H: 1, Tag: leaf()}
	}
	gChan = make(chan *Leaf, 8)
	for i := 0; i < 5; i++ {
		gChan <- leaf()
	}
	gFunc = makeClosure(5)
	gShapes = []Shape{&Rect{W: 1, H: 1, Tag: leaf()}, Small(4), nil}
	gAny = []interface{}{leaf(), fmt.Sprint("str-", nextID), []byte{1, 2, 3}, int64(1 << 40)}
	gUnsafe = unsafe.Pointer(&Rect{W: 9, H: 9, Tag: leaf()})
	gAtomic.Store(ring(2))
	final := &Rect{W: 5, H: 5, Tag: leaf()}
	runtime.SetFinalizer(final, func(r *Rect) { r.W = r.Area() })
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: seedprog DUMPFILE")
		os.Exit(2)
	}
	build()
	var ready sync.WaitGroup
	for i := 0; i < 3; i++ {
		ready.Add(1)
		go holder(4+i, &ready)
	}
	ready.Wait()
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.GC()
	runtime.GC()
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	close(stop)
}
