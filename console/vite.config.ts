/**
 * Builds the operations console into the package's dist/console/ (DESIGN §7, §10): relative asset URLs so
 * the page works wherever the server mounts it (/console/), everything bundled (no CDN, no external font).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  // JSX through Vite's own transformer, with Preact's automatic runtime: no framework plugin needed.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Every asset is a file of its own: the server's Content-Security-Policy allows no inline data.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
