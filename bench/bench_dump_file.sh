# Sourced by the benchmarks: builds build-bench (Release) and makes sure the generated
# dump exists. Sets $work, $dump and $size from $objects and $bytes.
work=bench/work
dump=$work/gen-$objects-$bytes.hdump

cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DHEAPREF_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" >/dev/null
if [ ! -s "$dump" ] || [ ! -x "$work/gen" ]; then
  mkdir -p "$work"
  (cd testprogs && go build -buildvcs=false -o "../$work/gen" ./gen)
  echo "generating $dump ($objects objects, $bytes bytes)..."
  "$work/gen" -objects "$objects" -bytes "$bytes" "$dump" > "$dump.facts.json"
fi
size=$(stat -c %s "$dump")
