#!/bin/sh
# 3 repetitions of the write phases (1-3) for every configuration, interleaved.
cd /work/dbbench
mkdir -p results
: > results/write.jsonl
for rep in 1 2 3; do
  for c in libsql-full libsql-normal lmdb-async lmdb-puts lmdb-sync lmdb-commit; do
    node bench.mjs write $c >> results/write.jsonl || echo "FAILED $c" >&2
  done
done
