import { cpSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { defineConfig, type Options } from 'tsup';

type Plugin = NonNullable<Options['esbuildPlugins']>[number];

/**
 * mnemonist's only ESM way in is its root, which loads every structure it has (about 93 % of
 * `import('sendpool')`'s time went there) for the one heap sendpool uses. Its heap module is
 * CommonJS that ESM may not import by path, so the build bundles it instead: `import { Heap } from
 * 'mnemonist'` in the sources becomes its heap module and the few helpers that needs, and nothing
 * else of mnemonist is loaded (docs/decisions.md, "mnemonist: the heap is bundled").
 */
const mnemonistHeapOnly: Plugin = {
  name: 'mnemonist-heap-only',
  setup(build) {
    // Resolved as `require` would: the path is exported to CommonJS only.
    const heap = createRequire(import.meta.url).resolve('mnemonist/heap.js');
    build.onResolve({ filter: /^mnemonist$/ }, () => ({ path: 'mnemonist-heap', namespace: 'mnemonist-heap' }));
    build.onLoad({ filter: /.*/, namespace: 'mnemonist-heap' }, () => ({
      // The copy's notice travels with it (and mnemonist stays a dependency, so its LICENSE.txt too).
      contents: [
        '/*! mnemonist heap (with its helpers and obliterator/foreach): MIT License, Copyright (c) 2016-2021 Guillaume Plique (Yomguithereal) */',
        `export { default as Heap } from ${JSON.stringify(heap)};`,
      ].join('\n'),
      resolveDir: dirname(heap),
      loader: 'js',
    }));
  },
};
/** What both builds share to load only mnemonist's heap. */
const heapOnly = { noExternal: ['mnemonist'], esbuildPlugins: [mnemonistHeapOnly] } satisfies Options;

export default defineConfig([
  {
    // The engine, the HTTP contract, the webhook events, the reference server, the Redis capacity
    // and the WhatsApp channel are separate entries: a host that only dispatches loads none of the others. Shared
    // code lands in common chunks, so each class exists once however many entries a host imports.
    entry: {
      index: 'src/index.ts',
      contract: 'src/contract/index.ts',
      events: 'src/events/index.ts',
      server: 'src/server/index.ts',
      redis: 'src/redis/index.ts',
      whatsapp: 'src/server/channels/whatsapp/index.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    platform: 'node',
    splitting: true,
    treeshake: true,
    ...heapOnly,
    // The operator dashboard's page, script and style are files, not modules: they ship as they
    // are, beside the chunks that serve them (src/server/dashboard/assets.ts looks there).
    onSuccess: () => {
      cpSync('src/server/dashboard/assets', 'dist/dashboard', { recursive: true });
      return Promise.resolve();
    },
  },
  {
    // The `sendpool` command: ESM only, no declarations.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    splitting: false,
    banner: { js: '#!/usr/bin/env node' },
    ...heapOnly,
  },
]);
