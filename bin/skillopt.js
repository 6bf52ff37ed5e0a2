#!/usr/bin/env node
import path from 'node:path';
import v8 from 'node:v8';
import { entryOf } from './entry.js';

// The old generation may grow by 30% over what the last full GC kept, where V8 would otherwise
// let it grow up to fourfold: a run's garbage stays near its live heap, whatever the batch
// (bench/memory.ts), for a few more full GCs of a small heap.
v8.setFlagsFromString('--heap-growing-percent=30');

const entry = entryOf(path.resolve(import.meta.dirname, '..'));
if (!entry.compiled) (await import('tsx/esm/api')).register();
const { main } = await import(entry.url);
process.exitCode = await main(process.argv);
