// SPDX-License-Identifier: Apache-2.0

// Command iface keeps heap objects alive only through interface values:
//
//	main.gIface interface{} = &Big{...}   (type word *main.Big, data word -> Big)
//	                                        Big.Payload -> 2048-byte buffer
//	main.gAny   any         = Small{...}  (type word main.Small, data word ->
//	                                        a heap copy of the 24-byte Small)
//	main.gErr   error       = &MyErr{...} (itab word for (error, *main.MyErr),
//	                                        data word -> MyErr -> Msg string)
//	main.gWord  any         = OneWord{P: &Small{...}}
//	                                       (one pointer word after a zero-size
//	                                        field: Go <= 1.25 boxes it, the data
//	                                        word -> a heap copy of OneWord -> Small;
//	                                        Go 1.26 stores it in the data word
//	                                        itself, data word -> Small)
//
// main.gHolders []*Holder holds four heap structs {A *Small; V any; B []byte}, V
// holding a *Big (a pointer in the data word), a boxed Small, a map (a map pointer in
// the data word) and a OneWord. The interface sits between two fields of other kinds:
// each of A, V's value and B is named by its field in every holder.
//
// Which of the two gWord is, the program reads from its own interface words:
// "boxed_main.gWord" is 1 when the data word is not the OneWord's P.
// All three are assigned in main from run-time values, so the compiler
// cannot lay the boxed values out statically. A correct analysis must read
// the first word of each interface: for an empty interface it is the runtime
// type ("type_word_<name>" names "type_name_<name>"), for a non-empty one it
// is an itab ("itab_word_main.gErr", whose type is "itab_type_word_main.gErr",
// the same address as reflect's *main.MyErr type), and follow the second
// word ("ptr_<name>") to the object.
//
// Usage: iface DUMPFILE
package main

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Big struct {
	Name    string
	Payload []byte
	N       [32]int64
}

type Small struct {
	X, Y, Z int64
}

type MyErr struct {
	Code int
	Msg  string
}

func (e *MyErr) Error() string { return e.Msg }

// OneWord is one word of size and one of pointers, in two fields: the Go 1.26 compiler
// stores it directly in an interface's data word (by size), older ones box it (by
// shape: a struct of one field only).
type OneWord struct {
	_ struct{}
	P *Small
}

// Holder is a heap struct with an interface between a pointer and a slice.
type Holder struct {
	A *Small
	V any
	B []byte
}

const holderBytes = 64 // holder i's B is (i+1)*holderBytes long

var gHolders []*Holder

// makeHolders fills gHolders; facts get each holder's address, its A, B and V words.
func makeHolders(pid int64, facts dump.Facts) {
	vals := []any{
		&Big{Name: "held", Payload: make([]byte, payloadSize)},
		Small{X: pid, Y: pid + 6, Z: pid + 7},
		map[int]*Small{1: {X: pid + 8}},
		OneWord{P: &Small{X: pid + 9}},
	}
	for i, v := range vals {
		h := &Holder{A: &Small{X: pid + int64(i)}, V: v, B: make([]byte, (i+1)*holderBytes)}
		gHolders = append(gHolders, h)
	}
	for i, h := range gHolders {
		_, d := words(unsafe.Pointer(&h.V))
		facts[fmt.Sprintf("ptr_holder%d", i)] = dump.Addr(unsafe.Pointer(h))
		facts[fmt.Sprintf("ptr_holder%d.A", i)] = dump.Addr(unsafe.Pointer(h.A))
		facts[fmt.Sprintf("ptr_holder%d.B", i)] = dump.Addr(unsafe.Pointer(&h.B[0]))
		facts[fmt.Sprintf("ptr_holder%d.V", i)] = d
	}
	facts["ptr_holder3.V.P"] = dump.Addr(unsafe.Pointer(gHolders[3].V.(OneWord).P))
	facts["holders"] = len(gHolders)
	facts["holder_bytes"] = holderBytes
}

var (
	gIface interface{}
	gAny   any
	gErr   error
	gWord  any
)

const payloadSize = 2048

// words returns the two words of an interface variable.
func words(p unsafe.Pointer) (uint64, uint64) {
	w := (*[2]uintptr)(p)
	return uint64(w[0]), uint64(w[1])
}

func main() {
	path := dump.Path(os.Args[1:])
	pid := int64(os.Getpid())

	big := &Big{Name: "big", Payload: make([]byte, payloadSize)}
	for i := range big.N {
		big.N[i] = pid + int64(i)
	}
	gIface = big
	gAny = Small{X: pid, Y: pid + 1, Z: pid + 2}
	msg := strings.Repeat("e", 40)
	gErr = &MyErr{Code: int(pid), Msg: msg}
	word := &Small{X: pid + 3, Y: pid + 4, Z: pid + 5}
	gWord = OneWord{P: word}

	facts := dump.NewFacts()
	makeHolders(pid, facts)
	t, d := words(unsafe.Pointer(&gIface))
	facts["type_word_main.gIface"] = t
	facts["type_name_main.gIface"] = reflect.TypeOf(gIface).String()
	facts["ptr_main.gIface"] = d
	t, d = words(unsafe.Pointer(&gAny))
	facts["type_word_main.gAny"] = t
	facts["type_name_main.gAny"] = reflect.TypeOf(gAny).String()
	facts["ptr_main.gAny"] = d
	tab, d := words(unsafe.Pointer(&gErr))
	facts["itab_word_main.gErr"] = tab
	// An itab starts with the interface type and then the concrete type.
	itab := (*[2]unsafe.Pointer)(unsafe.Pointer(&gErr))[0]
	facts["itab_type_word_main.gErr"] = uint64((*[2]uintptr)(itab)[1])
	facts["type_name_main.gErr"] = reflect.TypeOf(gErr).String()
	facts["ptr_main.gErr"] = d
	// The runtime type word of *MyErr as seen through an empty interface.
	var e interface{} = gErr.(*MyErr)
	rt, _ := words(unsafe.Pointer(&e))
	facts["type_word_*main.MyErr"] = rt
	_, d = words(unsafe.Pointer(&gWord))
	boxed := d != dump.Addr(unsafe.Pointer(word))
	facts["ptr_main.gWord"] = d
	facts["ptr_main.gWord.P"] = dump.Addr(unsafe.Pointer(word))
	facts["boxed_main.gWord"] = boxed

	facts["addr_main.gIface"] = dump.Addr(unsafe.Pointer(&gIface))
	facts["addr_main.gAny"] = dump.Addr(unsafe.Pointer(&gAny))
	facts["addr_main.gErr"] = dump.Addr(unsafe.Pointer(&gErr))
	facts["sizeof_main.Big"] = int64(unsafe.Sizeof(Big{}))
	facts["sizeof_main.Small"] = int64(unsafe.Sizeof(Small{}))
	facts["sizeof_main.MyErr"] = int64(unsafe.Sizeof(MyErr{}))
	facts["offsetof_main.Big.Payload"] = int64(unsafe.Offsetof(Big{}.Payload))
	facts["offsetof_main.MyErr.Msg"] = int64(unsafe.Offsetof(MyErr{}.Msg))
	facts["payload_size"] = payloadSize

	facts["kept_objects_main.gIface"] = 2
	facts["kept_bytes_main.gIface"] = int64(unsafe.Sizeof(Big{})) + payloadSize
	facts["kept_objects_main.gAny"] = 1
	facts["kept_bytes_main.gAny"] = int64(unsafe.Sizeof(Small{}))
	facts["kept_objects_main.gErr"] = 2
	facts["kept_bytes_main.gErr"] = int64(unsafe.Sizeof(MyErr{})) + int64(len(msg))
	facts["kept_objects_main.gWord"] = 1 // the Small; the box, if any, is not counted
	facts["kept_bytes_main.gWord"] = int64(unsafe.Sizeof(Small{}))
	facts["kept_objects"] = 6
	facts["kept_bytes"] = int64(unsafe.Sizeof(Big{})) + payloadSize +
		2*int64(unsafe.Sizeof(Small{})) + int64(unsafe.Sizeof(MyErr{})) + int64(len(msg))

	dump.Write(path)
	runtime.KeepAlive(gIface)
	runtime.KeepAlive(gAny)
	runtime.KeepAlive(gErr)
	runtime.KeepAlive(gWord)
	runtime.KeepAlive(gHolders)
	facts.Print()
}
