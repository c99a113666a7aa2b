#!/bin/sh
# Phase 5: 10 SIGKILLs per configuration.
cd /work/dbbench
mkdir -p results
[ -n "$CONFIGS" ] || : > results/torn.jsonl
for c in ${CONFIGS:-libsql-full libsql-normal lmdb-async lmdb-sync lmdb-commit}; do
  node torn.mjs run $c 10 >> results/torn.jsonl
done
