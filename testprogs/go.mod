module heapref/testprogs

go 1.19
