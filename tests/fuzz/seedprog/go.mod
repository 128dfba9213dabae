module heapref/fuzzseed

go 1.19
