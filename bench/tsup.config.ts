import { defineConfig } from 'tsup';

// `npm run bench` runs this bundle on plain Node: sendpool's sources and the peers compiled as a
// host's build would, not through a development loader (docs/benchmarks.md, "Method").
export default defineConfig({
  entry: { run: 'bench/run.ts', child: 'bench/child.ts', 'memory-main': 'bench/memory-main.ts' },
  outDir: 'bench/.build',
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  splitting: true,
  sourcemap: false,
  dts: false,
  clean: true,
  // Peers and other packages load as published, from node_modules.
  skipNodeModulesBundle: true,
});
