// go_exit.go - a Go program (wasp e2e test: go_exit): four goroutines run
// a silent-store loop, then main returns. The Go runtime ends the process
// with its own exit_group system call, so no atexit handler of libwasp.so
// ever runs: only the guardian can write the profiles. cgo (the C import)
// makes the binary dynamically linked, so LD_PRELOAD reaches it.
package main

/*
static int linked_with_libc(void) { return 1; }
*/
import "C"

import (
	"fmt"
	"sync"
)

//go:noinline
func kernel(a []int64, r int64) {
	for i := range a {
		if i&64 != 0 {
			a[i] = r
		} else {
			a[i] = 7
		}
	}
}

func main() {
	_ = C.linked_with_libc()
	var wg sync.WaitGroup
	sums := make([]int64, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			a := make([]int64, 2048)
			for r := int64(0); r < 100000; r++ {
				kernel(a, r)
			}
			sums[g] = a[100]
		}(g)
	}
	wg.Wait()
	fmt.Println("go_exit:", sums[0]+sums[1]+sums[2]+sums[3])
}
