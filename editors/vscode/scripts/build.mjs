// Bundles the extension (Node, CommonJS, `vscode` external) and the
// transcript webview script (browser IIFE, markdown-it inside) with esbuild.
import { build } from 'esbuild';

const common = { bundle: true, minify: true, sourcemap: 'linked', logLevel: 'warning', legalComments: 'none' };

await Promise.all([
  build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  }),
  build({
    ...common,
    entryPoints: ['src/webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  }),
]);
