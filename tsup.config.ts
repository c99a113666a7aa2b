import { defineConfig } from 'tsup';

export default defineConfig({
  // The engine, the HTTP contract and the webhook events are separate entries: a host that only
  // dispatches does not load the contract's schemas. Shared code lands in common chunks, so each
  // class exists once however many entries a host imports.
  entry: { index: 'src/index.ts', contract: 'src/contract/index.ts', events: 'src/events/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  splitting: true,
  treeshake: true,
});
