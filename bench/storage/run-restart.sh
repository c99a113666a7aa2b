#!/bin/sh
# Phase 4: insert 1M queued contacts (not timed), checkpoint/compact + sizes, then 3x open+read in a fresh process.
cd /work/dbbench
mkdir -p results
[ -n "$CONFIGS" ] || : > results/restart.jsonl
for c in ${CONFIGS:-libsql-full lmdb-async}; do
  d=/work/dbbench/data/restart-$c
  rm -rf $d
  node bench.mjs restart-prep $c $d >> results/restart.jsonl
  for rep in 1 2 3; do node bench.mjs restart-read $c $d >> results/restart.jsonl; done
  rm -rf $d
done
