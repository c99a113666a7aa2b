import { defineConfig } from 'tsup';

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
  },
]);
